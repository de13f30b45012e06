package records

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/drawing"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Party is who signs: the spec's two signature dates, and the tenant's.
type Party string

const (
	Agent  Party = "AGENT"
	Owner  Party = "OWNER"
	Tenant Party = "TENANT"
)

// Parties are the parties, in the order an inventory lists them.
var Parties = []Party{Agent, Owner, Tenant}

func (p Party) valid() bool { return p == Agent || p == Owner || p == Tenant }

// word is the party in a sentence.
func (p Party) word() string { return strings.ToLower(string(p)) }

// Signing is one party's signature, as signInventory states it.
type Signing struct {
	InventoryID uuid.UUID
	Party       Party
	SignerName  string
	Remote      bool
	// ExpectedVersion, when set, is the version the signer read: a change
	// made since is CONFLICT, so no one signs what they did not see.
	ExpectedVersion *int
	// Drawing is the signature the signer drew, as internal/drawing writes
	// it; "" when none was drawn.
	Drawing string

	// drawn is Drawing read; document the draft signed (Drafts), whose
	// version the signature's write must find.
	drawn    drawing.Drawing
	document *Draft
}

// The fields a signature is refused on, in signInventory's input.
const (
	fieldInventoryID     = "inventoryId"
	fieldParty           = "party"
	fieldSignerName      = "signerName"
	fieldExpectedVersion = "expectedVersion"
	fieldDrawing         = "drawing"
)

// Drafts render an inventory's PDF as it stands, unsigned or signed by
// some of its parties (internal/signedpdf.Drafts): the document a party
// signs, whose SHA-256 the signature keeps and the signed PDF's
// certificate states.
type Drafts interface {
	Draft(ctx context.Context, id uuid.UUID) (*Draft, error)
}

// Draft is an inventory's PDF before its last signature.
type Draft struct {
	// Version is the inventory's version the PDF shows.
	Version int
	SHA256  string
	PDF     []byte
	// Document is what the PDF shows, for a link's page to show it alike.
	Document report.Inventory
}

// WithDrafts has the service keep the SHA-256 of the draft each party
// signs, rendered by drafts.
func (s *Service) WithDrafts(drafts Drafts) *Service {
	s.drafts = drafts
	return s
}

// draftOf renders the draft of sig's inventory, for sig to keep; none
// without Drafts. An inventory ctx cannot read is sign's to say.
func (s *Service) draftOf(ctx context.Context, sig *Signing) error {
	sig.document = nil
	if s.drafts == nil {
		return nil
	}
	d, err := s.drafts.Draft(ctx, sig.InventoryID)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	sig.document = d
	return nil
}

// readDrawing reads sig's drawing, refusing one that is not a drawing.
func readDrawing(sig *Signing) error {
	d, err := drawing.Parse(sig.Drawing)
	if err != nil {
		return &apperr.Error{Code: apperr.Invalid, Field: fieldDrawing, Message: err.Error()}
	}
	sig.drawn = d
	return nil
}

// PDFMaker makes the PDF of an inventory just signed, in the background
// (internal/signedpdf.Renderings): Ready waits for it as long as ctx lets.
type PDFMaker interface {
	Ready(ctx context.Context, id uuid.UUID) error
}

// Jobs inserts the durable jobs a write causes in the write's own
// transaction (internal/jobs): the signed PDF's after the last signature,
// which a crash cannot lose as it could the background rendering alone.
type Jobs interface {
	SignedPDF(ctx context.Context, tx *ent.Tx, company, inventoryID uuid.UUID) error
}

// WithJobs has s insert the jobs its writes cause through jobs (nil: none,
// and the signed PDF is made by the background rendering alone, or at its
// first download after a crash).
func (s *Service) WithJobs(jobs Jobs) *Service {
	s.jobs = jobs
	return s
}

// signatureWait is the most a signature waits for its inventory's PDF
// before it answers without it: the rendering goes on in the background,
// and A2 serves the PDF once it is kept.
const signatureWait = 5 * time.Second

