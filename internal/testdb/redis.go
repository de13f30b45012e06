package testdb

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// RedisBin is Debian's Redis (package redis-server; .ci/run installs it).
const RedisBin = "/usr/bin/redis-server"

// Redis is a redis-server of a test's own, on a free port, keeping nothing
// on disk; it is stopped when the test ends.
type Redis struct {
	tb   testing.TB
	dir  string
	port int

	mu  sync.Mutex
	cmd *exec.Cmd
	log *bytes.Buffer
}

// StartRedis starts a redis-server for tb. Without Redis the test is
// skipped, except under CI.
func StartRedis(tb testing.TB) *Redis {
	tb.Helper()
	if _, err := os.Stat(RedisBin); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("redis-server is not installed under CI: %v", err)
		}
		tb.Skipf("redis-server is not installed (Debian's redis-server): %v", err)
	}
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	r := &Redis{tb: tb, dir: tb.TempDir(), port: port}
	r.Start()
	tb.Cleanup(r.Stop)
	return r
}

// URL is the server's redis:// URL.
func (r *Redis) URL() string { return fmt.Sprintf("redis://%s/0", r.addr()) }

func (r *Redis) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// Start starts the server again after Stop, on the same port and empty:
// what a Redis restarted without persistence is.
func (r *Redis) Start() {
	r.tb.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return
	}
	r.log = &bytes.Buffer{}
	cmd := exec.Command(RedisBin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no")
	cmd.Stdout, cmd.Stderr = r.log, r.log
	if err := cmd.Start(); err != nil {
		r.tb.Fatalf("starting redis-server: %v", err)
	}
	r.cmd = cmd
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if conn, err := net.Dial("tcp", r.addr()); err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			r.cmd = nil
			r.tb.Fatalf("redis-server did not listen on %s: %s", r.addr(), r.log)
		}
	}
}

// Stop stops the server (SIGKILL: an outage, not a shutdown), until Start.
func (r *Redis) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}
