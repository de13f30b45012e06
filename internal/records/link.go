package records

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/ent/signaturerequest"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// The lifetime of a signature link: DefaultLinkTTL unless the service is
// given another (INVENTORY_SIGNING_LINK_TTL), and what requestSignature's
// expiresIn may ask for. A link is a credential for one signature: a minute
// is too short to read an inventory, a month long enough for any tenant
// abroad, and past that a link forgotten in a mailbox should not still sign.
const (
	DefaultLinkTTL = 72 * time.Hour
	MinLinkTTL     = time.Minute
	MaxLinkTTL     = 30 * 24 * time.Hour
)

// ConsentVersion names the consent text a signer accepts on the link's
// page (internal/signpage): kept with the evidence, so that the words
// accepted can be told apart once they change. Change it with the text.
const ConsentVersion = "2026-11-27"

// linkActor is the actor of the events of a signature made from a link:
// no credential sent it.
const linkActor = "signature link"

// tokenBytes is the randomness of a link's token: 256 bits, past any guess.
const tokenBytes = 32

// The fields of requestSignature's and cancelSignatureRequest's inputs
// besides signInventory's.
const fieldExpiresIn = "expiresIn"

// LinkRequest asks for a link one party signs an inventory from.
type LinkRequest struct {
	InventoryID uuid.UUID
	Party       Party
	// SignerName is who the link is for: the name the page suggests.
	SignerName string
	// ExpiresIn is the link's lifetime in seconds; nil: the service's.
	ExpiresIn *int
}

// Link is a link issued: its token (shown once, kept only as its hash) and
// when it stops working.
type Link struct {
	Token     string
	ExpiresAt time.Time
}

// LinkState is what a link can still do.
type LinkState string

const (
	// LinkOpen: it signs.
	LinkOpen LinkState = "open"
	// LinkUsed: it signed already; a link signs once.
	LinkUsed LinkState = "used"
	// LinkExpired: its time ran out.
	LinkExpired LinkState = "expired"
	// LinkCancelled: cancelled, or replaced by a newer link for the party.
	LinkCancelled LinkState = "cancelled"
	// LinkOutdated: the inventory's content changed since it was issued:
	// the signer would not sign what the sender meant.
	LinkOutdated LinkState = "outdated"
	// LinkSigned: the party signed otherwise, or the inventory is signed.
	LinkSigned LinkState = "signed"
)

// LinkClosedError refuses a signature from a link that no longer signs.
type LinkClosedError struct{ State LinkState }

func (e *LinkClosedError) Error() string { return "the signature link is " + string(e.State) }

// LinkPage is what a link's page shows: the request, its state, and the
// inventory with its property, rooms, items and materials.
type LinkPage struct {
	Request   *ent.SignatureRequest
	State     LinkState
	Inventory *ent.Inventory
	// Draft is the PDF the party signs, for an open link on a service
	// with Drafts: the page shows it and offers it.
	Draft *Draft
}

// LinkEvidence is what the link's page says of the signer, kept on the
// request with the time of the signature.
type LinkEvidence struct {
	// ClientAddress is the signer's address (the server decides which to
	// trust: internal/signpage).
	ClientAddress string
	UserAgent     string
	// ConsentVersion is the consent text accepted (ConsentVersion).
	ConsentVersion string
	// Document is the SHA-256 of the draft PDF the page offered
	// (OpenLink's Draft): the signature is refused when the draft is no
	// longer that one (ErrDocumentChanged), and keeps it.
	Document string
	// Drawing is the signature drawn on the page's pad (internal/drawing's
	// text); "" when none was (a browser without JavaScript).
	Drawing string
}

// ErrDocumentChanged refuses a signature from a link whose page showed a
// draft that is no longer the inventory's: another party signed, say. The
// page shows the inventory again, to be signed as it now is.
var ErrDocumentChanged = &apperr.Error{Code: apperr.Conflict, Field: "document",
	Message: "the inventory's document changed since the page showed it: review it again before signing"}

// ReadOnly reports whether the service refuses writes (INVENTORY_WRITES=off):
// a link's page then says it cannot sign rather than show a form.
func (s *Service) ReadOnly() bool { return s.readOnly }

// WithLinkTTL sets the lifetime of the links the service issues unless
// asked for another (DefaultLinkTTL when ttl is 0).
func (s *Service) WithLinkTTL(ttl time.Duration) *Service {
	s.linkTTL = ttl
	return s
}

