// Package webhooks tells a company's receivers of its record events over
// HTTP, as Standard Webhooks (standardwebhooks.com) says: the endpoints a
// company registers (GraphQL's createWebhookEndpoint and the rest), the
// deliveries each record event makes in its own transaction (EnqueueOn),
// and each delivery's signed POST, which a durable job (internal/jobs'
// webhook_delivery) retries until it is answered.
//
// This is the one place of webhooks' rules: the resolvers call it, the
// job's worker calls Deliver.
package webhooks

import (
	"cmp"
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/ent/webhookdelivery"
	"github.com/propertyrecords/inventory/ent/webhookendpoint"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Jobs inserts the jobs that send deliveries, in the transaction that
// makes them (internal/jobs).
type Jobs interface {
	WebhookDeliveries(ctx context.Context, tx *ent.Tx, company uuid.UUID, deliveries []uuid.UUID) error
}

// Options configure a Service.
type Options struct {
	// MaxEndpoints bounds a company's endpoints (DefaultMaxEndpoints when
	// 0; INVENTORY_WEBHOOKS_MAX_ENDPOINTS).
	MaxEndpoints int
	// AllowPrivate lets the deliveries go to loopback, private and
	// unique-local addresses, and over http
	// (INVENTORY_WEBHOOKS_ALLOW_PRIVATE=on): on-premises receivers, tests.
	// Link-local addresses (the cloud's metadata) are refused even so.
	AllowPrivate bool
	// Resolver finds a receiver's addresses at each delivery
	// (net.DefaultResolver when nil).
	Resolver Resolver
	// Log gets a line per delivery that failed or was refused.
	Log *slog.Logger
	// MaxInFlightPerEndpoint bounds the deliveries this instance sends to
	// one endpoint at once (DefaultMaxInFlightPerEndpoint when 0): a slow
	// receiver holds that many of the queue's workers, not all of them.
	MaxInFlightPerEndpoint int
	// MaxInFlightPerCompany bounds the deliveries this instance sends to
	// one company's endpoints at once (DefaultMaxInFlightPerCompany when
	// 0): a company whose receivers are all slow holds that many of the
	// queue's workers, and the others' deliveries have the rest.
	MaxInFlightPerCompany int
}

// DefaultMaxInFlightPerEndpoint is an endpoint's deliveries in flight on
// one instance: 8 of the queue's 20 workers.
const DefaultMaxInFlightPerEndpoint = 8

// DefaultMaxInFlightPerCompany is a company's deliveries in flight on one
// instance: half the queue's 20 workers (jobs.webhookWorkers), so that one
// company's slow receivers never take every worker from the others.
const DefaultMaxInFlightPerCompany = 10

// DefaultMaxEndpoints is a company's endpoints unless set.
const DefaultMaxEndpoints = 20

// rotationOverlap is how long the secret before a rotation keeps signing
// beside the new one: a day to deploy the new secret to the receiver.
const rotationOverlap = 24 * time.Hour

// Bounds of the lists and of the endpoints' text.
const (
	maxURLBytes           = schema.MaxWebhookURLBytes
	maxDescriptionRunes   = schema.MaxWebhookDescriptionRunes
	DefaultDeliveriesPage = 20
	MaxDeliveriesPage     = 100
)

// Service keeps the endpoints and sends the deliveries.
type Service struct {
	client *ent.Client
	jobs   Jobs
	opts   Options
	http   *http.Client
	log    *slog.Logger
	// inFlight counts each endpoint's and each company's deliveries being
	// sent here; freed is closed, and replaced, when one ends.
	mu       sync.Mutex
	inFlight struct {
		endpoints, companies map[uuid.UUID]int
		freed                chan struct{}
	}
}

// New is the service of client's endpoints; jobs inserts the deliveries'
// jobs (nil: no delivery is ever sent, as with INVENTORY_JOBS and no
// River).
func New(client *ent.Client, jobs Jobs, opts Options) *Service {
	opts.MaxEndpoints = cmp.Or(opts.MaxEndpoints, DefaultMaxEndpoints)
	opts.MaxInFlightPerEndpoint = cmp.Or(opts.MaxInFlightPerEndpoint, DefaultMaxInFlightPerEndpoint)
	opts.MaxInFlightPerCompany = cmp.Or(opts.MaxInFlightPerCompany, DefaultMaxInFlightPerCompany)
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{client: client, jobs: jobs, opts: opts, log: opts.Log,
		http: newHTTPClient(newDialer(opts.Resolver, opts.AllowPrivate))}
	s.inFlight.endpoints, s.inFlight.companies = map[uuid.UUID]int{}, map[uuid.UUID]int{}
	s.inFlight.freed = make(chan struct{})
	return s
}

// NewEndpoint is createWebhookEndpoint's input.
type NewEndpoint struct {
	URL         string
	Events      []Kind
	Description string
}

// Create registers an endpoint of the caller's company and answers it with
// its secret, which is never shown again.
func (s *Service) Create(ctx context.Context, in NewEndpoint) (*ent.WebhookEndpoint, string, error) {
	ctx, err := tenant.ForWriting(ctx)
	if err != nil {
		return nil, "", err
	}
	company, _ := tenant.CompanyFrom(ctx)
	if err := checkURL(in.URL, s.opts.AllowPrivate); err != nil {
		return nil, "", err
	}
	events, err := checkEvents(in.Events)
	if err != nil {
		return nil, "", err
	}
	if err := checkDescription(in.Description); err != nil {
		return nil, "", err
	}
	secret := newSecret()
	var ep *ent.WebhookEndpoint
	err = records.InTx(ctx, s.client, func(tx *ent.Tx) error {
		// Counted in the creation's transaction, after the company's
		// creations before it committed: on PostgreSQL two creations at
		// once would both count one short of the bound (SQLite runs one
		// writing transaction at a time).
		if err := lockCompanysEndpoints(ctx, tx, company); err != nil {
			return err
		}
		n, err := tx.WebhookEndpoint.Query().Where(webhookendpoint.CompanyID(company)).Count(ctx)
		if err != nil {
			return err
		}
		if n >= s.opts.MaxEndpoints {
			return apperr.Errorf(apperr.Conflict, "a company has at most %d webhook endpoints: delete one first", s.opts.MaxEndpoints)
		}
		ep, err = tx.WebhookEndpoint.Create().SetCompanyID(company).SetURL(in.URL).SetEvents(events).
			SetDescription(in.Description).SetSecret(secret).Save(ctx)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return ep, secret, nil
}

// lockCompanysEndpoints holds, until tx ends, PostgreSQL's advisory lock
// of company's endpoints' creations: one at a time per company.
func lockCompanysEndpoints(ctx context.Context, tx *ent.Tx, company uuid.UUID) error {
	if tx.Dialect() != dialect.Postgres {
		return nil
	}
	sqlTx, err := tx.SQLTx()
	if err != nil {
		return err
	}
	// The lock's key is the company's id folded to 64 bits, in a space of
	// its own (the migrations' lock is another key).
	key := int64(binary.BigEndian.Uint64(company[:8])^binary.BigEndian.Uint64(company[8:])) ^ endpointsLockSpace
	_, err = sqlTx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", key)
	return err
}

// endpointsLockSpace sets the endpoints' advisory locks apart from others.
const endpointsLockSpace = 0x77656268_6f6f6b73 // "webhooks"

// Endpoints are the caller's company's endpoints, oldest first (at most
// MaxEndpoints).
func (s *Service) Endpoints(ctx context.Context) ([]*ent.WebhookEndpoint, error) {
	company, err := tenant.CompanyFrom(ctx)
	if err != nil {
		return nil, err
	}
	return s.client.WebhookEndpoint.Query().Where(webhookendpoint.CompanyID(company)).
		Order(ent.Asc(webhookendpoint.FieldCreatedAt), ent.Asc(webhookendpoint.FieldID)).Limit(s.opts.MaxEndpoints).All(ctx)
}

// Change is updateWebhookEndpoint's input: what is given changes.
type Change struct {
	ID          uuid.UUID
	Events      []Kind
	Enabled     *bool
	Description *string
}

// Update changes an endpoint of the caller's company. Enabling it again
// forgets why the service had disabled it.
func (s *Service) Update(ctx context.Context, c Change) (*ent.WebhookEndpoint, error) {
	ctx, err := tenant.ForWriting(ctx)
	if err != nil {
		return nil, err
	}
	up := s.client.WebhookEndpoint.UpdateOneID(c.ID)
	if c.Events != nil {
		events, err := checkEvents(c.Events)
		if err != nil {
			return nil, err
		}
		up.SetEvents(events)
	}
	if c.Description != nil {
		if err := checkDescription(*c.Description); err != nil {
			return nil, err
		}
		up.SetDescription(*c.Description)
	}
	if c.Enabled != nil {
		up.SetEnabled(*c.Enabled).ClearDisabledReason()
	}
	ep, err := up.Save(ctx)
	return ep, notFound(err, "webhook endpoint")
}

// Delete removes an endpoint of the caller's company and its deliveries
// (their jobs then find nothing to send); false when there was none.
func (s *Service) Delete(ctx context.Context, id uuid.UUID) (bool, error) {
	ctx, err := tenant.ForWriting(ctx)
	if err != nil {
		return false, err
	}
	var n int
	err = records.InTx(ctx, s.client, func(tx *ent.Tx) error {
		if n, err = tx.WebhookEndpoint.Delete().Where(webhookendpoint.ID(id)).Exec(ctx); err != nil || n == 0 {
			return err
		}
		_, err := tx.WebhookDelivery.Delete().Where(webhookdelivery.EndpointID(id)).Exec(ctx)
		return err
	})
	return n > 0, err
}

// Rotate gives an endpoint a new secret and answers it, once; the secret
// before keeps signing beside it for rotationOverlap, so that the
// receiver can take the new one meanwhile.
func (s *Service) Rotate(ctx context.Context, id uuid.UUID) (*ent.WebhookEndpoint, string, error) {
	ctx, err := tenant.ForWriting(ctx)
	if err != nil {
		return nil, "", err
	}
	secret := newSecret()
	var ep *ent.WebhookEndpoint
	err = records.InTx(ctx, s.client, func(tx *ent.Tx) error {
		old, err := tx.WebhookEndpoint.Get(ctx, id)
		if err != nil {
			return err
		}
		ep, err = old.Update().SetSecret(secret).SetPreviousSecret(old.Secret).
			SetPreviousSecretExpiresAt(time.Now().UTC().Add(rotationOverlap)).Save(ctx)
		return err
	})
	if err != nil {
		return nil, "", notFound(err, "webhook endpoint")
	}
	return ep, secret, nil
}

// secrets are those that sign ep's deliveries at now: its secret, and the
// one before while the rotation's overlap lasts.
func secrets(ep *ent.WebhookEndpoint, now time.Time) []string {
	s := []string{ep.Secret}
	if ep.PreviousSecret != nil && ep.PreviousSecretExpiresAt != nil && now.Before(*ep.PreviousSecretExpiresAt) {
		s = append(s, *ep.PreviousSecret)
	}
	return s
}

func checkEvents(events []Kind) ([]string, error) {
	if len(events) == 0 {
		return nil, apperr.InvalidField("events", "at least one event kind")
	}
	out := make([]string, 0, len(events))
	for i, k := range events {
		if !known(k) {
			return nil, apperr.InvalidField("events", "events[%d]: %q is not a WebhookEventKind", i, k)
		}
		out = append(out, string(k))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func checkDescription(d string) error {
	if n := len([]rune(d)); n > maxDescriptionRunes {
		return apperr.InvalidField("description", "at most %d characters", maxDescriptionRunes)
	}
	return nil
}

// notFound is err, said as NOT_FOUND when ent found nothing (another
// company's endpoint reads the same).
func notFound(err error, what string) error {
	if ent.IsNotFound(err) {
		return apperr.Errorf(apperr.NotFound, "no such %s", what)
	}
	return err
}
