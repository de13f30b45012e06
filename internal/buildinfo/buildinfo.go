// Package buildinfo says which build of the service is running: for
// `inventoryd --version`, the inventory_build_info series, and the start's
// log line, so that an operator can tell which code answered.
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// version and commit are stamped by release builds (the Dockerfile's):
// -ldflags "-X github.com/propertyrecords/inventory/internal/buildinfo.version=v1.2.3"
// and the same for commit, since an image is built from a copy without its
// .git (and GOFLAGS=-buildvcs=false turns Go's own stamp off).
var version, commit string

// Info is what a build says of itself.
type Info struct {
	// Version is the stamped release, else the module's version ("(devel)"
	// when built from a checkout).
	Version string `json:"version"`
	// Commit is the VCS revision Go stamped into the binary, with "-dirty"
	// when the tree had changes; "unknown" when none was stamped (go run,
	// go test).
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
}

// Read returns this build's Info.
func Read() Info {
	info := Info{Version: version, Commit: "unknown", GoVersion: runtime.Version()}
	build, ok := debug.ReadBuildInfo()
	if !ok {
		build = &debug.BuildInfo{}
	}
	if info.Version == "" {
		info.Version = build.Main.Version
	}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	dirty := ""
	for _, s := range build.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if info.Commit != "unknown" {
		info.Commit += dirty
	}
	if commit != "" {
		info.Commit = commit
	}
	return info
}