func (s *Service) linkLifetime(expiresIn *int) (time.Duration, error) {
	if expiresIn == nil {
		if s.linkTTL > 0 {
			return s.linkTTL, nil
		}
		return DefaultLinkTTL, nil
	}
	ttl := time.Duration(*expiresIn) * time.Second
	if *expiresIn < int(MinLinkTTL/time.Second) || *expiresIn > int(MaxLinkTTL/time.Second) {
		return 0, apperr.InvalidField(fieldExpiresIn, "%d seconds: a link lasts from %d seconds (a minute) to %d (30 days)",
			*expiresIn, int(MinLinkTTL/time.Second), int(MaxLinkTTL/time.Second))
	}
	return ttl, nil
}

// RequestSignature issues a link for one party of an unsigned inventory of
// the caller's company to sign it from, remotely. A newer link for the same
// party cancels the one before, so that at most one is open. The token is
// returned once and kept only as its SHA-256.
func (s *Service) RequestSignature(ctx context.Context, r LinkRequest) (Link, error) {
	ctx, err := s.forWriting(ctx)
	if err != nil {
		return Link{}, err
	}
	r.SignerName = strings.TrimSpace(r.SignerName)
	if err := checkSigner(r.Party, r.SignerName); err != nil {
		return Link{}, err
	}
	ttl, err := s.linkLifetime(r.ExpiresIn)
	if err != nil {
		return Link{}, err
	}
	inv, err := s.client.Inventory.Query().Where(inventory.ID(r.InventoryID)).Only(ctx)
	if ent.IsNotFound(err) {
		return Link{}, &apperr.Error{Code: apperr.NotFound, Field: fieldInventoryID, Message: fmt.Sprintf("inventory %s not found", r.InventoryID)}
	}
	if err != nil {
		return Link{}, err
	}
	if mine := signatureOf(inv, r.Party); mine.date != nil {
		return Link{}, &apperr.Error{Code: apperr.Conflict, Field: fieldParty,
			Message: fmt.Sprintf("inventory %s is already signed by the %s (%s): each party signs once", inv.ID, r.Party.word(), orUnknown(mine.name))}
	}
	if inv.IsSigned {
		return Link{}, &apperr.Error{Code: apperr.Conflict, Field: fieldInventoryID,
			Message: fmt.Sprintf("inventory %s is signed: no one signs it again", inv.ID)}
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return Link{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	hash := tokenHash(token)
	now := time.Now().UTC()
	link := Link{Token: token, ExpiresAt: now.Add(ttl).Truncate(time.Second)}
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		if _, err := tx.SignatureRequest.Update().Where(signaturerequest.InventoryID(inv.ID), signaturerequest.PartyEQ(signaturerequest.Party(r.Party)),
			signaturerequest.UsedAtIsNil(), signaturerequest.CancelledAtIsNil()).SetCancelledAt(now).Save(ctx); err != nil {
			return err
		}
		create := tx.SignatureRequest.Create().SetID(linkID(hash)).SetCompanyID(inv.CompanyID).SetInventoryID(inv.ID).
			SetParty(signaturerequest.Party(r.Party)).SetSignerName(r.SignerName).SetTokenHash(hash).
			SetInventoryVersion(inv.Version).SetCreatedAt(now).SetExpiresAt(link.ExpiresAt)
		if name := tenant.CallerName(ctx); name != "" {
			create.SetRequestedBy(truncate(name, schema.MaxSignerNameRunes))
		}
		if err := create.Exec(ctx); err != nil {
			return err
		}
		return Record(ctx, tx.Client(), Event{Kind: recordevent.KindSignatureRequested, CompanyID: inv.CompanyID,
			PropertyID: inv.PropertyID, InventoryID: inv.ID})
	})
	if err != nil {
		return Link{}, err
	}
	// The token is a credential: never logged; the request's id is.
	s.log.LogAttrs(ctx, slog.LevelInfo, "records: signature link issued", tenant.CallerAttrs(ctx, []slog.Attr{
		slog.String("company", inv.CompanyID.String()), slog.String("inventory", inv.ID.String()),
		slog.String("party", string(r.Party)), slog.String("request", linkID(hash).String()),
		slog.Time("expires_at", link.ExpiresAt)})...)
	return link, nil
}

