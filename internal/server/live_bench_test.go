package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/live"
	"github.com/propertyrecords/inventory/internal/server"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// The live benchmarks keep the server in the benchmark's process and the
// subscribers in a child process (this test binary again, running
// TestLiveSubscriberProcess), so that the process's memory is the server's.
// Run each once: go test -run '^$' -bench Live -benchtime 1x ./internal/server/

const (
	envSubscriberURL  = "LIVE_BENCH_URL"
	envSubscriptions  = "LIVE_BENCH_SUBSCRIPTIONS"
	envPerConnection  = "LIVE_BENCH_PER_CONNECTION"
	envSubscriptionQL = "LIVE_BENCH_QUERY"
)

// BenchmarkLiveIdleSubscriptions: 10,000 subscriptions that receive
// nothing, 20 a connection (the default bound), and the server's resident
// memory each adds.
func BenchmarkLiveIdleSubscriptions(b *testing.B) {
	const subscriptions, perConnection = 10_000, 20
	one := newBenchInstance(b)
	before := residentBytes(b)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	child := startSubscribers(b, one.srv.URL, subscriptions, perConnection, `subscription { inventoryEvents(propertyId: "`+aPropertyOf(b, one.st, datagen.DemoCompanies[0])+`") { cursor kind } }`)
	waitForSubscribers(b, one.hub, subscriptions)
	after := residentBytes(b)
	runtime.ReadMemStats(&m1)
	goroutines := runtime.NumGoroutine() - g0
	if path := os.Getenv("LIVE_BENCH_HEAP_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	for b.Loop() {
		// The measure is the memory held, not a time.
	}
	b.ReportMetric(float64(goroutines)/subscriptions, "goroutines/subscription")
	b.ReportMetric(float64(m1.StackInuse-m0.StackInuse)/subscriptions, "stack-B/subscription")
	b.ReportMetric(float64(m1.HeapInuse-m0.HeapInuse)/subscriptions, "heap-B/subscription")
	b.ReportMetric(float64(after-before)/subscriptions, "RSS-B/subscription")
	b.ReportMetric(float64(after-before)/(1<<20), "RSS-MiB/10k")
	child.stop()
}

// BenchmarkLiveFanOut: 1,000 subscribers of one property, and the time from
// a write's event to its delivery at each (p50, p99), over 20 writes.
func BenchmarkLiveFanOut(b *testing.B) {
	for _, sel := range []struct{ name, query string }{
		{"event_only", `cursor kind inventoryId at`},
		{"with_inventory", `cursor kind inventoryId at inventory { id version environments { name } }`},
	} {
		b.Run(sel.name, func(b *testing.B) {
			const subscribers, perConnection, writes = 1000, 20, 20
			one := newBenchInstance(b)
			prop := aPropertyOf(b, one.st, datagen.DemoCompanies[0])
			child := startSubscribers(b, one.srv.URL, subscribers, perConnection,
				`subscription { inventoryEvents(propertyId: "`+prop+`") { `+sel.query+` } }`)
			waitForSubscribers(b, one.hub, subscribers)
			for b.Loop() {
				for range writes {
					createOn(b, one.srv, prop)
					time.Sleep(100 * time.Millisecond)
				}
			}
			lat := child.latencies(b, subscribers*writes*b.N)
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
			child.stop()
		})
	}
}

func newBenchInstance(b *testing.B) *instance {
	b.Helper()
	return newInstanceWith(b, testdb.DemoRecords.URL(b), server.Options{}, live.Options{PerCompany: 20_000, Buffer: 64})
}

// residentBytes is the process's resident memory once the garbage is
// collected and returned.
func residentBytes(b *testing.B) int64 {
	b.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: resident memory is not read here")
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

func waitForSubscribers(b *testing.B, hub *live.Hub, n int) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for hub.Stats().Subscribers < n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d subscriptions after 2 minutes", hub.Stats().Subscribers, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type subscribers struct {
	cmd *exec.Cmd
	// latency has each delivery's latency as the child prints it, read as
	// it comes (a pipe not read would hold the child up, and the latencies
	// with it).
	latency chan time.Duration
	once    sync.Once
}

func startSubscribers(b *testing.B, url string, n, perConnection int, query string) *subscribers {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveSubscriberProcess$", "-test.v")
	cmd.Env = append(os.Environ(), envSubscriberURL+"="+url, envSubscriptions+"="+strconv.Itoa(n),
		envPerConnection+"="+strconv.Itoa(perConnection), envSubscriptionQL+"="+query)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &subscribers{cmd: cmd, latency: make(chan time.Duration, 1<<20)}
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), "latency "); ok {
				d, _ := time.ParseDuration(rest)
				s.latency <- d
			}
		}
	}()
	b.Cleanup(s.stop)
	return s
}

// latencies waits for n delivery latencies.
func (s *subscribers) latencies(b *testing.B, n int) []time.Duration {
	b.Helper()
	out := make([]time.Duration, 0, n)
	timeout := time.After(time.Minute)
	for len(out) < n {
		select {
		case d := <-s.latency:
			out = append(out, d)
		case <-timeout:
			b.Fatalf("%d of %d deliveries after a minute", len(out), n)
		}
	}
	return out
}

func (s *subscribers) stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}

// TestLiveSubscriberProcess is the benchmarks' child: it opens the
// connections and subscriptions asked for in its environment, and prints
// each event's delivery latency (now minus the event's at). Without that
// environment it does nothing.
func TestLiveSubscriberProcess(t *testing.T) {
	url := os.Getenv(envSubscriberURL)
	if url == "" {
		t.Skip("run by the live benchmarks only")
	}
	n, _ := strconv.Atoi(os.Getenv(envSubscriptions))
	per, _ := strconv.Atoi(os.Getenv(envPerConnection))
	query := os.Getenv(envSubscriptionQL)
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	print := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = out.WriteString(s + "\n")
		_ = out.Flush()
	}
	var wg sync.WaitGroup
	for c := 0; c*per < n; c++ {
		conn, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(url, "http")+"/graphql",
			&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		init, _ := json.Marshal(map[string]any{"X-Company-Id": company})
		_ = wsjson.Write(context.Background(), conn, wsMessage{Type: "connection_init", Payload: init})
		payload, _ := json.Marshal(map[string]any{"query": query})
		for i := range min(per, n-c*per) {
			_ = wsjson.Write(context.Background(), conn, wsMessage{ID: fmt.Sprint(i), Type: "subscribe", Payload: payload})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var m wsMessage
				if err := wsjson.Read(context.Background(), conn, &m); err != nil {
					return
				}
				switch m.Type {
				case "ping":
					_ = wsjson.Write(context.Background(), conn, wsMessage{Type: "pong"})
				case "next":
					var ev struct {
						Data struct{ InventoryEvents struct{ At time.Time } }
					}
					if json.Unmarshal(m.Payload, &ev) == nil && !ev.Data.InventoryEvents.At.IsZero() {
						print("latency " + time.Since(ev.Data.InventoryEvents.At).String())
					}
				}
			}
		}()
	}
	wg.Wait()
}
