package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/datagen"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// verdict of one request sent while PostgreSQL stops and starts again.
type verdict int

const (
	served     verdict = iota // the records
	toldRetry                 // 503 UNAVAILABLE with Retry-After (REST; GraphQL when nothing was read), or a 200 whose errors are all UNAVAILABLE (GraphQL with some data)
	wrongError                // anything else: a 500, INTERNAL, a broken connection
)

func (v verdict) String() string { return [...]string{"served", "told to retry", "wrong error"}[v] }

func outageRequest(client *http.Client, base string, graphQL bool) (verdict, string) {
	company := datagen.DemoCompanies[0].String()
	var req *http.Request
	if graphQL {
		req, _ = http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"{ inventories(first: 5) { totalCount edges { node { id environments { name } } } } }"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(tenant.Header, company)
	} else {
		req, _ = http.NewRequest(http.MethodGet, base+"/api/v1/inventories?x-company-id="+company, nil)
	}
	res, err := client.Do(req)
	if err != nil {
		return wrongError, err.Error()
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	summary := res.Status + " " + string(body[:min(len(body), 300)])
	if strings.Contains(string(body), "INTERNAL") {
		return wrongError, summary
	}
	if !graphQL {
		switch {
		case res.StatusCode == http.StatusOK:
			return served, summary
		case res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") != "" && strings.Contains(string(body), `"UNAVAILABLE"`):
			return toldRetry, summary
		}
		return wrongError, summary
	}
	var out struct {
		Data   json.RawMessage
		Errors []struct{ Extensions struct{ Code string } }
	}
	if json.Unmarshal(body, &out) != nil {
		return wrongError, summary
	}
	switch {
	case res.StatusCode == http.StatusOK && len(out.Errors) == 0:
		return served, summary
	case res.StatusCode == http.StatusServiceUnavailable && out.Data != nil:
		return wrongError, "a 503 with data: " + summary
	case res.StatusCode != http.StatusOK && res.StatusCode != http.StatusServiceUnavailable, len(out.Errors) == 0:
		return wrongError, summary
	}
	for _, e := range out.Errors {
		if e.Extensions.Code != "UNAVAILABLE" {
			return wrongError, summary
		}
	}
	if res.Header.Get("Retry-After") == "" {
		return wrongError, "no Retry-After: " + summary
	}
	return toldRetry, summary
}

// PostgreSQL stops under load and starts again: while it is down every
// request is told to retry (503 UNAVAILABLE with Retry-After),
// none is an internal error, and once it is back requests are served again
// without restarting the service.
func TestAPostgreSQLRestartUnderLoadIsRetryableNeverInternal(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("runs in the PostgreSQL run (TEST_DATABASE_URL): it starts a PostgreSQL of its own")
	}
	cluster := testdb.StartCluster(t)
	// The demo records without their files, which no request here reads: a
	// start on an empty database would render every PDF and photo first.
	st := testdb.OpenURL(t, cluster.URL())
	if _, err := datagen.Load(context.Background(), st.Client, nil, datagen.DemoSeed, datagen.Demo); err != nil {
		t.Fatal(err)
	}
	st.Close()
	m := launchOn(t, cluster.URL(), slog.New(slog.DiscardHandler), func(c *Config) { c.ConnectTimeout = 2 * time.Second })
	defer m.Close()

	type phase int
	const (
		up phase = iota
		down
		back
	)
	var (
		current  atomic.Int32
		mu       sync.Mutex
		counts   [3][3]int
		examples = map[verdict]string{}
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for i := range 4 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				p := phase(current.Load())
				v, summary := outageRequest(client, m.URL(), (i+n)%2 == 0)
				mu.Lock()
				counts[p][v]++
				if _, seen := examples[v]; !seen || v == wrongError {
					examples[v] = summary
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	current.Store(int32(down))
	cluster.Stop()
	time.Sleep(time.Second)
	cluster.Start()
	current.Store(int32(back))
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		servedAgain := counts[back][served]
		mu.Unlock()
		if servedAgain >= 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	for p, name := range []string{"up", "down", "back"} {
		t.Logf("PostgreSQL %s: %d served, %d told to retry, %d wrong errors", name, counts[p][served], counts[p][toldRetry], counts[p][wrongError])
	}
	for v, example := range examples {
		t.Logf("example %s: %s", v, example)
	}
	if counts[up][wrongError]+counts[down][wrongError]+counts[back][wrongError] > 0 {
		t.Errorf("requests answered with something other than the records or UNAVAILABLE: %s", examples[wrongError])
	}
	if counts[down][toldRetry] == 0 {
		t.Error("no request was told to retry while PostgreSQL was down")
	}
	if counts[back][served] < 20 {
		t.Errorf("after PostgreSQL came back, %d requests served in 20 s", counts[back][served])
	}
}

// TestWritesDuringAnOutageAre503WithRetryAfter: while PostgreSQL is down a
// mutation is answered as a query is, 503 UNAVAILABLE with Retry-After and
// no data, whatever its transport (a JSON POST, a multipart upload): a
// client's retry policy reads the status. It was a 200 whose data held the
// mutation's null.
func TestWritesDuringAnOutageAre503WithRetryAfter(t *testing.T) {
	if !testdb.Postgres() {
		t.Skip("runs in the PostgreSQL run (TEST_DATABASE_URL): it starts a PostgreSQL of its own")
	}
	cluster := testdb.StartCluster(t)
	m := launchOn(t, cluster.URL(), slog.New(slog.DiscardHandler), func(c *Config) { c.ConnectTimeout = 2 * time.Second })
	defer m.Close()
	cluster.Stop()
	company := datagen.DemoCompanies[0].String()
	create := `{"query":"mutation { createInventory(input: {id: \"` + uuid.NewString() + `\", propertyId: \"` + uuid.NewString() +
		`\", inventoryType: COLOCACION, rentalPrice: \"1.00\"}) { inventory { id } } }"}`
	sign := `{"query":"mutation { signInventory(input: {inventoryId: \"` + uuid.NewString() + `\", party: AGENT, signerName: \"Ana\"}) { inventory { id } } }"}`
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("operations", `{"query":"mutation($f: Upload!) { addItemPhoto(itemId: \"`+uuid.NewString()+`\", file: $f) { photo { id } } }","variables":{"f":null}}`)
	_ = mw.WriteField("map", `{"0": ["variables.f"]}`)
	part, _ := mw.CreateFormFile("0", "a.jpg")
	_, _ = part.Write([]byte("\xff\xd8\xff\xe0 a photo"))
	_ = mw.Close()
	for _, tc := range []struct {
		name, contentType string
		body              []byte
	}{
		{"createInventory", "application/json", []byte(create)},
		{"signInventory", "application/json", []byte(sign)},
		{"addItemPhoto, multipart", mw.FormDataContentType(), form.Bytes()},
	} {
		req, _ := http.NewRequest(http.MethodPost, m.URL()+"/graphql", bytes.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.contentType)
		req.Header.Set("Apollo-Require-Preflight", "true")
		req.Header.Set(tenant.Header, company)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var out struct {
			Data   *json.RawMessage
			Errors []struct{ Extensions struct{ Code string } }
		}
		_ = json.Unmarshal(body, &out)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || out.Data != nil ||
			len(out.Errors) == 0 || out.Errors[0].Extensions.Code != "UNAVAILABLE" {
			t.Errorf("%s while PostgreSQL is down: %s (Retry-After %q) %s; want 503 UNAVAILABLE with Retry-After and no data",
				tc.name, res.Status, res.Header.Get("Retry-After"), body)
		}
	}
}
