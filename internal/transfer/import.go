package transfer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
	"github.com/propertyrecords/inventory/internal/thumbnail"
)

// MaxLine bounds one record, so that a file without newlines cannot exhaust
// memory.
const MaxLine = 16 << 20

// Importer loads records, each inventory in its own transaction.
type Importer struct {
	Client *ent.Client
	// Files stores the PDFs and photos that records name in PdfFile and
	// File; nil refuses records that name files.
	Files *files.Store
	// FilesDir is the folder PdfFile and File are relative to; they cannot
	// reach outside it.
	FilesDir string
	// Rejected, when set, hears of each rejected line as it happens.
	Rejected func(Rejection)
	// Progress, when set, hears how many bytes have been read after each line.
	Progress func(read int64)
}

// Rejection is a line that was not imported, and why.
type Rejection struct {
	Line   int
	Field  string // the record's field, or "" for the line as a whole
	Reason string
}

func (r Rejection) String() string {
	if r.Field == "" {
		return fmt.Sprintf("line %d: %s", r.Line, r.Reason)
	}
	return fmt.Sprintf("line %d: %s: %s", r.Line, r.Field, r.Reason)
}

// Summary closes an import.
type Summary struct {
	// Created and Updated count the lines committed.
	Created, Updated int
	Rejections       []Rejection
	// StoppedAt is the line the run stopped at (see StopError), or 0 when
	// it read its input to the end.
	StoppedAt int
	Elapsed   time.Duration
}

func (s Summary) String() string {
	text := fmt.Sprintf("imported %d inventories (%d created, %d updated), rejected %d, in %s",
		s.Created+s.Updated, s.Created, s.Updated, len(s.Rejections), s.Elapsed.Round(time.Millisecond))
	if s.StoppedAt > 0 {
		text += fmt.Sprintf("; stopped at line %d", s.StoppedAt)
	}
	return text
}

// StopError ends an import that cannot go on: the database does not answer
// (store.Unavailable: down, restarting, or busy past its timeouts), or ctx
// ended. Such a failure is no fault of the line being imported, and would
// fail every line after it too: rejecting them all as bad would hide the one
// thing wrong and leave the operator to sort good lines from bad by hand.
type StopError struct {
	// Line is the line being imported when the run stopped. Nothing of it
	// or of the lines after it was written, except that when InDoubt (its
	// commit got no answer) it may have been.
	Line    int
	InDoubt bool
	Err     error
}

func (e *StopError) Error() string {
	var why string
	switch {
	case errors.Is(e.Err, context.Canceled):
		why = "the import was cancelled"
	case errors.Is(e.Err, context.DeadlineExceeded):
		why = "the import ran past its deadline"
	default:
		detail := e.Err.Error()
		if ae, ok := errors.AsType[*apperr.Error](e.Err); ok && ae.Cause != nil {
			detail = ae.Cause.Error() // the driver's words, which the message is written to hide from API clients
		}
		why = "the database is unavailable (" + detail + ")"
	}
	// Ids are the identity of records, so running the same file again
	// updates the lines already in rather than duplicating them.
	const again = "run the import again: lines already imported are updated in place, not duplicated"
	if e.InDoubt {
		return fmt.Sprintf("import stopped at line %d: %s; line %d's commit got no answer, so it may or may not have been written, and the lines after it were not tried: %s",
			e.Line, why, e.Line, again)
	}
	return fmt.Sprintf("import stopped at line %d: %s; lines from %d on were not imported: %s", e.Line, why, e.Line, again)
}

func (e *StopError) Unwrap() error { return e.Err }

