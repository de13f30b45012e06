package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/propertyrecords/inventory/rest"
)

// Config is the whole configuration, from environment variables with flags
// of the same meaning taking precedence.
type Config struct {
	Addr        string
	DatabaseURL string
	DataDir     string
	LogLevel    slog.Level
	RESTBaseURL string
}

// setting is one configuration entry: its flag, its variable and its use.
type setting struct {
	flag, env, def, usage string
	target                *string
}

// parseConfig reads the environment (through getenv) and then args.
func parseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	var cfg Config
	var level string
	settings := []setting{
		{"addr", "INVENTORY_ADDR", "127.0.0.1:8080", "address to listen on", &cfg.Addr},
		{"database-url", "INVENTORY_DATABASE_URL", "", "SQLite file path, or postgres://... (default: <data-dir>/inventory.db)", &cfg.DatabaseURL},
		{"data-dir", "INVENTORY_DATA_DIR", "data", "folder for the SQLite database and stored files", &cfg.DataDir},
		{"log-level", "INVENTORY_LOG_LEVEL", "info", "debug, info, warn or error", &level},
		{"rest-base-url", "INVENTORY_REST_BASE_URL", rest.DefaultBaseURL, "path prefix of the REST group B endpoints ({base_url})", &cfg.RESTBaseURL},
	}
	fs := flag.NewFlagSet("inventoryd", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		fmt.Fprintf(usage, "inventoryd serves inventory and property records over GraphQL.\n\nUsage: inventoryd [flags]\n\n")
		fmt.Fprintf(usage, "  %-16s %-26s %-22s %s\n", "flag", "environment", "default", "meaning")
		for _, s := range settings {
			fmt.Fprintf(usage, "  --%-14s %-26s %-22s %s\n", s.flag, s.env, s.def, s.usage)
		}
	}
	for _, s := range settings {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		fs.StringVar(s.target, s.flag, def, s.usage)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return Config{}, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = filepath.Join(cfg.DataDir, "inventory.db")
	}
	return cfg, nil
}

// LogValue logs the configuration with the database password masked.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("database_url", maskPassword(c.DatabaseURL)),
		slog.String("data_dir", c.DataDir),
		slog.String("log_level", c.LogLevel.String()),
		slog.String("rest_base_url", c.RESTBaseURL),
	)
}

func maskPassword(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