// CancelSignatureRequest ends the open link of an inventory's party, if
// any: cancelled reports whether there was one.
func (s *Service) CancelSignatureRequest(ctx context.Context, inventoryID uuid.UUID, party Party) (cancelled bool, err error) {
	ctx, err = s.forWriting(ctx)
	if err != nil {
		return false, err
	}
	if !party.valid() {
		return false, apperr.InvalidField(fieldParty, "%q is not AGENT, OWNER or TENANT", party)
	}
	inv, err := s.client.Inventory.Query().Where(inventory.ID(inventoryID)).Only(ctx)
	if ent.IsNotFound(err) {
		return false, &apperr.Error{Code: apperr.NotFound, Field: fieldInventoryID, Message: fmt.Sprintf("inventory %s not found", inventoryID)}
	}
	if err != nil {
		return false, err
	}
	n, err := s.client.SignatureRequest.Update().Where(signaturerequest.InventoryID(inv.ID), signaturerequest.PartyEQ(signaturerequest.Party(party)),
		signaturerequest.UsedAtIsNil(), signaturerequest.CancelledAtIsNil()).SetCancelledAt(time.Now().UTC()).Save(ctx)
	if err != nil {
		return false, err
	}
	if n > 0 {
		s.log.LogAttrs(ctx, slog.LevelInfo, "records: signature link cancelled", tenant.CallerAttrs(ctx, []slog.Attr{
			slog.String("company", inv.CompanyID.String()), slog.String("inventory", inv.ID.String()), slog.String("party", string(party))})...)
	}
	return n > 0, nil
}

// OpenLink reads the link token names, with its inventory, and says what it
// can do. A token that names no link is NOT_FOUND, in the same words
// whatever it is. The link is looked up without a company (the token is the
// credential: audited, naming the request), then everything else is read as
// the request's company.
func (s *Service) OpenLink(ctx context.Context, token string) (*LinkPage, error) {
	req, err := s.linkRequest(ctx, token)
	if err != nil {
		return nil, err
	}
	ctx = tenant.WithCompany(ctx, req.CompanyID)
	inv, err := s.client.Inventory.Query().Where(inventory.ID(req.InventoryID)).WithProperty().
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.Order(ent.Asc(environment.FieldLevel), ent.Asc(environment.FieldOrder), ent.Asc(environment.FieldID)).
				WithItems(func(q *ent.ItemQuery) {
					q.Order(ent.Asc(item.FieldOrder), ent.Asc(item.FieldID)).WithMaterial()
				})
		}).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, linkNotFound()
	}
	if err != nil {
		return nil, err
	}
	state, err := s.linkState(ctx, req, inv)
	if err != nil {
		return nil, err
	}
	if state == LinkSigned {
		// Perhaps by this very link, its signature committed between the
		// read of the request and that of the inventory (each statement
		// reads its own snapshot): the request read again says so.
		if again, err := s.linkRequest(ctx, token); err == nil && again.UsedAt != nil {
			req, state = again, LinkUsed
		}
	}
	return &LinkPage{Request: req, State: state, Inventory: inv}, nil
}

// OpenLinkDraft is OpenLink with, for a link that signs on a service with
// Drafts, the draft its party would sign: what the page shows and offers.
func (s *Service) OpenLinkDraft(ctx context.Context, token string) (*LinkPage, error) {
	page, err := s.OpenLink(ctx, token)
	if err != nil || page.State != LinkOpen || s.drafts == nil {
		return page, err
	}
	if page.Draft, err = s.drafts.Draft(tenant.WithCompany(ctx, page.Request.CompanyID), page.Request.InventoryID); err != nil {
		return nil, err
	}
	return page, nil
}