// Import reads records from r, one per line. A bad record is rejected with
// its line, field and reason and nothing of it is written; the good ones go
// in. The error is for what stops the whole run: reading r, or a *StopError
// (ctx ended, or the database did not answer); the summary then counts what
// was done before it.
func (im *Importer) Import(ctx context.Context, r io.Reader) (sum Summary, err error) {
	// Once a run, not once a line: the audit log gets one line per import.
	ctx = tenant.Unrestricted(ctx, "import: writing the records of an import file, each checked against its company")
	started := time.Now()
	defer func() { sum.Elapsed = time.Since(started) }()
	var root *os.Root
	if im.FilesDir != "" {
		var err error
		if root, err = os.OpenRoot(im.FilesDir); err != nil {
			return sum, fmt.Errorf("import: the files folder: %w", err)
		}
		defer root.Close()
	}
	lines := &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
	for n := 1; ; n++ {
		line, tooLong, err := lines.next()
		if errors.Is(err, io.EOF) && len(line) == 0 && !tooLong {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return sum, fmt.Errorf("import: reading line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if err := ctx.Err(); err != nil {
				sum.StoppedAt = n
				return sum, &StopError{Line: n, Err: err}
			}
			created, ferr, stop := im.importLine(ctx, root, line, tooLong)
			switch {
			case stop != nil:
				stop.Line, sum.StoppedAt = n, n
				return sum, stop
			case ferr != nil:
				rej := Rejection{Line: n, Field: ferr.field, Reason: ferr.reason}
				sum.Rejections = append(sum.Rejections, rej)
				if im.Rejected != nil {
					im.Rejected(rej)
				}
			case created:
				sum.Created++
			default:
				sum.Updated++
			}
		}
		if im.Progress != nil {
			im.Progress(lines.read)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return sum, nil
}

// lineReader reads lines of at most MaxLine bytes, skipping the rest of
// longer ones.
type lineReader struct {
	r    *bufio.Reader
	read int64
	buf  []byte
}

func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.read += int64(len(chunk))
		if !tooLong {
			if len(l.buf)+len(chunk) > MaxLine {
				tooLong, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return l.buf, tooLong, err
	}
}

// importLine decodes, checks and writes one record; it reports whether the
// inventory was new, or why the line was rejected, or why the run must stop
// (a StopError without its line number).
func (im *Importer) importLine(ctx context.Context, root *os.Root, line []byte, tooLong bool) (bool, *fieldError, *StopError) {
	if tooLong {
		return false, reject("", "the line is longer than %d MiB", MaxLine>>20), nil
	}
	rec, ferr := decode(line)
	if ferr != nil {
		return false, ferr, nil
	}
	p, ferr := check(rec)
	if ferr != nil {
		return false, ferr, nil
	}
	if ferr := im.readFiles(root, p); ferr != nil {
		return false, ferr, nil
	}
	return im.write(ctx, p)
}

func decode(line []byte) (*Record, *fieldError) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var rec Record
	err := dec.Decode(&rec)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value on the line")
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		return &rec, nil
	case errors.As(err, &typeErr):
		return nil, reject(typeErr.Field, "a JSON %s where %s is expected", typeErr.Value, jsonKind(typeErr.Type.String()))
	case errors.As(err, &syntaxErr):
		return nil, reject("", "not valid JSON (at byte %d): %v", syntaxErr.Offset, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return nil, reject("", "not valid JSON: the line ends inside a value")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return nil, reject(name, "unknown field: docs/import-format.md lists the fields")
	default:
		return nil, reject("", "not a record: %v", err)
	}
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func jsonKind(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "a string"
	case "int":
		return "an integer"
	case "bool":
		return "true or false"
	}
	if strings.HasPrefix(goType, "[]") {
		return "an array"
	}
	return "an object"
}

// readFiles reads the files the record names, checking them against the
// digests it states, before anything is written.
func (im *Importer) readFiles(root *os.Root, p *plan) *fieldError {
	read := func(field, name string, stated *string) ([]byte, *fieldError) {
		if im.Files == nil || root == nil {
			return nil, reject(field, "names a file, but this import stores no files")
		}
		data, err := root.ReadFile(name)
		if err != nil {
			return nil, reject(field, "cannot read %q inside the files folder: %v", name, errors.Unwrap(err))
		}
		if stated != nil && digest(data) != *stated {
			return nil, reject(field, "%q has SHA-256 %s, but the record states %s", name, digest(data), *stated)
		}
		return data, nil
	}
	var ferr *fieldError
	if p.rec.PdfFile != "" {
		if p.pdf, ferr = read("PdfFile", p.rec.PdfFile, p.rec.PdfSha256); ferr != nil {
			return ferr
		}
	}
	for i, env := range p.rec.EnvironmentDiagnostics {
		for j, it := range env.ItemDiagnostic {
			for k, ph := range it.Photo {
				if ph.File == "" {
					continue
				}
				field := fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic[%d].Photo[%d].File", i, j, k)
				if p.envs[i].items[j].photos[k].data, ferr = read(field, ph.File, ph.Sha256); ferr != nil {
					return ferr
				}
			}
		}
	}
	return nil
}

// writeAttempts bounds how often a line that lost a race with another
// writer (raced) is written again.
const writeAttempts = 3

// write stores the record's files, then writes the record in one
// transaction: the inventory ends up exactly as the record says, its
// environments, items and photos replaced. A database failure rejects the
// line, unless it is the database's (store.Unavailable) or ctx's rather than
// the line's: that stops the run.
func (im *Importer) write(ctx context.Context, p *plan) (bool, *fieldError, *StopError) {
	for attempt := 1; ; attempt++ {
		created, atCommit, err := im.writeOnce(ctx, p)
		var fe *fieldError
		switch {
		case err == nil:
			return created, nil, nil
		case ctx.Err() != nil:
			// Whatever the statement failed with (PostgreSQL reports a
			// cancelled statement as its own error), the run ends here.
			return false, nil, &StopError{InDoubt: atCommit, Err: ctx.Err()}
		case attempt < writeAttempts && raced(err):
			continue
		case errors.As(err, &fe):
			return false, fe, nil
		case store.Unavailable(err):
			return false, nil, &StopError{InDoubt: atCommit, Err: err}
		default:
			return false, reject("", "%v", err), nil
		}
	}
}

// writeOnce is one attempt of write, in one transaction. Its error is a
// *fieldError when the line is at fault, or a *dbError; atCommit tells a
// failed commit, after which the line may or may not be in.
func (im *Importer) writeOnce(ctx context.Context, p *plan) (created, atCommit bool, err error) {
	p.propertyExists, p.inventoryExists = false, false // found again: a retry sees what the other writer committed
	tx, err := im.Client.Tx(ctx)
	if err != nil {
		return false, false, &dbError{"the database refused a transaction", err}
	}
	// Ownership first: a record may not overwrite another company's files.
	err = checkOwnership(ctx, tx, p)
	if err == nil {
		err = im.storeFiles(ctx, p)
	}
	if err == nil {
		created, err = writeRecord(ctx, tx, p)
	}
	if err != nil {
		// Always rolled back, even when the database is gone: the
		// transaction holds one of the store's connection slots until then.
		if rerr := tx.Rollback(); rerr != nil {
			if fe, ok := err.(*fieldError); ok {
				fe.reason += fmt.Sprintf(" (rolling back: %v)", rerr)
			}
		}
		return false, false, err
	}
	if err := tx.Commit(); err != nil {
		return false, true, &dbError{"the database refused the record", err}
	}
	return created, false, nil
}

// dbError is a statement of a line's write that failed, and what it was
// for. It rejects the line unless the database itself failed.
type dbError struct {
	what string
	err  error
}

func (e *dbError) Error() string { return e.what + ": " + e.err.Error() }
func (e *dbError) Unwrap() error { return e.err }

// raced reports whether a write failed because another writer (another
// import, the generator, the API) wrote at the same moment, so that writing
// the line again, in a new transaction, sees what it committed: PostgreSQL
// ended the transaction as a deadlock or serialization failure, or refused a
// unique value another transaction had just inserted (a second insert of the
// same new material name waits for the first transaction, then fails; retried,
// the line finds the material). A line that truly repeats another's unique
// value fails again and is rejected, by checkOwnership's clearer message
// where it has one. SQLite runs one writer at a time, so it never races.
func raced(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case "40001", "40P01", "23505": // serialization failure, deadlock, unique violation
			return true
		}
	}
	return false
}