// Sign records one party's signature on an unsigned inventory of the
// caller's company. The second makes the inventory signed: signature date
// (the later of the two), approval code, remote when either signed remotely;
// from then on the freeze hooks refuse every change. Each party signs once:
// the same signature sent again (a retry) answers the inventory and writes
// nothing, another one is CONFLICT. After the second signature commits the
// PDF is made in the background (keepPDF), which the answer names when it
// is ready in time; the inventory is signed all the same when it is not.
func (s *Service) Sign(ctx context.Context, sig Signing) (uuid.UUID, error) {
	ctx, err := s.forWriting(ctx)
	if err != nil {
		return uuid.Nil, err
	}
	sig.SignerName = strings.TrimSpace(sig.SignerName)
	if err := checkSigner(sig.Party, sig.SignerName); err != nil {
		return uuid.Nil, err
	}
	if err := readDrawing(&sig); err != nil {
		return uuid.Nil, err
	}
	// Twice at most: the write is conditional on the version read, so a
	// signature of the other party committed meanwhile is seen on the
	// second read (and completes the inventory), never overwritten; the
	// draft signed is rendered again for it.
	for attempt := 1; ; attempt++ {
		if err := s.draftOf(ctx, &sig); err != nil {
			return uuid.Nil, err
		}
		done, complete, err := s.sign(ctx, sig, nil)
		switch {
		case err != nil:
			return uuid.Nil, err
		case !done && attempt < 3:
			continue
		case !done:
			return uuid.Nil, apperr.Errorf(apperr.Conflict, "inventory %s keeps changing while it is signed: read it again and sign anew", sig.InventoryID)
		}
		if complete {
			s.keepPDF(ctx, sig.InventoryID)
		}
		return sig.InventoryID, nil
	}
}

// sign writes sig if the inventory read is still as read; done is false
// when it changed meanwhile (nothing written), complete when this
// signature made the inventory signed. A signature from a link (link not
// nil) also spends the link, in the same transaction: the signature and
// the link's evidence commit together or not at all.
func (s *Service) sign(ctx context.Context, sig Signing, link *linkUse) (done, complete bool, err error) {
	inv, err := s.client.Inventory.Query().Where(inventory.ID(sig.InventoryID)).Only(ctx)
	if ent.IsNotFound(err) {
		return false, false, &apperr.Error{Code: apperr.NotFound, Field: fieldInventoryID, Message: fmt.Sprintf("inventory %s not found", sig.InventoryID)}
	}
	if err != nil {
		return false, false, err
	}
	if link != nil {
		// Never a retry: a link signs once, and not for a party who has.
		if err := link.check(ctx, s, inv); err != nil {
			return false, false, err
		}
	}
	mine := signatureOf(inv, sig.Party)
	if mine.date != nil {
		if mine.name != nil && *mine.name == sig.SignerName && mine.remote == sig.Remote {
			return true, false, nil // the same signature again: a retry
		}
		return false, false, &apperr.Error{Code: apperr.Conflict, Field: fieldParty,
			Message: fmt.Sprintf("inventory %s is already signed by the %s (%s): each party signs once", inv.ID, sig.Party.word(), orUnknown(mine.name))}
	}
	if inv.IsSigned { // signed by import without this party's date: frozen all the same
		return false, false, &apperr.Error{Code: apperr.Conflict, Field: fieldInventoryID,
			Message: fmt.Sprintf("inventory %s is signed: it cannot change (the signed record is evidence); make a new inventory to record another state", inv.ID)}
	}
	if sig.ExpectedVersion != nil && *sig.ExpectedVersion != inv.Version {
		return false, false, stale(inv.ID, *sig.ExpectedVersion)
	}
	if sig.document != nil && sig.document.Version != inv.Version {
		return false, false, nil // changed since its draft was rendered: again
	}
	now := time.Now().UTC()
	// Complete when this signature is the last a required party owed: the
	// date is the latest of theirs, and it is remote when any was.
	complete = slices.Contains(RequiredSignatures(inv), sig.Party)
	signedAt, remote := now, sig.Remote
	for _, p := range RequiredSignatures(inv) {
		if p == sig.Party {
			continue
		}
		theirs := signatureOf(inv, p)
		if theirs.date == nil {
			complete = false
			break
		}
		// The latest: this one, unless the clocks of two servers disagree.
		signedAt, remote = later(signedAt, theirs.date.UTC()), remote || theirs.remote
	}
	var code string
	if complete {
		if code, err = approvalCode(); err != nil {
			return false, false, err
		}
	}
	event := Event{Kind: recordevent.KindAgentSigned, CompanyID: inv.CompanyID, PropertyID: inv.PropertyID,
		InventoryID: inv.ID, Version: inv.Version + 1}
	switch sig.Party {
	case Owner:
		event.Kind = recordevent.KindOwnerSigned
	case Tenant:
		event.Kind = recordevent.KindTenantSigned
	}
	credential := tenant.CallerName(ctx)
	if link != nil { // whatever the request carried: the link is the credential
		event.Actor, credential = linkActor, ""
	}
	// The freeze hook checks the inventory unsigned and (on PostgreSQL)
	// locks it until the transaction ends; the events commit with it.
	n := 0
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		up := tx.Inventory.Update().Where(inventory.ID(inv.ID), inventory.Version(inv.Version))
		switch sig.Party {
		case Agent:
			up.SetAgentSignatureDate(now).SetAgentSignerName(sig.SignerName).SetAgentSignedRemotely(sig.Remote)
			setIfNamed(credential, up.SetAgentSignedWith)
		case Owner:
			up.SetOwnerSignatureDate(now).SetOwnerSignerName(sig.SignerName).SetOwnerSignedRemotely(sig.Remote)
			setIfNamed(credential, up.SetOwnerSignedWith)
		case Tenant:
			up.SetTenantSignatureDate(now).SetTenantSignerName(sig.SignerName).SetTenantSignedRemotely(sig.Remote)
			setIfNamed(credential, up.SetTenantSignedWith)
		}
		if link != nil {
			up.SetSignedByLink(linkParties(inv.SignedByLink, sig.Party))
		}
		sig.keepEvidence(up)
		if complete {
			up.SetIsSigned(true).SetSignatureDate(signedAt).SetApprovalCode(code).SetIsRemoteSigned(remote)
		}
		var err error
		if n, err = up.Save(ctx); err != nil || n == 0 {
			return err
		}
		if link != nil {
			if err := link.spend(ctx, tx, now, sig.SignerName); err != nil {
				return err
			}
		}
		if err := Record(ctx, tx.Client(), event); err != nil || !complete {
			return err
		}
		event.Kind = recordevent.KindFullySigned
		if err := Record(ctx, tx.Client(), event); err != nil {
			return err
		}
		// The PDF's job commits with the signature that makes it due: a
		// crash after the commit leaves the job, which some instance works.
		if s.jobs != nil {
			return s.jobs.SignedPDF(ctx, tx, inv.CompanyID, inv.ID)
		}
		return nil
	})
	if err != nil || n == 0 {
		return false, false, err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "records: inventory signed", tenant.CallerAttrs(ctx, []slog.Attr{
		slog.String("company", inv.CompanyID.String()), slog.String("inventory", inv.ID.String()),
		slog.String("property", inv.PropertyID.String()), slog.String("party", string(sig.Party)),
		slog.Bool("remote", sig.Remote), slog.Bool("link", link != nil), slog.Bool("complete", complete), slog.Int("version", inv.Version+1)})...)
	return true, complete, nil
}

