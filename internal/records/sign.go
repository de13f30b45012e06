package records

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Party is who signs: the spec's two signature dates.
type Party string

const (
	Agent Party = "AGENT"
	Owner Party = "OWNER"
)

// Signing is one party's signature, as signInventory states it.
type Signing struct {
	InventoryID uuid.UUID
	Party       Party
	SignerName  string
	Remote      bool
	// ExpectedVersion, when set, is the version the signer read: a change
	// made since is CONFLICT, so no one signs what they did not see.
	ExpectedVersion *int
}

// The fields a signature is refused on, in signInventory's input.
const (
	fieldInventoryID     = "inventoryId"
	fieldParty           = "party"
	fieldSignerName      = "signerName"
	fieldExpectedVersion = "expectedVersion"
)

// PDFMaker makes the PDF of an inventory just signed, in the background
// (internal/signedpdf.Renderings): Ready waits for it as long as ctx lets.
type PDFMaker interface {
	Ready(ctx context.Context, id uuid.UUID) error
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
	switch {
	case sig.Party != Agent && sig.Party != Owner:
		return uuid.Nil, apperr.InvalidField(fieldParty, "%q is not AGENT or OWNER", sig.Party)
	case sig.SignerName == "":
		return uuid.Nil, apperr.InvalidField(fieldSignerName, "the signer's name is empty")
	case utf8.RuneCountInString(sig.SignerName) > schema.MaxSignerNameRunes:
		return uuid.Nil, apperr.InvalidField(fieldSignerName, "the signer's name is %d characters long: at most %d are taken", utf8.RuneCountInString(sig.SignerName), schema.MaxSignerNameRunes)
	case !utf8.ValidString(sig.SignerName) || strings.ContainsRune(sig.SignerName, 0):
		return uuid.Nil, apperr.InvalidField(fieldSignerName, "the signer's name holds a NUL or is not UTF-8")
	}
	// Twice at most: the write is conditional on the version read, so a
	// signature of the other party committed meanwhile is seen on the
	// second read (and completes the inventory), never overwritten.
	for attempt := 1; ; attempt++ {
		done, complete, err := s.sign(ctx, sig)
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
// signature made the inventory signed.
func (s *Service) sign(ctx context.Context, sig Signing) (done, complete bool, err error) {
	inv, err := s.client.Inventory.Query().Where(inventory.ID(sig.InventoryID)).Only(ctx)
	if ent.IsNotFound(err) {
		return false, false, &apperr.Error{Code: apperr.NotFound, Field: fieldInventoryID, Message: fmt.Sprintf("inventory %s not found", sig.InventoryID)}
	}
	if err != nil {
		return false, false, err
	}
	mine, theirs := signatureOf(inv, sig.Party), signatureOf(inv, other(sig.Party))
	if mine.date != nil {
		if mine.name != nil && *mine.name == sig.SignerName && mine.remote == sig.Remote {
			return true, false, nil // the same signature again: a retry
		}
		return false, false, &apperr.Error{Code: apperr.Conflict, Field: fieldParty,
			Message: fmt.Sprintf("inventory %s is already signed by the %s (%s): each party signs once", inv.ID, strings.ToLower(string(sig.Party)), orUnknown(mine.name))}
	}
	if inv.IsSigned { // signed by import without this party's date: frozen all the same
		return false, false, &apperr.Error{Code: apperr.Conflict, Field: fieldInventoryID,
			Message: fmt.Sprintf("inventory %s is signed: it cannot change (the signed record is evidence); make a new inventory to record another state", inv.ID)}
	}
	if sig.ExpectedVersion != nil && *sig.ExpectedVersion != inv.Version {
		return false, false, stale(inv.ID, *sig.ExpectedVersion)
	}
	now := time.Now().UTC()
	complete = theirs.date != nil
	var code string
	if complete {
		if code, err = approvalCode(); err != nil {
			return false, false, err
		}
	}
	event := Event{Kind: recordevent.KindAgentSigned, CompanyID: inv.CompanyID, PropertyID: inv.PropertyID,
		InventoryID: inv.ID, Version: inv.Version + 1}
	if sig.Party == Owner {
		event.Kind = recordevent.KindOwnerSigned
	}
	// The freeze hook checks the inventory unsigned and (on PostgreSQL)
	// locks it until the transaction ends; the events commit with it.
	n := 0
	err = InTx(ctx, s.client, func(tx *ent.Tx) error {
		up := tx.Inventory.Update().Where(inventory.ID(inv.ID), inventory.Version(inv.Version))
		if sig.Party == Agent {
			up.SetAgentSignatureDate(now).SetAgentSignerName(sig.SignerName).SetAgentSignedRemotely(sig.Remote)
		} else {
			up.SetOwnerSignatureDate(now).SetOwnerSignerName(sig.SignerName).SetOwnerSignedRemotely(sig.Remote)
		}
		if complete {
			// The later of the two dates: this one, unless the clocks of
			// two servers disagree.
			up.SetIsSigned(true).SetSignatureDate(later(now, theirs.date.UTC())).SetApprovalCode(code).
				SetIsRemoteSigned(sig.Remote || theirs.remote)
		}
		var err error
		if n, err = up.Save(ctx); err != nil || n == 0 {
			return err
		}
		if err := Record(ctx, tx.Client(), event); err != nil || !complete {
			return err
		}
		event.Kind = recordevent.KindFullySigned
		return Record(ctx, tx.Client(), event)
	})
	if err != nil || n == 0 {
		return false, false, err
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "records: inventory signed", tenant.CallerAttrs(ctx, []slog.Attr{
		slog.String("company", inv.CompanyID.String()), slog.String("inventory", inv.ID.String()),
		slog.String("property", inv.PropertyID.String()), slog.String("party", string(sig.Party)),
		slog.Bool("remote", sig.Remote), slog.Bool("complete", complete), slog.Int("version", inv.Version+1)})...)
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

type partySignature struct {
	date   *time.Time
	name   *string
	remote bool
}

func signatureOf(inv *ent.Inventory, p Party) partySignature {
	if p == Agent {
		return partySignature{inv.AgentSignatureDate, inv.AgentSignerName, inv.AgentSignedRemotely}
	}
	return partySignature{inv.OwnerSignatureDate, inv.OwnerSignerName, inv.OwnerSignedRemotely}
}

func other(p Party) Party {
	if p == Agent {
		return Owner
	}
	return Agent
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
	if !ok || (Party(s) != Agent && Party(s) != Owner) {
		return fmt.Errorf("%v is not a SignatureParty: AGENT or OWNER", v)
	}
	*p = Party(s)
	return nil
}

// MarshalGQL writes the SignatureParty enum.
func (p Party) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(p))) }
