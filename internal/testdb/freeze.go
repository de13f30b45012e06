package testdb

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Freeze stops every process of the running server (SIGSTOP), as a hung
// host or a cut network would: connections stay open and nothing answers.
// thaw resumes them; the test's end thaws them too, before the cluster is
// stopped, which a frozen server would never do.
func (c *Cluster) Freeze() (thaw func()) {
	c.tb.Helper()
	pids := c.processes()
	if len(pids) == 0 {
		c.tb.Fatal("freezing the cluster: no server process found")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			c.tb.Fatalf("freezing process %d: %v", pid, err)
		}
	}
	thawed := false
	thaw = func() {
		if thawed {
			return
		}
		thawed = true
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	c.tb.Cleanup(thaw)
	return thaw
}

// Signal sends sig to one of the server's processes: the one whose
// command line (as ps shows it, "postgres: walreceiver", say) contains
// role. It fails the test when none does.
func (c *Cluster) Signal(role string, sig syscall.Signal) {
	c.tb.Helper()
	for _, pid := range c.processes() {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if strings.Contains(string(cmdline), role) {
			if err := syscall.Kill(pid, sig); err != nil {
				c.tb.Fatalf("signalling %s (%d): %v", role, pid, err)
			}
			return
		}
	}
	c.tb.Fatalf("no server process is %q", role)
}

// processes are the postmaster (its pid is postmaster.pid's first line)
// and its children.
func (c *Cluster) processes() []int {
	data, err := os.ReadFile(filepath.Join(c.dataDir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(string(data), "\n")
	postmaster, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return nil
	}
	pids := []int{postmaster}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after it.
		_, rest, found := strings.Cut(string(stat), ") ")
		if f := strings.Fields(rest); found && len(f) > 1 && f[1] == strconv.Itoa(postmaster) {
			pids = append(pids, pid)
		}
	}
	return pids
}
