package webhooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/predicate"
	"github.com/propertyrecords/inventory/ent/webhookdelivery"
	"github.com/propertyrecords/inventory/ent/webhookendpoint"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/webhooks/attempt"
)

// maxAnswerRead is how much of an answer is read: the rest is not waited for.
const maxAnswerRead = 64 << 10

// Status is a delivery's state (GraphQL's WebhookDeliveryStatus).
type Status = webhookdelivery.Status

// DeliveryPage is a page of an endpoint's deliveries, newest first.
type DeliveryPage struct {
	Deliveries []*ent.WebhookDelivery
	// EndCursor is the last one's, to send as after for the next page.
	EndCursor   *string
	HasNextPage bool
}

// Deliveries lists an endpoint's deliveries of the caller's company,
// newest first, first at a time (DefaultDeliveriesPage when 0, at most
// MaxDeliveriesPage), after the cursor of the last one seen, in status
// when given.
func (s *Service) Deliveries(ctx context.Context, endpoint uuid.UUID, status *Status, first int, after *string) (*DeliveryPage, error) {
	company, err := tenant.CompanyFrom(ctx)
	if err != nil {
		return nil, err
	}
	if first == 0 {
		first = DefaultDeliveriesPage
	}
	if first < 1 || first > MaxDeliveriesPage {
		return nil, apperr.InvalidField("first", "from 1 to %d", MaxDeliveriesPage)
	}
	where := []predicate.WebhookDelivery{webhookdelivery.CompanyID(company), webhookdelivery.EndpointID(endpoint)}
	if status != nil {
		where = append(where, webhookdelivery.StatusEQ(*status))
	}
	if after != nil {
		at, id, err := parseCursor(*after)
		if err != nil {
			return nil, err
		}
		where = append(where, webhookdelivery.Or(webhookdelivery.CreatedAtLT(at),
			webhookdelivery.And(webhookdelivery.CreatedAt(at), webhookdelivery.IDLT(id))))
	}
	rows, err := s.client.WebhookDelivery.Query().Where(where...).
		Order(ent.Desc(webhookdelivery.FieldCreatedAt), ent.Desc(webhookdelivery.FieldID)).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	page := &DeliveryPage{Deliveries: rows, HasNextPage: len(rows) > first}
	if page.HasNextPage {
		page.Deliveries = rows[:first]
	}
	if n := len(page.Deliveries); n > 0 {
		c := cursorOf(page.Deliveries[n-1])
		page.EndCursor = &c
	}
	return page, nil
}

// cursorOf names a delivery's place in its endpoint's list.
func cursorOf(d *ent.WebhookDelivery) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(d.CreatedAt.UnixNano(), 10) + "_" + d.ID.String()))
}

func parseCursor(c string) (time.Time, uuid.UUID, error) {
	bad := apperr.InvalidField("after", "not a cursor of webhookDeliveries")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, uuid.Nil, bad
	}
	at, id, ok := strings.Cut(string(b), "_")
	ns, err1 := strconv.ParseInt(at, 10, 64)
	u, err2 := uuid.Parse(id)
	if !ok || err1 != nil || err2 != nil {
		return time.Time{}, uuid.Nil, bad
	}
	return time.Unix(0, ns).UTC(), u, nil
}

// Redeliver sends a delivery of the caller's company again, under the same
// webhook-id (the receiver may have it already), by a new job: pending
// again, its attempts kept.
func (s *Service) Redeliver(ctx context.Context, id uuid.UUID) (*ent.WebhookDelivery, error) {
	ctx, err := tenant.ForWriting(ctx)
	if err != nil {
		return nil, err
	}
	if s.jobs == nil {
		return nil, apperr.Errorf(apperr.Unavailable, "this server sends no webhooks (no durable jobs)")
	}
	var d *ent.WebhookDelivery
	err = records.InTx(ctx, s.client, func(tx *ent.Tx) error {
		if d, err = tx.WebhookDelivery.UpdateOneID(id).SetStatus(webhookdelivery.StatusPending).Save(ctx); err != nil {
			return err
		}
		return s.jobs.WebhookDeliveries(ctx, tx, d.CompanyID, []uuid.UUID{d.ID})
	})
	return d, notFound(err, "webhook delivery")
}

