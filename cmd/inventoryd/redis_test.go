package main

import (
	"io"
	"strings"
	"testing"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// TestTheRedisURLReachesTheLimits: INVENTORY_REDIS_URL is read as the other
// settings are and handed to the limits: with a Redis that answers,
// /metrics says they are kept there; with one that does not, the server
// starts all the same and /readyz says the limits are per instance.
func TestTheRedisURLReachesTheLimits(t *testing.T) {
	cfg, err := parseConfig(nil, func(name string) string {
		if name == "INVENTORY_REDIS_URL" {
			return "redis://:secret@redis.internal:6379/2"
		}
		return ""
	}, io.Discard)
	if err != nil || cfg.RedisURL != "redis://:secret@redis.internal:6379/2" {
		t.Fatalf("INVENTORY_REDIS_URL read as %q (%v)", cfg.RedisURL, err)
	}
	for _, wrong := range []string{"127.0.0.1:6379", "http://redis:6379", "redis://"} {
		if _, err := parseConfig([]string{"--redis-url", wrong}, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("--redis-url %s: accepted, want an error naming the form", wrong)
		}
	}
	if logged := cfg.LogValue().String(); strings.Contains(logged, "secret") || !strings.Contains(logged, "redis.internal") {
		t.Errorf("the configuration as logged: %s; want the Redis without its password", logged)
	}

	rds := testdb.StartRedis(t)
	up := launchWith(t, func(c *Config) { c.RedisURL = rds.URL() })
	closeAfter(t, up)
	if _, metrics := get(t, up, "/metrics"); !strings.Contains(metrics, "\ninventory_shared_limits_redis 1\n") {
		t.Errorf("/metrics with Redis answering: want inventory_shared_limits_redis 1:\n%.2000s", metrics)
	}

	gone := testdb.StartRedis(t)
	gone.Stop()
	down := launchWith(t, func(c *Config) { c.RedisURL = gone.URL() })
	closeAfter(t, down)
	if res, body := get(t, down, "/readyz"); res.StatusCode != 200 || !strings.Contains(body, "limits per instance") {
		t.Errorf("/readyz with Redis unreachable: %d %s; want 200, saying the limits are per instance", res.StatusCode, body)
	}
}