// storeFiles writes the files before the record commits, so that no
// committed record ever names a missing file; a file whose record is then
// refused is never served.
func (im *Importer) storeFiles(ctx context.Context, p *plan) error {
	if p.pdf != nil {
		sum, err := im.Files.Put(ctx, files.PDFKey(p.inventory.String()), p.pdf)
		if err != nil {
			return reject("PdfFile", "storing it: %v", err)
		}
		p.rec.PdfSha256 = &sum
	}
	for i, env := range p.envs {
		for j, it := range env.items {
			for k, ph := range it.photos {
				if ph.data == nil {
					continue
				}
				rec := &p.rec.EnvironmentDiagnostics[i].ItemDiagnostic[j].Photo[k]
				key, err := files.PhotoKey(rec.StorageReference)
				if err == nil {
					var sum string
					if sum, err = im.Files.Put(ctx, key, ph.data); err == nil {
						rec.Sha256 = &sum
						// Its thumbnail now, once, rather than in the first
						// report that shows it; a photo that cannot be shown
						// is still stored (its reports say why).
						_, err = thumbnail.Keep(ctx, im.Files, sum, ph.data)
						if _, notShown := thumbnail.IsNotShown(err); notShown {
							err = nil
						}
					}
				}
				if err != nil {
					return reject(fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic[%d].Photo[%d].File", i, j, k), "storing it: %v", err)
				}
			}
		}
	}
	return nil
}

func writeRecord(ctx context.Context, tx *ent.Tx, p *plan) (bool, error) {
	dbErr := func(what string, err error) error {
		return &dbError{"the database refused the " + what, err}
	}
	if err := upsertProperty(ctx, tx, p); err != nil {
		return false, dbErr("property", err)
	}
	created, err := upsertInventory(ctx, tx, p)
	if err != nil {
		return false, dbErr("inventory", err)
	}
	// The children are replaced: the database cascades to items and photos.
	if _, err := tx.Environment.Delete().Where(environment.InventoryID(p.inventory)).Exec(ctx); err != nil {
		return false, dbErr("environments", err)
	}
	materials, err := ensureMaterials(ctx, tx, p.rec)
	if err != nil {
		return false, dbErr("materials", err)
	}
	var envs []*ent.EnvironmentCreate
	var items []*ent.ItemCreate
	var photos []*ent.PhotoCreate
	for i, e := range p.envs {
		env := p.rec.EnvironmentDiagnostics[i]
		envs = append(envs, tx.Environment.Create().SetID(e.id).SetCompanyID(p.company).SetInventoryID(p.inventory).
			SetName(env.EnvironmentName).SetDescription(env.Description).SetLevel(e.level).SetOrder(e.order))
		for j, ip := range e.items {
			it := env.ItemDiagnostic[j]
			items = append(items, tx.Item.Create().SetID(ip.id).SetCompanyID(p.company).SetEnvironmentID(e.id).
				SetMaterialID(materials[it.Material.MaterialName]).SetName(it.ItemName).SetDescription(it.Description).
				SetRating(*it.Rating).SetNillableOrder(it.Order).SetToRepair(it.ToRepair))
			for k, pp := range ip.photos {
				ph := it.Photo[k]
				photos = append(photos, tx.Photo.Create().SetID(pp.id).SetCompanyID(p.company).SetItemID(ip.id).
					SetStorageReference(ph.StorageReference).SetNillableSha256(ph.Sha256))
			}
		}
	}
	if err := store.SaveInBatches(ctx, envs, func(b []*ent.EnvironmentCreate) error { return tx.Environment.CreateBulk(b...).Exec(ctx) }); err != nil {
		return false, dbErr("environments", err)
	}
	if err := store.SaveInBatches(ctx, items, func(b []*ent.ItemCreate) error { return tx.Item.CreateBulk(b...).Exec(ctx) }); err != nil {
		return false, dbErr("items", err)
	}
	if err := store.SaveInBatches(ctx, photos, func(b []*ent.PhotoCreate) error { return tx.Photo.CreateBulk(b...).Exec(ctx) }); err != nil {
		return false, dbErr("photos", err)
	}
	return created, nil
}

// checkOwnership refuses a record whose ids already belong to another
// company, property or inventory: an import never moves or takes over
// another record. It notes whether the property and inventory exist.
func checkOwnership(ctx context.Context, tx *ent.Tx, p *plan) error {
	prop, err := tx.Property.Get(ctx, p.property)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return &dbError{"reading the property", err}
	case prop.CompanyID != p.company:
		return reject("Property.PropertyId", "%s belongs to another company", p.property)
	default:
		p.propertyExists = true
	}
	inv, err := tx.Inventory.Get(ctx, p.inventory)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return &dbError{"reading the inventory", err}
	case inv.CompanyID != p.company:
		return reject("InventoryId", "%s belongs to another company", p.inventory)
	case inv.PropertyID != p.property:
		return reject("Property.PropertyId", "inventory %s is of property %s: an inventory cannot move to another property", p.inventory, inv.PropertyID)
	default:
		p.inventoryExists = true
	}
	var envIDs, itemIDs, photoIDs []uuid.UUID
	for _, e := range p.envs {
		envIDs = append(envIDs, e.id)
		for _, it := range e.items {
			itemIDs = append(itemIDs, it.id)
			for _, ph := range it.photos {
				photoIDs = append(photoIDs, ph.id)
			}
		}
	}
	elsewhere := environment.InventoryIDNEQ(p.inventory)
	if taken, err := tx.Environment.Query().Where(environment.IDIn(envIDs...), elsewhere).IDs(ctx); err != nil || len(taken) > 0 {
		return takenError("EnvironmentId", taken, err)
	}
	if taken, err := tx.Item.Query().Where(item.IDIn(itemIDs...), item.HasEnvironmentWith(elsewhere)).IDs(ctx); err != nil || len(taken) > 0 {
		return takenError("ItemDiagnosticId", taken, err)
	}
	otherPhotos := photo.HasItemWith(item.HasEnvironmentWith(elsewhere))
	if taken, err := tx.Photo.Query().Where(photo.IDIn(photoIDs...), otherPhotos).IDs(ctx); err != nil || len(taken) > 0 {
		return takenError("PhotoId", taken, err)
	}
	refs := make([]string, 0, len(p.refs))
	for ref := range p.refs {
		refs = append(refs, ref)
	}
	switch taken, err := tx.Photo.Query().Where(photo.StorageReferenceIn(refs...), otherPhotos).First(ctx); {
	case err == nil:
		return reject(p.refs[taken.StorageReference], "%q already names another inventory's photo: a storage reference names one file of the whole store", taken.StorageReference)
	case !ent.IsNotFound(err):
		return &dbError{"checking the storage references", err}
	}
	return nil
}

