package jobs

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/propertyrecords/inventory/ent"
)

// QueueWebhookDelivery is the webhook deliveries' queue: a backlog of them
// (a receiver down) never holds the signed PDFs' workers.
const QueueWebhookDelivery = "webhook_delivery"

// webhookWorkers is the deliveries sent at once per instance. Each waits
// on its receiver (a few milliseconds for a prompt one, 10 s at most), so
// they are many: 20 send 10,000 events to 3 endpoints in about 20 s on
// PostgreSQL (TestTenThousandEventsToThreeEndpoints); a slow receiver
// holds at most webhooks.DefaultMaxInFlightPerEndpoint of them, and a
// failing one's retries are scheduled apart.
const webhookWorkers = 20

// webhookFetchCooldown is the least time between two fetches of the
// deliveries' queue (River's default is 100 ms).
const webhookFetchCooldown = 10 * time.Millisecond

// WebhookDeliveryArgs is the job of sending one webhook delivery (a record
// event to one endpoint), made in the event's transaction.
type WebhookDeliveryArgs struct {
	DeliveryID uuid.UUID `json:"delivery_id"`
	// CompanyID is the company whose delivery it is: the worker reads and
	// writes as that company, and River's job list names it.
	CompanyID uuid.UUID `json:"company_id"`
}

// Kind names the kind in river_job and the metrics.
func (WebhookDeliveryArgs) Kind() string { return "webhook_delivery" }

// webhookAttempts at webhookBackoff (10 s doubling to a 12 h ceiling: 15
// retries)
// retry for about two days (46 h), as Standard Webhooks' senders do.
const webhookAttempts = 16

// InsertOpts: its queue and attempts; not unique (redeliverWebhook sends a
// delivery again on purpose).
func (WebhookDeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhookDelivery, MaxAttempts: webhookAttempts}
}

// WebhookDeliverer sends a delivery (webhooks.Service): nil when it is done
// with, an error to retry it; last is the job's last attempt.
type WebhookDeliverer interface {
	Deliver(ctx context.Context, company, delivery uuid.UUID, last bool) error
}

// webhookWorker works WebhookDeliveryArgs.
type webhookWorker struct {
	river.WorkerDefaults[WebhookDeliveryArgs]
	deliverer WebhookDeliverer
	// retryBase is the first retry's delay (DefaultWebhookRetryBase unless
	// Options say, as tests do).
	retryBase time.Duration
}

// DefaultWebhookRetryBase is the delay before a delivery's first retry.
const DefaultWebhookRetryBase = 10 * time.Second

// webhookRetryCeiling bounds the delay between two attempts.
const webhookRetryCeiling = 12 * time.Hour

// webhookTimeout bounds an attempt: the POST's 10 s and the reads and
// writes of the delivery around it.
const webhookTimeout = 30 * time.Second

func (w *webhookWorker) Timeout(*river.Job[WebhookDeliveryArgs]) time.Duration { return webhookTimeout }

// NextRetry is exponential backoff with jitter: base·2^(attempt-1), at most
// the ceiling, ±10 % so that a receiver back from an outage is not sent
// every delivery in the same second.
func (w *webhookWorker) NextRetry(job *river.Job[WebhookDeliveryArgs]) time.Time {
	return time.Now().Add(webhookBackoff(w.retryBase, job.Attempt))
}

func webhookBackoff(base time.Duration, attempt int) time.Duration {
	d := webhookRetryCeiling
	if attempt < 40 {
		d = min(base<<max(attempt-1, 0), webhookRetryCeiling)
	}
	if d <= 0 {
		d = webhookRetryCeiling
	}
	jitter := time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
	return d + jitter
}

func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookDeliveryArgs]) error {
	if w.deliverer == nil {
		return errors.New("jobs: no webhook deliverer (DeliverWebhooksWith)")
	}
	err := w.deliverer.Deliver(ctx, job.Args.CompanyID, job.Args.DeliveryID, job.Attempt >= job.MaxAttempts)
	// An endpoint with its most deliveries in flight: the job waits
	// without spending an attempt.
	if busy, ok := errors.AsType[snoozer](err); ok {
		return river.JobSnooze(busy.SnoozeFor())
	}
	return err
}

// snoozer is an error that asks its job to wait and try again, no attempt
// counted (webhooks.Busy).
type snoozer interface {
	error
	SnoozeFor() time.Duration
}

// WebhookDeliveries inserts, in tx, the jobs that send deliveries of
// company: webhooks.Service calls it in the transaction of the record
// event that makes them.
func (j *Jobs) WebhookDeliveries(ctx context.Context, tx *ent.Tx, company uuid.UUID, deliveries []uuid.UUID) error {
	sqlTx, err := tx.SQLTx()
	if err != nil {
		return err
	}
	params := make([]river.InsertManyParams, len(deliveries))
	for i, id := range deliveries {
		params[i] = river.InsertManyParams{Args: WebhookDeliveryArgs{DeliveryID: id, CompanyID: company}}
	}
	// The fast insert: no row comes back to be scanned, and nothing here
	// needs one (the scan was a good part of the insert's CPU in
	// createInventory's profile).
	_, err = j.client.InsertManyFastTx(ctx, sqlTx, params)
	return err
}

// DeliverWebhooksWith gives the webhook deliveries' worker what sends them
// (webhooks.Service), before Start.
func (j *Jobs) DeliverWebhooksWith(d WebhookDeliverer) { j.webhooks.deliverer = d }
