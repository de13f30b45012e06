package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// verifyWebhook is the README's receiver, as written there: every
// receiver of these tests checks each delivery with it too, and
// TestTheREADMEsReceiverIsTheTestedOne holds the two the same.
func verifyWebhook(secret string, h http.Header, body []byte) bool {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.%s", h.Get("webhook-id"), ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(h.Get("webhook-signature")) { // two during a rotation
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}

// The README's receiver is verifyWebhook, character for character.
func TestTheREADMEsReceiverIsTheTestedOne(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme[strings.Index(string(readme), "## Webhooks"):])
	start := strings.Index(section, "```go\n") + len("```go\n")
	snippet := section[start : start+strings.Index(section[start:], "```")]
	if !strings.Contains(string(self), "\n"+snippet) {
		t.Errorf("the README's receiver is not verifyWebhook of readme_test.go:\n%s", snippet)
	}
}