func takenError(field string, taken []uuid.UUID, err error) error {
	if err != nil {
		return &dbError{"checking the " + field + " values", err}
	}
	return reject(field, "%s is already used by another inventory", taken[0])
}

func upsertProperty(ctx context.Context, tx *ent.Tx, p *plan) error {
	prop := p.rec.Property
	active := prop.IsActive == nil || *prop.IsActive
	if p.propertyExists { // its creation date is immutable: the first import's stands
		up := tx.Property.UpdateOneID(p.property).SetCode(prop.Code).SetAddress(prop.Address).
			SetNeighborhood(prop.Neighborhood).SetCity(prop.City).SetPropertyType(prop.PropertyType).
			SetIsActive(active).SetLevels(p.levels)
		setOrClear(prop.Detail, up.SetDetail, up.ClearDetail)
		return up.Exec(ctx)
	}
	return tx.Property.Create().SetID(p.property).SetCompanyID(p.company).SetCode(prop.Code).
		SetAddress(prop.Address).SetNeighborhood(prop.Neighborhood).SetCity(prop.City).
		SetPropertyType(prop.PropertyType).SetIsActive(active).SetNillableDetail(prop.Detail).
		SetLevels(p.levels).SetCreatedAt(p.propertyCreated).Exec(ctx)
}