// Deliver makes one attempt of delivery id of company: the job's work.
// nil when it is done with (delivered, failed for good, cancelled, gone);
// an error for River to retry it later. last says it is the job's last
// attempt: a failure then fails the delivery.
func (s *Service) Deliver(ctx context.Context, company, id uuid.UUID, last bool) error {
	ctx, err := tenant.ForWriting(tenant.WithCompany(ctx, company))
	if err != nil {
		return err
	}
	d, err := s.client.WebhookDelivery.Get(ctx, id)
	switch {
	case ent.IsNotFound(err):
		return nil // its endpoint was deleted
	case err != nil:
		return err
	case d.Status != webhookdelivery.StatusPending:
		return nil
	}
	ep, err := s.client.WebhookEndpoint.Query().Where(webhookendpoint.ID(d.EndpointID)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case !ep.Enabled:
		return s.client.WebhookDelivery.UpdateOne(d).SetStatus(webhookdelivery.StatusCancelled).Exec(ctx)
	}
	release, ok := s.hold(ctx, company, ep.ID)
	if !ok {
		return &Busy{Wait: busyWait + rand.N(busyWait)}
	}
	defer release()
	a := s.post(ctx, ep, d)
	status := webhookdelivery.StatusPending
	var retry error
	switch {
	case a.StatusCode >= 200 && a.StatusCode < 300:
		status = webhookdelivery.StatusDelivered
	case a.StatusCode == http.StatusGone:
		// The receiver says it is gone for good: no more deliveries to it.
		status = webhookdelivery.StatusFailed
		if err := s.client.WebhookEndpoint.UpdateOne(ep).SetEnabled(false).
			SetDisabledReason("410 Gone at " + a.At.Format(time.RFC3339)).Exec(ctx); err != nil {
			return err
		}
	default:
		retry = fmt.Errorf("webhooks: delivery %s to endpoint %s: %s", d.ID, ep.ID, a.outcome())
		if last {
			status = webhookdelivery.StatusFailed
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "webhooks: delivery not accepted", slog.String("company", company.String()),
			slog.String("endpoint", ep.ID.String()), slog.String("delivery", d.ID.String()),
			slog.Int("status", a.StatusCode), slog.String("error", a.Error), slog.Bool("last", last))
	}
	attempts := append(d.Attempts, attempt.Attempt(a))
	if len(attempts) > attempt.MaxKept {
		attempts = attempts[len(attempts)-attempt.MaxKept:]
	}
	if err := s.client.WebhookDelivery.UpdateOne(d).SetStatus(status).SetAttempts(attempts).Exec(ctx); err != nil {
		return errors.Join(retry, err)
	}
	return retry
}

// Busy is Deliver's answer when its endpoint has MaxInFlightPerEndpoint
// deliveries being sent by this instance, or its company
// MaxInFlightPerCompany, for longer than holdWait: the job waits Wait and
// tries again, no attempt counted (River's snooze), and its worker takes
// another company's.
type Busy struct{ Wait time.Duration }

func (b *Busy) Error() string {
	return "webhooks: the endpoint or its company has its most deliveries in flight; again in " + b.Wait.String()
}

// SnoozeFor is how long the job waits (internal/jobs snoozes it so).
func (b *Busy) SnoozeFor() time.Duration { return b.Wait }

// busyWait is a busy endpoint's delivery's wait, and up to as much again
// at random, so that the waiting ones do not all come back at once.
const busyWait = time.Second

// holdWait is how long a delivery waits in its worker for a place in
// flight before it is snoozed. A prompt receiver's delivery ends within
// it, so a company that has the workers to itself keeps them busy (a
// snooze is a write and a second or two of nothing: 10,000 events took
// 88 s so, 22 s before the bound); a company whose receivers hang holds
// each of its surplus jobs' workers this long, and no longer, before
// another company's jobs have them.
const holdWait = 100 * time.Millisecond

// hold takes one of endpoint's places in flight and one of its company's,
// waiting up to holdWait for both to be free.
func (s *Service) hold(ctx context.Context, company, endpoint uuid.UUID) (release func(), ok bool) {
	deadline := time.NewTimer(holdWait)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		endpoints, companies := s.inFlight.endpoints, s.inFlight.companies
		if endpoints[endpoint] < s.opts.MaxInFlightPerEndpoint && companies[company] < s.opts.MaxInFlightPerCompany {
			endpoints[endpoint]++
			companies[company]++
			s.mu.Unlock()
			return func() { s.free(company, endpoint) }, true
		}
		freed := s.inFlight.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-deadline.C:
			return nil, false
		case <-ctx.Done():
			return nil, false
		}
	}
}

// free gives back the places hold took and wakes the deliveries waiting
// for one.
func (s *Service) free(company, endpoint uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	endpoints, companies := s.inFlight.endpoints, s.inFlight.companies
	if endpoints[endpoint]--; endpoints[endpoint] == 0 {
		delete(endpoints, endpoint)
	}
	if companies[company]--; companies[company] == 0 {
		delete(companies, company)
	}
	close(s.inFlight.freed)
	s.inFlight.freed = make(chan struct{})
}

// tried is an attempt as post made it.
type tried attempt.Attempt

func (a tried) outcome() string {
	if a.Error != "" {
		return a.Error
	}
	return strconv.Itoa(a.StatusCode)
}

// post POSTs d's payload to ep, signed, and tells how it went.
func (s *Service) post(ctx context.Context, ep *ent.WebhookEndpoint, d *ent.WebhookDelivery) tried {
	start := time.Now()
	a := tried{At: start.UTC()}
	body := []byte(d.Payload)
	id := d.ID.String()
	sig, err := Signature(id, start, body, secrets(ep, start)...)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		a.Error = err.Error()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "inventoryd-webhooks")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(start.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := s.http.Do(req)
	if err != nil {
		a.LatencyMS = int(time.Since(start).Milliseconds())
		a.Error = err.Error()
		return a
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerRead))
	a.LatencyMS = int(time.Since(start).Milliseconds())
	a.StatusCode = resp.StatusCode
	a.Response = firstBytes(answer, attempt.MaxResponseKept)
	if err != nil {
		a.Error = "reading the answer: " + err.Error()
	}
	return a
}

// lastRuneStart is where b's last character starts.
func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

// firstBytes is at most n bytes of b as text, cut on a character.
func firstBytes(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
		// A character cut at the end is dropped, not shown as U+FFFD.
		if i := lastRuneStart(b); !utf8.FullRune(b[i:]) {
			b = b[:i]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
