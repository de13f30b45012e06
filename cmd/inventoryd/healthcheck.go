package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

var healthcheckCommand = command{name: "healthcheck",
	summary: "exits 0 when the server on INVENTORY_ADDR is ready (/readyz), 1 otherwise: the container's health check"}

// healthcheckCmd asks the local server whether it is ready. The container
// image has no shell and no curl, so its HEALTHCHECK runs the binary itself.
func healthcheckCmd(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	cfg, rest, err := parseCommandConfig(healthcheckCommand, args, getenv, std.errOut)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("healthcheck takes no arguments")
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return fmt.Errorf("INVENTORY_ADDR %q: %w", cfg.Addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every address: this one too
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/readyz", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: /readyz answered %d", res.StatusCode)
	}
	fmt.Fprintln(std.out, "ready")
	return nil
}
