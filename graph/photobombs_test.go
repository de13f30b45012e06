package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/thumbnail"
	"github.com/propertyrecords/inventory/internal/thumbnail/thumbtest"
)

// Issue 34: two clients of company B sending photos whose decode is dear
// (issue 34's scan bomb, and the dearest photos the bounds take) made 12 of
// 12 of company A's ordinary uploads fail with DEADLINE_EXCEEDED. Now the
// bombs are refused from their markers, INVALID_ARGUMENT on file saying
// which bound, and the photos just within the bounds are decoded in B's
// fair share of the decodes: one place of two, so A's uploads, over the
// real HTTP server, all succeed while B floods.
func TestACompanysUploadsSucceedWhileAnotherSendsPhotoBombs(t *testing.T) {
	w := newWrites(t)
	made, errs := w.create(t, w.tree(uuid.NewString(), 1, 1))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	mine := made.Environments[0].Items[0].ID
	input := w.tree(uuid.NewString(), 1, 1)
	input["propertyId"] = w.theirs
	theirs, errs := w.mutate(t, companyB, createMutation, input, "createInventory")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	bombs := []struct {
		name, says string
		data       []byte
	}{
		{"issue 34's scan bomb", "sample visits, over the", thumbtest.ProgressiveJPEG(6400, 6400, 3000)},
		{"one scan over the scan bound", "101 scans, over the 100", thumbtest.ProgressiveJPEG(3000, 3000, thumbnail.MaxScans+1)},
		{"an interlaced RGBA PNG of 49 MP", "sample visits, over the", thumbtest.PNG(7000, 7000, thumbtest.RGBA, 8, true, 4)},
		{"just within the scan bound: 1000×1000 in 100 scans", "", thumbtest.ProgressiveJPEG(1000, 1000, thumbnail.MaxScans)},
		{"just within: a grey PNG of 7000×7000", "", thumbtest.PNG(7000, 7000, thumbtest.Gray, 8, false, 4)},
	}

	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		mu       sync.Mutex
		problems []string
		decoded  atomic.Int64
		refused  atomic.Int64
		other    sync.Map // what B's photos within the bounds got otherwise
	)
	for client := range 2 {
		wg.Go(func() {
			for i := client; !stop.Load(); i++ {
				b := bombs[i%len(bombs)]
				status, codes, message := postPhoto(w.srv, companyB, theirs.Environments[0].Items[0].ID, b.data)
				switch {
				case b.says != "" && (status != 200 || len(codes) != 1 || codes[0] != "INVALID_ARGUMENT file" || !strings.Contains(message, b.says)):
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%s: HTTP %d %v %q; want INVALID_ARGUMENT on file saying %q", b.name, status, codes, message, b.says))
					mu.Unlock()
				case b.says != "":
					refused.Add(1)
				case status == 200 && len(codes) == 0:
					decoded.Add(1)
				case status >= 500 || strings.Contains(strings.Join(codes, " "), "INTERNAL"):
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%s: HTTP %d %v %q", b.name, status, codes, message))
					mu.Unlock()
				default: // B's own share spent: waiting too long, or past its deadline
					n, _ := other.LoadOrStore(fmt.Sprint(status, codes), new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // B's decodes under way
	jpg := aJPEG(t)
	var slowest time.Duration
	for i := range 12 {
		start := time.Now()
		status, ph, errs := upload(t, w.srv, companyA, map[string]any{"itemId": mine}, jpg, preflight)
		slowest = max(slowest, time.Since(start))
		if status != http.StatusOK || len(errs) > 0 || ph.ID == "" {
			t.Errorf("company A's upload %d: HTTP %d %+v", i+1, status, errs)
		}
	}
	stop.Store(true)
	wg.Wait()
	otherwise := map[string]int64{}
	other.Range(func(k, v any) bool { otherwise[k.(string)] = v.(*atomic.Int64).Load(); return true })
	t.Logf("company A: 12 uploads, the slowest %s; company B: %d bombs refused, %d dear photos decoded, otherwise %v",
		slowest.Round(time.Millisecond), refused.Load(), decoded.Load(), otherwise)
	for _, p := range problems {
		t.Error(p)
	}
	if refused.Load() == 0 || decoded.Load() == 0 {
		t.Errorf("company B had %d bombs refused and %d dear photos decoded: want both, to show the flood", refused.Load(), decoded.Load())
	}
}

// postPhoto sends addItemPhoto as upload does, from any goroutine: its
// status, its errors' codes and fields ("CODE field"), and the first's message.
func postPhoto(srv *apitest.Server, company, item string, file []byte) (int, []string, string) {
	ops := `{"query":"mutation($file: Upload!) { addItemPhoto(itemId: \"` + item + `\", file: $file) { photo { id } } }","variables":{"file":null}}`
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("operations", ops)
	_ = mw.WriteField("map", `{"0": ["variables.file"]}`)
	part, _ := mw.CreateFormFile("0", "bomb")
	_, _ = part.Write(file)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-Company-Id", company)
	req.Header.Set("Apollo-Require-Preflight", "true")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []string{err.Error()}, ""
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out struct{ Errors []apitest.Error }
	_ = json.Unmarshal(raw, &out)
	var codes []string
	message := ""
	for i, e := range out.Errors {
		field, _ := e.Extensions["field"].(string)
		codes = append(codes, strings.TrimSpace(e.Code()+" "+field))
		if i == 0 {
			message = e.Message
		}
	}
	return res.StatusCode, codes, message
}
