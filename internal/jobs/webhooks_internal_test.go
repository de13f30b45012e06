package jobs

import (
	"testing"
	"time"
)

// A delivery's retries double from the base to a ceiling of 12 h, each
// within 10 % of its step, and all of them together last about two days.
func TestWebhookRetriesLastAboutTwoDays(t *testing.T) {
	var total time.Duration
	for attempt := 1; attempt < webhookAttempts; attempt++ {
		step := min(DefaultWebhookRetryBase<<(attempt-1), webhookRetryCeiling)
		d := webhookBackoff(DefaultWebhookRetryBase, attempt)
		if d < step*9/10 || d > step*11/10 {
			t.Errorf("retry after attempt %d: %s; want %s ± 10%%", attempt, d, step)
		}
		total += d
	}
	if total < 40*time.Hour || total > 56*time.Hour {
		t.Errorf("all the retries: %s; want about two days", total)
	}
	if d := webhookBackoff(DefaultWebhookRetryBase, 1000); d > webhookRetryCeiling*11/10 || d <= 0 {
		t.Errorf("a late attempt: %s", d)
	}
}
