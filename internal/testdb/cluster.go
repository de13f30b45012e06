package testdb

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BinDir holds the PostgreSQL 15 server binaries StartCluster runs.
const BinDir = "/usr/lib/postgresql/15/bin"

// serverUser runs the binaries when the tests run as root: initdb and
// postgres refuse to run as root.
const serverUser = "postgres"

// Cluster is a PostgreSQL server of the test's own, which it may stop and
// start again (to see what the service does while its database is down) and
// which no other test shares. It listens on 127.0.0.1 only, with trust
// authentication for the postgres role (replication connections included).
type Cluster struct {
	tb      testing.TB
	root    string // holds data, the socket folder and the log; removed at cleanup
	dataDir string
	sockDir string
	logFile string
	port    int
	uid     int // the server's owner when running as root, else -1
	gid     int

	mu      sync.Mutex
	running bool

	// InitTime is how long initdb took, StartTime how long the first start
	// took (pg_ctl start -w: until the server accepts connections).
	InitTime, StartTime time.Duration
}

// ClusterAvailable reports whether StartCluster can run here: the binaries
// exist, and when running as root, so does the user to run them as.
func ClusterAvailable() error {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(BinDir, name)); err != nil {
			return fmt.Errorf("PostgreSQL 15 server binaries: %w", err)
		}
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup(serverUser); err != nil {
			return fmt.Errorf("running as root, the server needs a user to run as: %w", err)
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			return fmt.Errorf("running as root, the server runs through runuser: %w", err)
		}
	}
	return nil
}

// StartCluster creates (initdb) and starts a PostgreSQL 15 cluster for the
// test, and stops it (-m immediate) and removes its files when the test
// ends. Without the binaries the test is skipped, except under CI (CI=true),
// where it fails: CI must not pass by skipping.
//
// It is tuned to start fast and for tests only: fsync is off, so a crash of
// the machine (not of the server: see Crash) can lose committed data.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c := newCluster(tb)
	began := time.Now()
	// --no-sync: the files need not reach the disk, they die with the test.
	if out, err := c.Exec("initdb", "-D", c.dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale",
		"--no-sync", "--no-instructions"); err != nil {
		tb.Fatalf("initdb: %v\n%s", err, out)
	}
	c.InitTime = time.Since(began)
	// Settings for a fast, small, private server: the port is given at each
	// start (-p), the socket lives in the cluster's folder rather than in
	// /var/run/postgresql, which another server owns. fsync is off, but
	// synchronous_commit is not: a commit is written to the kernel before it
	// returns, so that what a test saw committed survives Crash.
	conf := fmt.Sprintf(`
# testdb.StartCluster
listen_addresses = '127.0.0.1'
unix_socket_directories = '%s'
fsync = off
shared_buffers = 16MB
max_connections = 100
logging_collector = off
`, c.sockDir)
	f, err := os.OpenFile(filepath.Join(c.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		tb.Fatalf("configuring the cluster: %v", err)
	}

	began = time.Now()
	c.startOnFreePort()
	c.StartTime = time.Since(began)
	tb.Logf("PostgreSQL cluster on port %d in %s: initdb %s, start %s",
		c.port, c.dataDir, c.InitTime.Round(time.Millisecond), c.StartTime.Round(time.Millisecond))
	return c
}

// newCluster makes the folders of a cluster the server's user can reach,
// removed when the test ends; without the binaries the test is skipped, or
// fails under CI.
func newCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if err := ClusterAvailable(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("cannot start a PostgreSQL cluster under CI: %v", err)
		}
		tb.Skipf("cannot start a PostgreSQL cluster: %v", err)
	}
	// As URL does: tests that open a store on the cluster write audit lines.
	quietAudit.Do(func() { slog.SetDefault(slog.New(slog.DiscardHandler)) })
	c := &Cluster{tb: tb, uid: -1, gid: -1}
	// Not tb.TempDir: its parent folder is private to root (0700), and the
	// server's user must reach its data directory.
	root, err := os.MkdirTemp("", "pgcluster-")
	if err != nil {
		tb.Fatal(err)
	}
	c.root, c.dataDir, c.sockDir, c.logFile = root, filepath.Join(root, "data"), filepath.Join(root, "sock"), filepath.Join(root, "postgres.log")
	tb.Cleanup(c.cleanup)
	if err := os.Mkdir(c.sockDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(serverUser)
		if err != nil {
			tb.Fatal(err)
		}
		c.uid, _ = strconv.Atoi(u.Uid)
		c.gid, _ = strconv.Atoi(u.Gid)
		for _, dir := range []string{root, c.sockDir} {
			if err := os.Chown(dir, c.uid, c.gid); err != nil {
				tb.Fatalf("giving %s to %s: %v", dir, serverUser, err)
			}
		}
	}

	return c
}

// startOnFreePort starts the server on a free port.
func (c *Cluster) startOnFreePort() {
	c.tb.Helper()
	var err error
	// A port found free may be taken before the server binds it (by another
	// package's test starting a cluster at the same moment): try another.
	for attempt := 1; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			c.tb.Fatal(err)
		}
		err = c.start()
		if err == nil {
			break
		}
		if attempt == 3 || !strings.Contains(c.logTail(), "already in use") {
			c.tb.Fatalf("starting the cluster: %v", err)
		}
	}
}