// keepPDF has the PDF of the inventory just signed made in the background,
// and waits for it a while (signatureWait, and at most half of what is left
// of the request's time), so that the answer names it when it is ready: a
// signature never fails, nor runs out of its deadline, for its PDF.
func (s *Service) keepPDF(ctx context.Context, id uuid.UUID) {
	if s.pdfs == nil {
		return
	}
	wait := signatureWait
	if deadline, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(deadline)/2)
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := s.pdfs.Ready(ctx, id); err != nil {
		s.log.LogAttrs(ctx, slog.LevelInfo, "records: the signed PDF is not ready yet; it is made in the background",
			slog.String("inventory", id.String()), slog.String("reason", err.Error()))
	}
}

// keepEvidence sets what the party signed and drew on up.
func (sig Signing) keepEvidence(up *ent.InventoryUpdate) {
	var document, drawn *string
	if sig.document != nil {
		document = &sig.document.SHA256
	}
	if !sig.drawn.Empty() {
		text := sig.drawn.String()
		drawn = &text
	}
	switch sig.Party {
	case Agent:
		up.SetNillableAgentSignedDocument(document).SetNillableAgentSignatureDrawing(drawn)
	case Owner:
		up.SetNillableOwnerSignedDocument(document).SetNillableOwnerSignatureDrawing(drawn)
	case Tenant:
		up.SetNillableTenantSignedDocument(document).SetNillableTenantSignatureDrawing(drawn)
	}
}

type partySignature struct {
	date       *time.Time
	name       *string
	remote     bool
	credential *string
	document   *string
	drawing    *string
}

func signatureOf(inv *ent.Inventory, p Party) partySignature {
	switch p {
	case Agent:
		return partySignature{inv.AgentSignatureDate, inv.AgentSignerName, inv.AgentSignedRemotely, inv.AgentSignedWith,
			inv.AgentSignedDocument, inv.AgentSignatureDrawing}
	case Owner:
		return partySignature{inv.OwnerSignatureDate, inv.OwnerSignerName, inv.OwnerSignedRemotely, inv.OwnerSignedWith,
			inv.OwnerSignedDocument, inv.OwnerSignatureDrawing}
	}
	return partySignature{inv.TenantSignatureDate, inv.TenantSignerName, inv.TenantSignedRemotely, inv.TenantSignedWith,
		inv.TenantSignedDocument, inv.TenantSignatureDrawing}
}

// anySigned reports whether a party has signed inv: its content is then
// held as they signed it until every required party has.
func anySigned(inv *ent.Inventory) bool {
	return inv.AgentSignatureDate != nil || inv.OwnerSignatureDate != nil || inv.TenantSignatureDate != nil
}

