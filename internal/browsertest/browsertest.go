// Package browsertest runs pages in a real Chromium in tests, driven through
// the DevTools protocol (chromedp): the signing page on a phone, the IDE on
// a desktop.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium is the browser pages are tested in: Debian's, which .ci/run
// installs as it does poppler-utils. Without it the test is skipped on a
// developer's machine and fails in CI.
func Chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("Chromium is not installed: CI must test the pages in a browser (.ci/run installs Debian's chromium)")
	}
	t.Skip("Chromium is not installed: the page is not tested in a browser")
	return ""
}

// Browser is a Chromium started for one test, with what its pages asked
// for and what its console complained of.
type Browser struct {
	mu                    sync.Mutex
	requested, complaints []string
}

// Start starts Chromium (headless, its own profile) for the test and
// returns the context to drive it with, cancelled after timeout or at the
// test's end.
func Start(t *testing.T, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) (context.Context, *Browser) {
	t.Helper()
	path := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(Profile(t)))
	opts = append(opts, extra...)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	ctx, cancelTime := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })

	b := &Browser{}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requested = append(b.requested, ev.Request.URL)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError || ev.Entry.Level == log.LevelWarning {
				b.complaints = append(b.complaints, ev.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			b.complaints = append(b.complaints, ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				b.complaints = append(b.complaints, "console.error")
			}
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx, b
}

// Requested is every URL the browser's pages asked for so far.
func (b *Browser) Requested() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requested...)
}

// Complaints is every error and warning of the console so far, and every
// exception thrown.
func (b *Browser) Complaints() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.complaints...)
}

// Profile is a folder for Chromium's profile, removed after the test. Not
// t.TempDir: Chromium's helper processes may still write to it for a
// moment after the browser is stopped, and t.TempDir fails the test when
// its folder cannot be removed at once.
func Profile(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Logf("Chromium's profile %s is left behind: it could not be removed", dir)
	})
	return dir
}
