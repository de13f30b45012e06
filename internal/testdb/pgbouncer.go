package testdb

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// PgBouncerBin is Debian's PgBouncer (package pgbouncer; .ci/run installs it).
const PgBouncerBin = "/usr/sbin/pgbouncer"

// StartPgBouncer starts PgBouncer in transaction pooling mode in front of
// c's postgres database and returns its address; it is stopped when the test
// ends. Without PgBouncer the test is skipped, except under CI.
func StartPgBouncer(tb testing.TB, c *Cluster) string {
	tb.Helper()
	if _, err := os.Stat(PgBouncerBin); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("PgBouncer is not installed under CI: %v", err)
		}
		tb.Skipf("PgBouncer is not installed (Debian's pgbouncer): %v", err)
	}
	dir := filepath.Join(c.root, "pgbouncer")
	if err := os.Mkdir(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	ini := fmt.Sprintf(`[databases]
postgres = host=127.0.0.1 port=%d dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s/users.txt
pool_mode = transaction
default_pool_size = 4
logfile = %s/pgbouncer.log
pidfile = %s/pgbouncer.pid
ignore_startup_parameters = extra_float_digits
`, c.port, port, dir, dir, dir)
	for name, text := range map[string]string{"pgbouncer.ini": ini, "users.txt": `"postgres" ""` + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	if c.uid >= 0 { // PgBouncer refuses to run as root
		for _, name := range []string{"", "pgbouncer.ini", "users.txt"} {
			if err := os.Chown(filepath.Join(dir, name), c.uid, c.gid); err != nil {
				tb.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := []string{"-d", filepath.Join(dir, "pgbouncer.ini")}
	cmd := exec.CommandContext(ctx, PgBouncerBin, args...)
	if c.uid >= 0 {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", serverUser, "--", PgBouncerBin}, args...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("starting PgBouncer: %v: %s", err, out)
	}
	tb.Cleanup(func() {
		if pid, err := os.ReadFile(filepath.Join(dir, "pgbouncer.pid")); err == nil {
			if n, err := strconv.Atoi(string(trimNewline(pid))); err == nil {
				if p, err := os.FindProcess(n); err == nil {
					_ = p.Kill()
				}
			}
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			tb.Fatalf("PgBouncer did not listen on %s: %s", addr, log)
		}
	}
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", addr)
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
