// Package attempt is what a webhook delivery keeps of each of its POSTs
// (ent's WebhookDelivery.attempts), apart from internal/webhooks so that
// the ent schema can name it without importing the ent client.
package attempt

import "time"

// Attempt is one POST of a delivery.
type Attempt struct {
	At time.Time `json:"at"`
	// StatusCode is the answer's status; 0 when none came (refused, timed
	// out, no connection).
	StatusCode int `json:"status_code"`
	// LatencyMS is from the request's start to the end of the body read.
	LatencyMS int `json:"latency_ms"`
	// Response is the first MaxResponseKept bytes of the answer's body.
	Response string `json:"response,omitempty"`
	// Error says why no answer came, or why the address was refused.
	Error string `json:"error,omitempty"`
}

// What a delivery keeps of its attempts: the last MaxKept, each with the
// first MaxResponseKept bytes of its answer.
const (
	MaxKept         = 30
	MaxResponseKept = 1024
)