// StartReplica makes a streaming standby of primary (pg_basebackup -R, the
// WAL streamed) and starts it on a port of its own; it is stopped and
// removed when the test ends.
func StartReplica(tb testing.TB, primary *Cluster) *Cluster {
	tb.Helper()
	c := newCluster(tb)
	if out, err := c.Exec("pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(primary.port), "-U", "postgres",
		"-D", c.dataDir, "-R", "-X", "stream", "--no-sync"); err != nil {
		tb.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	// The copy carries the primary's settings: its socket folder is the
	// primary's, which this server must not take.
	f, err := os.OpenFile(filepath.Join(c.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = fmt.Fprintf(f, "\n# testdb.StartReplica\nunix_socket_directories = '%s'\n", c.sockDir)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		tb.Fatalf("configuring the standby: %v", err)
	}
	c.startOnFreePort()
	tb.Logf("PostgreSQL standby of port %d on port %d", primary.port, c.port)
	return c
}

// URL is the address of the cluster's postgres database, as the postgres
// superuser.
func (c *Cluster) URL() string { return c.DatabaseURL("postgres") }

// DatabaseURL is the address of the named database of the cluster.
func (c *Cluster) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, name)
}

// CreateDatabase creates a database and returns its address.
func (c *Cluster) CreateDatabase(name string) string {
	c.tb.Helper()
	db, err := sql.Open("pgx", c.URL())
	if err != nil {
		c.tb.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE "` + strings.ReplaceAll(name, `"`, `""`) + `"`); err != nil {
		c.tb.Fatalf("creating database %s: %v", name, err)
	}
	return c.DatabaseURL(name)
}

// Port is the TCP port the cluster listens on, on 127.0.0.1; it stays the
// same across Stop and Start.
func (c *Cluster) Port() int { return c.port }

// DataDir is the cluster's data directory (owned by the postgres user when
// the tests run as root).
func (c *Cluster) DataDir() string { return c.dataDir }

// SocketDir is where the server's Unix socket is.
func (c *Cluster) SocketDir() string { return c.sockDir }

// LogFile is the server's log, which every start appends to.
func (c *Cluster) LogFile() string { return c.logFile }

// Running reports whether the cluster was last started rather than stopped.
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// Stop shuts the server down as an operator would (-m fast: sessions are
// ended, their transactions rolled back) and returns once it is down.
// Stopping a stopped cluster does nothing.
func (c *Cluster) Stop() {
	c.tb.Helper()
	if err := c.stop("fast"); err != nil {
		c.tb.Fatalf("stopping the cluster: %v", err)
	}
}

// Crash stops the server as a crash would (-m immediate: no shutdown
// checkpoint; the next start recovers from the WAL).
func (c *Cluster) Crash() {
	c.tb.Helper()
	if err := c.stop("immediate"); err != nil {
		c.tb.Fatalf("stopping the cluster: %v", err)
	}
}

// Start starts the stopped server again, on the same port, and returns once
// it accepts connections. Starting a running cluster does nothing.
func (c *Cluster) Start() {
	c.tb.Helper()
	if err := c.start(); err != nil {
		c.tb.Fatalf("starting the cluster: %v", err)
	}
}

// Exec runs one of the PostgreSQL binaries (BinDir) with args, as the
// server's user, and returns its combined output: for pg_basebackup,
// pg_controldata and the like.
func (c *Cluster) Exec(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(BinDir, name)
	var cmd *exec.Cmd
	if c.uid >= 0 {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", serverUser, "--", bin}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	// The test's working folder may be closed to the server's user; and PG*
	// variables meant for the test's clients must not steer the server.
	cmd.Dir = c.root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// pg_ctl start leaves the server running with its output on the log
	// file; it must not hold this pipe, or CombinedOutput would wait for it.
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return bytes.TrimSpace(out), err
}

func (c *Cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return nil
	}
	out, err := c.Exec("pg_ctl", "start", "-w", "-t", "60", "-D", c.dataDir, "-l", c.logFile, "-o", "-p "+strconv.Itoa(c.port))
	if err != nil {
		// A server still starting when pg_ctl gave up would outlive the
		// test, its files removed from under it.
		c.Exec("pg_ctl", "stop", "-w", "-m", "immediate", "-D", c.dataDir)
		return fmt.Errorf("pg_ctl start: %v: %s\nlog: %s", err, out, c.logTail())
	}
	c.running = true
	return nil
}

func (c *Cluster) stop(mode string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	out, err := c.Exec("pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", c.dataDir)
	if err != nil {
		// A server that died on its own is stopped too.
		if st, _ := c.Exec("pg_ctl", "status", "-D", c.dataDir); bytes.Contains(st, []byte("no server running")) {
			c.running = false
			return nil
		}
		return fmt.Errorf("pg_ctl stop -m %s: %v: %s\nlog: %s", mode, err, out, c.logTail())
	}
	c.running = false
	return nil
}

func (c *Cluster) cleanup() {
	if err := c.stop("immediate"); err != nil {
		c.tb.Errorf("stopping the cluster at the end of the test: %v", err)
		return // its files stay, for a look at what went wrong
	}
	if err := os.RemoveAll(c.root); err != nil {
		c.tb.Errorf("removing the cluster's files: %v", err)
	}
}

// logTail is the end of the server's log, for failure messages.
func (c *Cluster) logTail() string {
	data, _ := os.ReadFile(c.logFile)
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return string(data)
}

// freePort finds a port free on 127.0.0.1 below the range the system picks
// outgoing connections' local ports from: a port from that range, free now,
// could be taken by any client connection while the cluster is stopped, and
// Start would then fail to bind it.
func freePort() (int, error) {
	low := 32768
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	const from = 15000
	if low > from+1000 {
		for range 100 {
			port := from + rand.IntN(low-from)
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err == nil {
				l.Close()
				return port, nil
			}
		}
	}
	// No room below the ephemeral range: take one the system gives.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