func upsertInventory(ctx context.Context, tx *ent.Tx, p *plan) (created bool, err error) {
	rec := p.rec
	if !p.inventoryExists {
		return true, tx.Inventory.Create().SetID(p.inventory).SetCompanyID(p.company).SetPropertyID(p.property).
			SetInventoryType(p.kind).SetRentalPrice(p.price).SetCurrency(rec.Currency).
			SetIsSigned(rec.IsSigned).SetIsRemoteSigned(rec.IsRemoteSigned).SetNillableApprovalCode(rec.ApprovalCode).
			SetCreatedAt(p.created).SetNillableSignatureDate(p.signed).SetNillableAgentSignatureDate(p.agentSigned).
			SetNillableOwnerSignatureDate(p.ownerSig).SetNillablePdfSha256(rec.PdfSha256).
			Exec(ctx)
	}
	up := tx.Inventory.UpdateOneID(p.inventory).
		SetInventoryType(p.kind).SetRentalPrice(p.price).SetCurrency(rec.Currency).
		SetIsSigned(rec.IsSigned).SetIsRemoteSigned(rec.IsRemoteSigned)
	setOrClear(rec.ApprovalCode, up.SetApprovalCode, up.ClearApprovalCode)
	setOrClear(p.signed, up.SetSignatureDate, up.ClearSignatureDate)
	setOrClear(p.agentSigned, up.SetAgentSignatureDate, up.ClearAgentSignatureDate)
	setOrClear(p.ownerSig, up.SetOwnerSignatureDate, up.ClearOwnerSignatureDate)
	setOrClear(rec.PdfSha256, up.SetPdfSha256, up.ClearPdfSha256)
	return false, up.Exec(ctx)
}

