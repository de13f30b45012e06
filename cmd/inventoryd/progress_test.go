package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/metrics"
)

// jobGauges scrapes url and returns the value of each inventory_job_*
// series, by family name.
func jobGauges(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		if strings.HasPrefix(name, "inventory_job_") && len(f.Metric) == 1 {
			m := f.Metric[0]
			if m.Gauge != nil {
				out[name] = m.Gauge.GetValue()
			} else if m.Counter != nil {
				out[name] = m.Counter.GetValue()
			}
		}
	}
	return out
}

// An import with --metrics-addr serves its progress while it runs: the bytes
// read so far and the records refused, scraped in the middle of the run.
func TestImportServesItsProgressOnMetrics(t *testing.T) {
	lines := importLines(3)
	pr, pw := io.Pipe()
	var out bytes.Buffer
	var errOut apitest.LogBuffer
	finished := make(chan error, 1)
	go func() {
		finished <- run(context.Background(), []string{"import", "--data-dir", t.TempDir(), "--metrics-addr", "127.0.0.1:0", "-"},
			func(string) string { return "" }, stdio{pr, &out, &errOut})
		pr.Close()
	}()
	first := strings.Join(lines, "\n") + "\n" + `{"not":"an inventory"}` + "\n"
	go io.WriteString(pw, first)

	var metricsURL string
	urlPattern := regexp.MustCompile(`"url":"(http://[^"]+/metrics)"`)
	var gauges map[string]float64
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if metricsURL == "" {
			if m := urlPattern.FindStringSubmatch(errOut.String()); m != nil {
				metricsURL = m[1]
			}
		}
		if metricsURL != "" {
			gauges = jobGauges(t, metricsURL)
			if gauges["inventory_job_done"] == float64(len(first)) && gauges["inventory_job_rejected_records_total"] == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the import's progress never showed the %d bytes sent and one refusal: %v; log: %s", len(first), gauges, errOut.String())
		}
	}
	if _, known := gauges["inventory_job_size"]; known {
		t.Error("an import from standard input has no known size, but inventory_job_size was served")
	}
	pw.Close()
	if err := <-finished; err == nil || !strings.Contains(err.Error(), "1 record(s) rejected") {
		t.Errorf("the import ended with %v, want one rejected record", err)
	}
	if !strings.Contains(out.String(), "3 created") {
		t.Errorf("summary: %s", out.String())
	}
}

// Where standard error is a log, not a terminal, progress is a log line
// every progressLogEvery, with how much is done of how much.
func TestProgressIsLoggedWhenNotOnATerminal(t *testing.T) {
	var log apitest.LogBuffer
	m := metrics.New()
	p := newProgress(stdio{errOut: &bytes.Buffer{}}, false, m.Job("generate", "properties", 40), "generating", "properties", 40)
	p.log = slog.New(slog.NewJSONHandler(&log, nil))
	p.set(5) // within progressLogEvery of the start: no line
	p.logged = time.Now().Add(-progressLogEvery)
	p.set(10)
	p.set(11) // within progressLogEvery of the last line
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1: %s", len(lines), log.String())
	}
	var line struct {
		Msg        string
		Done, Size int64
		Unit       string
	}
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil || line.Msg != "generating" || line.Done != 10 || line.Size != 40 || line.Unit != "properties" {
		t.Errorf("logged %s (%v)", lines[0], err)
	}
	if got := p.amount(10); got != "10 of 40 properties (25%)" {
		t.Errorf("amount: %q", got)
	}
	bytesProgress := &progress{unit: "bytes", size: 4 << 20}
	if got := bytesProgress.amount(1 << 20); got != "1.0 MiB of 4.0 MiB (25%)" {
		t.Errorf("amount in bytes: %q", got)
	}
}