// RequiredSignatures are the parties whose signatures make inv signed.
func RequiredSignatures(inv *ent.Inventory) []Party {
	names := strings.Split(inv.RequiredSignatures, ",")
	parties := make([]Party, 0, len(names))
	for _, n := range names {
		parties = append(parties, Party(n))
	}
	return parties
}

// StoredParties is parties as the inventory's row keeps them: in the order
// of Parties; the default (schema.DefaultRequiredSignatures) when none.
func StoredParties(parties []Party) string {
	if len(parties) == 0 {
		return schema.DefaultRequiredSignatures
	}
	var names []string
	for _, p := range Parties {
		if slices.Contains(parties, p) {
			names = append(names, string(p))
		}
	}
	return strings.Join(names, ",")
}

// SignatureMethod is how a party signed.
type SignatureMethod string

const (
	// ByCredential: through the API, with a credential.
	ByCredential SignatureMethod = "CREDENTIAL"
	// Imported: recorded by an import, which says when and not how.
	Imported SignatureMethod = "IMPORTED"
	// ByLink: from a link sent to the party (requestSignature).
	ByLink SignatureMethod = "LINK"
)

// MarshalGQL writes the SignatureMethod enum.
func (m SignatureMethod) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(m))) }

// UnmarshalGQL reads the SignatureMethod enum.
func (m *SignatureMethod) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok || (SignatureMethod(s) != ByCredential && SignatureMethod(s) != Imported && SignatureMethod(s) != ByLink) {
		return apperr.Errorf(apperr.Invalid, "%v is not a SignatureMethod: CREDENTIAL, IMPORTED or LINK", v)
	}
	*m = SignatureMethod(s)
	return nil
}

// PartySignature is one party's signature of an inventory, as GraphQL's
// Inventory.signatures lists it.
type PartySignature struct {
	Party          Party
	SignerName     *string
	SignedAt       time.Time
	Remote         bool
	Method         SignatureMethod
	CredentialName *string
	// Document is the SHA-256 of the PDF the party signed (Drafts); nil for
	// an imported signature and those made before it was kept.
	DocumentSHA256 *string
	// Drawn says whether the party drew their signature.
	Drawn bool
}

// Signatures are the signatures of inv so far, in the order of Parties.
// One the API recorded names its signer; an imported one names none; one
// made from a link is in signed_by_link.
func Signatures(inv *ent.Inventory) []*PartySignature {
	out := []*PartySignature{}
	for _, p := range Parties {
		s := signatureOf(inv, p)
		if s.date == nil {
			continue
		}
		method := ByCredential
		switch {
		case s.name == nil:
			method = Imported
		case slices.Contains(strings.Split(inv.SignedByLink, ","), string(p)):
			method = ByLink
		}
		out = append(out, &PartySignature{Party: p, SignerName: s.name, SignedAt: s.date.UTC(), Remote: s.remote, Method: method,
			CredentialName: s.credential, DocumentSHA256: s.document, Drawn: s.drawing != nil})
	}
	return out
}

// SignedIn is the party whose signature an event of kind records
// (AGENT_SIGNED, OWNER_SIGNED, TENANT_SIGNED); false for other kinds.
func SignedIn(kind recordevent.Kind) (Party, bool) {
	switch kind {
	case recordevent.KindAgentSigned:
		return Agent, true
	case recordevent.KindOwnerSigned:
		return Owner, true
	case recordevent.KindTenantSigned:
		return Tenant, true
	}
	return "", false
}

// SignatureOf is party's signature of inv, as Signatures lists it; nil
// while the party has not signed. A party signs once, so it is the
// signature its event told of, remote or not from the moment it was made.
func SignatureOf(inv *ent.Inventory, party Party) *PartySignature {
	for _, s := range Signatures(inv) {
		if s.Party == party {
			return s
		}
	}
	return nil
}

// setIfNamed sets a credential's name where the caller has one.
func setIfNamed(name string, set func(string) *ent.InventoryUpdate) {
	if name != "" {
		set(truncate(name, schema.MaxSignerNameRunes))
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func orUnknown(name *string) string {
	if name == nil {
		return "signer not recorded"
	}
	return *name
}

// approvalCode is a signed inventory's code, in the form of the records
// imported ("APR-" and six digits): it is read out over the phone and typed
// in, not a secret, and not unique by itself (the inventory id is).
func approvalCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("APR-%06d", n.Int64()), nil
}

// UnmarshalGQL reads the SignatureParty enum.
func (p *Party) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok || !Party(s).valid() {
		return apperr.Errorf(apperr.Invalid, "%v is not a SignatureParty: AGENT, OWNER or TENANT", v)
	}
	*p = Party(s)
	return nil
}

// MarshalGQL writes the SignatureParty enum.
func (p Party) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(p))) }