// SignByLink signs for the link's party, remotely, with the name the signer
// typed, and keeps the evidence on the link: both in one transaction with
// the signature, so a link never signs twice nor is spent without signing.
// A link that no longer signs is *LinkClosedError, with its page.
func (s *Service) SignByLink(ctx context.Context, token, signerName string, ev LinkEvidence) (*LinkPage, error) {
	page, err := s.OpenLink(ctx, token)
	if err != nil {
		return nil, err
	}
	if page.State != LinkOpen {
		return page, &LinkClosedError{State: page.State}
	}
	req := page.Request
	wctx, err := s.forWriting(tenant.WithCompany(ctx, req.CompanyID))
	if err != nil {
		return page, err
	}
	sig := Signing{InventoryID: req.InventoryID, Party: Party(req.Party), SignerName: strings.TrimSpace(signerName), Remote: true, Drawing: ev.Drawing}
	if err := checkSigner(sig.Party, sig.SignerName); err != nil {
		return page, err
	}
	if err := readDrawing(&sig); err != nil {
		return page, err
	}
	ev.UserAgent = truncate(strings.ToValidUTF8(ev.UserAgent, "?"), schema.MaxUserAgentRunes)
	ev.ClientAddress = strings.ToValidUTF8(ev.ClientAddress, "?")
	if len(ev.ClientAddress) > 64 {
		ev.ClientAddress = strings.ToValidUTF8(ev.ClientAddress[:64], "")
	}
	use := &linkUse{request: req, evidence: ev}
	for attempt := 1; ; attempt++ {
		// The signer signs the draft the page offered, or nothing: the
		// write then finds the version that draft shows.
		if err := s.draftOf(wctx, &sig); err != nil {
			return page, err
		}
		if sig.document != nil && sig.document.SHA256 != ev.Document {
			// Changed by this link's own signature, posted from another
			// tab, is a used link, not a changed document.
			again, err := s.OpenLink(ctx, token)
			if err != nil {
				return nil, err
			}
			if again.State != LinkOpen {
				return again, &LinkClosedError{State: again.State}
			}
			page.Draft = sig.document
			return page, ErrDocumentChanged
		}
		done, complete, err := s.sign(wctx, sig, use)
		var closed *LinkClosedError
		switch {
		case errors.As(err, &closed) || errors.Is(err, errLinkSpent):
			// Used, cancelled or expired meanwhile (another tab's post, say):
			// read again to say which, the link's own state first.
			again, err := s.OpenLink(ctx, token)
			if err != nil {
				return nil, err
			}
			if again.State == LinkOpen { // the write said it is not
				again.State = LinkCancelled
				if closed != nil {
					again.State = closed.State
				}
			}
			return again, &LinkClosedError{State: again.State}
		case err != nil:
			return page, err
		case !done && attempt < 3:
			continue
		case !done:
			return page, apperr.Errorf(apperr.Conflict, "inventory %s keeps changing while it is signed: open the link again", sig.InventoryID)
		}
		if complete {
			s.keepPDF(wctx, sig.InventoryID)
		}
		page.State, page.Draft = LinkUsed, sig.document
		return page, nil
	}
}

// linkUse is a signature made from a link: the request it spends and the
// evidence it keeps.
type linkUse struct {
	request  *ent.SignatureRequest
	evidence LinkEvidence
}

// errLinkSpent: the link was used, cancelled or expired between its read
// and the signature's write, which is rolled back.
var errLinkSpent = errors.New("records: the signature link was spent meanwhile")

// check refuses the link's signature on inv, as read for it: the party has
// signed, or the inventory is, or its content changed since the link was
// issued.
func (u *linkUse) check(ctx context.Context, s *Service, inv *ent.Inventory) error {
	if signatureOf(inv, Party(u.request.Party)).date != nil || inv.IsSigned {
		return &LinkClosedError{State: LinkSigned}
	}
	changed, err := s.changedSince(ctx, inv, u.request)
	if err != nil {
		return err
	}
	if changed {
		return &LinkClosedError{State: LinkOutdated}
	}
	return nil
}

// spend marks the link used, with the evidence, in the signature's
// transaction: errLinkSpent when it no longer signs (used by a signature
// committed meanwhile, cancelled, expired), which rolls the signature back.
func (u *linkUse) spend(ctx context.Context, tx *ent.Tx, now time.Time, name string) error {
	ev := u.evidence
	n, err := tx.SignatureRequest.Update().Where(signaturerequest.ID(u.request.ID), signaturerequest.UsedAtIsNil(),
		signaturerequest.CancelledAtIsNil(), signaturerequest.ExpiresAtGT(now)).
		SetUsedAt(now).SetSignedName(name).SetClientAddress(ev.ClientAddress).SetUserAgent(ev.UserAgent).
		SetConsentVersion(ev.ConsentVersion).Save(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return errLinkSpent
	}
	return nil
}