// setOrClear sets an optional field on update, or clears it when the record
// leaves it out, so that the stored record ends up as the line says.
func setOrClear[T, R any](v *T, set func(T) R, clear func() R) {
	if v == nil {
		clear()
	} else {
		set(*v)
	}
}

// ensureMaterials returns the id of every material the record names,
// adding the ones the catalogue lacks.
func ensureMaterials(ctx context.Context, tx *ent.Tx, rec *Record) (map[string]uuid.UUID, error) {
	var names []string
	for _, env := range rec.EnvironmentDiagnostics {
		for _, it := range env.ItemDiagnostic {
			names = append(names, it.Material.MaterialName)
		}
	}
	// In one order for every writer: two PostgreSQL transactions inserting
	// the same new names in opposite orders would deadlock.
	slices.Sort(names)
	names = slices.Compact(names)
	existing, err := tx.Material.Query().Where(material.NameIn(names...)).All(ctx)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]uuid.UUID, len(names))
	for _, m := range existing {
		ids[m.Name] = m.ID
	}
	for _, name := range names {
		if _, ok := ids[name]; !ok {
			m, err := tx.Material.Create().SetName(name).Save(ctx)
			if err != nil {
				return nil, err
			}
			ids[name] = m.ID
		}
	}
	return ids, nil
}