// contentKinds are the events that change what an inventory says (a
// signature changes its version, not its content).
var contentKinds = []recordevent.Kind{recordevent.KindInventoryUpdated, recordevent.KindPhotoAdded,
	recordevent.KindPhotoRemoved, recordevent.KindInventoryCorrected}

// changedSince reports whether inv's content changed since req was issued:
// a change made since then is an event of a later version (updates), or
// one without a version written after it (photos, corrections). The
// signatures of other parties change the version and not the content, so
// a link sent to the tenant still signs once the agent has signed.
func (s *Service) changedSince(ctx context.Context, inv *ent.Inventory, req *ent.SignatureRequest) (bool, error) {
	if inv.Version == req.InventoryVersion {
		return false, nil
	}
	return s.client.RecordEvent.Query().Where(recordevent.InventoryID(inv.ID), recordevent.KindIn(contentKinds...),
		recordevent.Or(recordevent.VersionGT(req.InventoryVersion),
			recordevent.And(recordevent.VersionIsNil(), recordevent.AtGTE(req.CreatedAt)))).Exist(ctx)
}

// linkState is what req can still do for inv.
func (s *Service) linkState(ctx context.Context, req *ent.SignatureRequest, inv *ent.Inventory) (LinkState, error) {
	switch {
	case req.UsedAt != nil:
		return LinkUsed, nil
	case req.CancelledAt != nil:
		return LinkCancelled, nil
	case !time.Now().Before(req.ExpiresAt):
		return LinkExpired, nil
	}
	var closed *LinkClosedError
	if err := (&linkUse{request: req}).check(ctx, s, inv); errors.As(err, &closed) {
		return closed.State, nil
	} else if err != nil {
		return "", err
	}
	return LinkOpen, nil
}

// linkRequest is the request token names, read without a company.
func (s *Service) linkRequest(ctx context.Context, token string) (*ent.SignatureRequest, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != tokenBytes {
		return nil, linkNotFound() // not one the service made: no lookup
	}
	hash := tokenHash(token)
	id := linkID(hash)
	req, err := s.client.SignatureRequest.Get(tenant.UnrestrictedRecord(ctx, "signature link: the request its token names", id), id)
	if ent.IsNotFound(err) {
		return nil, linkNotFound()
	}
	if err != nil {
		return nil, err
	}
	// The id is derived from the hash; the hash itself is what the token proves.
	if subtle.ConstantTimeCompare([]byte(req.TokenHash), []byte(hash)) != 1 {
		return nil, linkNotFound()
	}
	return req, nil
}

func linkNotFound() error {
	return apperr.Errorf(apperr.NotFound, "no such signature link")
}

// tokenHash is the SHA-256 of a token, in hex: what the table keeps.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// linkID is the request's id, derived from its token's hash: the lookup by
// token is a lookup by id, which its audit line names (a hash of a hash:
// nothing to sign with).
func linkID(hash string) uuid.UUID {
	return uuid.NewSHA1(linkNamespace, []byte(hash))
}

// linkNamespace is the namespace of linkID's UUIDs (version 5).
var linkNamespace = uuid.MustParse("3b0f5f8e-61a4-4b8e-9f55-0b4b7c8a1d36")

// checkSigner refuses a party or a signer's name the record cannot take,
// for signInventory and requestSignature alike.
func checkSigner(party Party, name string) error {
	switch {
	case !party.valid():
		return apperr.InvalidField(fieldParty, "%q is not AGENT, OWNER or TENANT", party)
	case name == "":
		return apperr.InvalidField(fieldSignerName, "the signer's name is empty")
	case utf8.RuneCountInString(name) > schema.MaxSignerNameRunes:
		return apperr.InvalidField(fieldSignerName, "the signer's name is %d characters long: at most %d are taken", utf8.RuneCountInString(name), schema.MaxSignerNameRunes)
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return apperr.InvalidField(fieldSignerName, "the signer's name holds a NUL or is not UTF-8")
	}
	return nil
}

// linkParties is stored, the parties who signed from a link, with p added,
// in the order of Parties.
func linkParties(stored string, p Party) string {
	parties := []Party{p}
	for n := range strings.SplitSeq(stored, ",") {
		if n != "" {
			parties = append(parties, Party(n))
		}
	}
	return StoredParties(parties)
}
