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
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/recordevent"
	"github.com/propertyrecords/inventory/internal/apperr"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/records"
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
	// CorrectSigned lets a line change an inventory that is signed, which
	// is otherwise refused (a signed record is evidence: internal/freeze).
	// Each correction committed is an audit line naming the inventory and
	// the line. A line that states an inventory as it is stored, signed or
	// not, is taken either way, and writes nothing of it.
	CorrectSigned bool
	// Thumbnails, when set, takes the thumbnails of the photos stored off
	// the import: a job per inventory, inserted in its transaction
	// (internal/jobs), makes them in a server; without it each photo is
	// decoded here, as it is stored.
	Thumbnails ThumbnailJobs

	// named are the companies' names committed by this run's lines.
	named map[uuid.UUID]string
}

// ThumbnailJobs inserts, in tx, the job that makes the missing thumbnails
// of an inventory's photos (internal/jobs.Jobs).
type ThumbnailJobs interface {
	Thumbnails(ctx context.Context, tx *ent.Tx, company, inventory uuid.UUID) error
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
	// Created and Updated count the lines committed; Unchanged the lines
	// that stated their inventory and property as they were stored, of
	// which nothing was written (no event, no new version).
	Created, Updated, Unchanged int
	Rejections                  []Rejection
	// StoppedAt is the line the run stopped at (see StopError), or 0 when
	// it read its input to the end.
	StoppedAt int
	Elapsed   time.Duration
}

func (s Summary) String() string {
	text := fmt.Sprintf("imported %d inventories (%d created, %d updated), %d unchanged, rejected %d, in %s",
		s.Created+s.Updated, s.Created, s.Updated, s.Unchanged, len(s.Rejections), s.Elapsed.Round(time.Millisecond))
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
	ctx = records.BulkLoads(ctx)
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
			did, ferr, stop := im.importLine(ctx, root, n, line, tooLong)
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
			case did == created:
				sum.Created++
			case did == unchanged:
				sum.Unchanged++
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

// outcome is what a line committed did.
type outcome int

const (
	created   outcome = iota + 1 // a new inventory
	updated                      // an inventory or its property changed
	unchanged                    // both as stored: nothing written
)

// importLine decodes, checks and writes line n; it reports what the line
// did, or why it was rejected, or why the run must stop (a StopError
// without its line number).
func (im *Importer) importLine(ctx context.Context, root *os.Root, n int, line []byte, tooLong bool) (outcome, *fieldError, *StopError) {
	if tooLong {
		return 0, reject("", "the line is longer than %d MiB", MaxLine>>20), nil
	}
	rec, ferr := decode(line)
	if ferr != nil {
		return 0, ferr, nil
	}
	p, ferr := check(rec)
	if ferr != nil {
		return 0, ferr, nil
	}
	p.line = n
	if ferr := im.readFiles(root, p); ferr != nil {
		return 0, ferr, nil
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
// digests it states, before anything is written. A file's digest is then
// the record's, stated or not, as it will be once the file is stored.
func (im *Importer) readFiles(root *os.Root, p *plan) *fieldError {
	read := func(field, name string, stated *string) ([]byte, *string, *fieldError) {
		if im.Files == nil || root == nil {
			return nil, nil, reject(field, "names a file, but this import stores no files")
		}
		data, err := root.ReadFile(name)
		if err != nil {
			return nil, nil, reject(field, "cannot read %q inside the files folder: %v", name, errors.Unwrap(err))
		}
		sum := digest(data)
		if stated != nil && sum != *stated {
			return nil, nil, reject(field, "%q has SHA-256 %s, but the record states %s", name, sum, *stated)
		}
		return data, &sum, nil
	}
	var ferr *fieldError
	if p.rec.PdfFile != "" {
		if p.pdf, p.tree.Signature.PDFSha256, ferr = read("PdfFile", p.rec.PdfFile, p.rec.PdfSha256); ferr != nil {
			return ferr
		}
	}
	p.photoFiles = map[[3]int][]byte{}
	for i, env := range p.rec.EnvironmentDiagnostics {
		for j, it := range env.ItemDiagnostic {
			for k, ph := range it.Photo {
				if ph.File == "" {
					continue
				}
				field := fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic[%d].Photo[%d].File", i, j, k)
				data, sum, ferr := read(field, ph.File, ph.Sha256)
				if ferr != nil {
					return ferr
				}
				p.photoFiles[[3]int{i, j, k}] = data
				p.tree.Environments[i].Items[j].Photos[k].SHA256 = sum
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
func (im *Importer) write(ctx context.Context, p *plan) (outcome, *fieldError, *StopError) {
	for attempt := 1; ; attempt++ {
		did, atCommit, err := im.writeOnce(ctx, p)
		var fe *fieldError
		switch {
		case err == nil:
			return did, nil, nil
		case ctx.Err() != nil:
			// Whatever the statement failed with (PostgreSQL reports a
			// cancelled statement as its own error), the run ends here.
			return 0, nil, &StopError{InDoubt: atCommit, Err: ctx.Err()}
		case attempt < writeAttempts && raced(err):
			continue
		case errors.As(err, &fe):
			return 0, fe, nil
		case store.Unavailable(err):
			return 0, nil, &StopError{InDoubt: atCommit, Err: err}
		default:
			return 0, reject("", "%v", err), nil
		}
	}
}

// writeOnce is one attempt of write, in one transaction. Its error is a
// *fieldError when the line is at fault, or a *dbError; atCommit tells a
// failed commit, after which the line may or may not be in.
func (im *Importer) writeOnce(ctx context.Context, p *plan) (did outcome, atCommit bool, err error) {
	// Found again: a retry sees what the other writer committed.
	p.propertyExists, p.inventoryExists, p.propertyUnchanged, p.unchanged, p.correcting = false, false, false, false, false
	err = records.InTx(ctx, im.Client, func(tx *ent.Tx) error {
		// Ownership and the signed state first: a record may not overwrite
		// another company's files, nor a signed inventory's.
		if err := im.checkExisting(ctx, tx, p); err != nil {
			return err
		}
		if !p.unchanged {
			if err := im.storeFiles(ctx, p); err != nil {
				return err
			}
		}
		if name := p.rec.CompanyName; name != "" && im.named[p.tree.CompanyID] != name {
			if err := records.NameCompany(ctx, tx.Client(), p.tree.CompanyID, name); err != nil {
				return &dbError{"the database refused the company's name", err}
			}
		}
		wctx := ctx
		if p.correcting {
			wctx = freeze.Correct(ctx, p.tree.ID, fmt.Sprintf("import line %d, with --correct-signed", p.line))
		}
		var err error
		if did, err = writeRecord(wctx, tx, p); err != nil {
			return err
		}
		if im.Thumbnails != nil && !p.unchanged && len(p.photoFiles) > 0 {
			return im.Thumbnails.Thumbnails(ctx, tx, p.prop.CompanyID, p.tree.ID)
		}
		return nil
	})
	var commit *records.CommitError
	var fe *fieldError
	var de *dbError
	switch {
	case err == nil:
		if name := p.rec.CompanyName; name != "" {
			if im.named == nil {
				im.named = map[uuid.UUID]string{}
			}
			im.named[p.tree.CompanyID] = name // committed: later lines naming it alike write nothing
		}
		return did, false, nil
	case errors.As(err, &commit):
		return 0, true, &dbError{"the database refused the record", commit.Err}
	case errors.As(err, &fe), errors.As(err, &de):
		return 0, false, err
	}
	return 0, false, &dbError{"the database refused a transaction", err}
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
		sum, err := im.Files.Put(ctx, files.PDFKey(p.tree.ID.String()), p.pdf)
		if err != nil {
			return reject("PdfFile", "storing it: %v", err)
		}
		p.tree.Signature.PDFSha256 = &sum
	}
	for at, data := range p.photoFiles {
		ph := &p.tree.Environments[at[0]].Items[at[1]].Photos[at[2]]
		key, err := files.PhotoKey(ph.StorageReference)
		if err == nil {
			var sum string
			if sum, err = im.Files.Put(ctx, key, data); err == nil {
				ph.SHA256 = &sum
				// Its thumbnail now, once, rather than in the first
				// report that shows it, unless a job makes it; a photo
				// that cannot be shown is still stored (its reports say
				// why).
				if im.Thumbnails == nil {
					_, err = thumbnail.Keep(ctx, im.Files, sum, data)
					if _, notShown := thumbnail.IsNotShown(err); notShown {
						err = nil
					}
				}
			}
		}
		if err != nil {
			return reject(fmt.Sprintf("EnvironmentDiagnostics[%d].ItemDiagnostic[%d].Photo[%d].File", at[0], at[1], at[2]), "storing it: %v", err)
		}
	}
	return nil
}

// writeRecord writes the line's property, and its inventory with its tree
// replaced, each unless the line states it as it is stored: importing an
// export again writes nothing, so no event tells subscribers and webhooks
// of a change that is none, and no version moves under a client's edit.
func writeRecord(ctx context.Context, tx *ent.Tx, p *plan) (outcome, error) {
	dbErr := func(what string, err error) error {
		return &dbError{"the database refused the " + what, err}
	}
	if !p.propertyUnchanged {
		if err := upsertProperty(ctx, tx, p); err != nil {
			return 0, dbErr("property", err)
		}
	}
	switch {
	case p.unchanged && p.propertyUnchanged:
		return unchanged, nil
	case p.unchanged:
		return updated, nil
	}
	isNew, err := upsertInventory(ctx, tx, p)
	if err != nil {
		return 0, dbErr("inventory", err)
	}
	// The children are replaced: the database cascades to items and photos.
	if _, err := tx.Environment.Delete().Where(environment.InventoryID(p.tree.ID)).Exec(ctx); err != nil {
		return 0, dbErr("environments", err)
	}
	if err := ensureMaterials(ctx, tx, &p.tree); err != nil {
		return 0, dbErr("materials", err)
	}
	var batch records.Batch
	batch.AddTree(tx.Client(), &p.tree)
	if err := batch.Save(ctx, tx.Client()); err != nil {
		var we *records.WriteError
		if errors.As(err, &we) {
			return 0, dbErr(we.What, we.Err)
		}
		return 0, dbErr("tree", err)
	}
	event := records.Event{Kind: recordevent.KindInventoryUpdated, CompanyID: p.tree.CompanyID,
		PropertyID: p.prop.ID, InventoryID: p.tree.ID, Actor: importActor}
	did := updated
	switch {
	case isNew:
		did, event.Kind = created, recordevent.KindInventoryCreated
	case p.correcting:
		event.Kind = recordevent.KindInventoryCorrected
	}
	if err := records.Record(ctx, tx.Client(), event); err != nil {
		return 0, dbErr("event", err)
	}
	return did, nil
}

// importActor names the import as the writer of its events.
const importActor = "inventoryd import"

// checkExisting refuses a record whose ids already belong to another
// company, property or inventory: an import never moves or takes over
// another record. It notes whether the property and inventory exist, and
// whether each is left as it is stored, or a signed inventory corrected.
func (im *Importer) checkExisting(ctx context.Context, tx *ent.Tx, p *plan) error {
	company, invID, propID := p.tree.CompanyID, p.tree.ID, p.prop.ID
	prop, err := tx.Property.Get(ctx, propID)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return &dbError{"reading the property", err}
	case prop.CompanyID != company:
		return reject("Property.PropertyId", "%s belongs to another company", propID)
	default:
		p.propertyExists = true
		p.propertyUnchanged = sameProperty(prop, &p.prop)
	}
	inv, err := tx.Inventory.Get(ctx, invID)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return &dbError{"reading the inventory", err}
	case inv.CompanyID != company:
		return reject("InventoryId", "%s belongs to another company", invID)
	case inv.PropertyID != propID:
		return reject("Property.PropertyId", "inventory %s is of property %s: an inventory cannot move to another property", invID, inv.PropertyID)
	default:
		p.inventoryExists = true
	}
	if p.inventoryExists {
		if err := im.compareStored(ctx, tx, inv, p); err != nil {
			return err
		}
		if p.unchanged {
			return nil // its ids and storage references are its own, as stored
		}
	}
	var envIDs, itemIDs, photoIDs []uuid.UUID
	for _, e := range p.tree.Environments {
		envIDs = append(envIDs, e.ID)
		for _, it := range e.Items {
			itemIDs = append(itemIDs, it.ID)
			for _, ph := range it.Photos {
				photoIDs = append(photoIDs, ph.ID)
			}
		}
	}
	elsewhere := environment.InventoryIDNEQ(invID)
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

// compareStored decides what becomes of a line whose inventory is stored
// (inv): stated as it is stored, it is taken and nothing of it written
// (running a file again after a stop, or a second import of one export,
// neither fails on what went in nor tells anyone of a change that is none);
// changed, it is written, unless the inventory is signed: then it is
// refused, unless the import was told to correct signed inventories.
// Decided before any file is stored: a refused correction must not replace
// the signed PDF or a photo either.
func (im *Importer) compareStored(ctx context.Context, tx *ent.Tx, inv *ent.Inventory, p *plan) error {
	stored, err := tx.Inventory.Query().Where(inventory.ID(p.tree.ID)).
		WithEnvironments(func(q *ent.EnvironmentQuery) {
			q.WithItems(func(q *ent.ItemQuery) { q.WithMaterial().WithPhotos() })
		}).Only(ctx)
	if err != nil {
		return &dbError{"reading the stored inventory", err}
	}
	switch {
	case records.SameRecord(records.FromEnt(stored), &p.tree):
		p.unchanged = true
	case !inv.IsSigned:
	case im.CorrectSigned:
		p.correcting = true
	default:
		return reject("InventoryId", "inventory %s is signed and this line changes it: a signed record is evidence; record the new state as a new inventory, or import with --correct-signed to correct this one (audited)", p.tree.ID)
	}
	return nil
}

// sameProperty reports whether the stored property is as the line states
// it, in everything an import writes of it (its creation date is the first
// import's and never changes).
func sameProperty(stored *ent.Property, line *records.Property) bool {
	return stored.Code == line.Code && stored.Address == line.Address && stored.Neighborhood == line.Neighborhood &&
		stored.City == line.City && stored.PropertyType == line.PropertyType && stored.IsActive == line.IsActive &&
		stored.Levels == line.Levels && (stored.Detail == nil) == (line.Detail == nil) &&
		(stored.Detail == nil || *stored.Detail == *line.Detail)
}

func takenError(field string, taken []uuid.UUID, err error) error {
	if err != nil {
		return &dbError{"checking the " + field + " values", err}
	}
	return reject(field, "%s is already used by another inventory", taken[0])
}

func upsertProperty(ctx context.Context, tx *ent.Tx, p *plan) error {
	prop := &p.prop
	if p.propertyExists { // its creation date is immutable: the first import's stands
		up := tx.Property.UpdateOneID(prop.ID).SetCode(prop.Code).SetAddress(prop.Address).
			SetNeighborhood(prop.Neighborhood).SetCity(prop.City).SetPropertyType(prop.PropertyType).
			SetIsActive(prop.IsActive).SetLevels(prop.Levels)
		setOrClear(prop.Detail, up.SetDetail, up.ClearDetail)
		return up.Exec(ctx)
	}
	return tx.Property.Create().SetID(prop.ID).SetCompanyID(prop.CompanyID).SetCode(prop.Code).
		SetAddress(prop.Address).SetNeighborhood(prop.Neighborhood).SetCity(prop.City).
		SetPropertyType(prop.PropertyType).SetIsActive(prop.IsActive).SetNillableDetail(prop.Detail).
		SetLevels(prop.Levels).SetCreatedAt(prop.CreatedAt).Exec(ctx)
}

func upsertInventory(ctx context.Context, tx *ent.Tx, p *plan) (created bool, err error) {
	t, s := &p.tree, &p.tree.Signature
	if !p.inventoryExists {
		return true, records.NewInventory(tx.Client(), t).Exec(ctx)
	}
	up := tx.Inventory.UpdateOneID(t.ID).
		SetInventoryType(t.Type).SetRentalPrice(t.RentalPrice).SetCurrency(t.Currency).
		SetIsSigned(s.Signed).SetIsRemoteSigned(s.Remote)
	setOrClear(t.Deposit, up.SetDeposit, up.ClearDeposit)
	setOrClear(s.ApprovalCode, up.SetApprovalCode, up.ClearApprovalCode)
	setOrClear(s.Date, up.SetSignatureDate, up.ClearSignatureDate)
	setOrClear(s.Agent, up.SetAgentSignatureDate, up.ClearAgentSignatureDate)
	setOrClear(s.Owner, up.SetOwnerSignatureDate, up.ClearOwnerSignatureDate)
	setOrClear(s.Tenant, up.SetTenantSignatureDate, up.ClearTenantSignatureDate)
	up.SetRequiredSignatures(records.StoredParties(t.RequiredSignatures))
	setOrClear(s.PDFSha256, up.SetPdfSha256, up.ClearPdfSha256)
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

// ensureMaterials gives every item of tree the id of the material it names,
// adding the ones the catalogue lacks.
func ensureMaterials(ctx context.Context, tx *ent.Tx, tree *records.Inventory) error {
	var names []string
	for _, env := range tree.Environments {
		for _, it := range env.Items {
			names = append(names, it.MaterialName)
		}
	}
	// In one order for every writer: two PostgreSQL transactions inserting
	// the same new names in opposite orders would deadlock.
	slices.Sort(names)
	names = slices.Compact(names)
	existing, err := tx.Material.Query().Where(material.NameIn(names...)).All(ctx)
	if err != nil {
		return err
	}
	ids := make(map[string]uuid.UUID, len(names))
	for _, m := range existing {
		ids[m.Name] = m.ID
	}
	for _, name := range names {
		if _, ok := ids[name]; !ok {
			m, err := tx.Material.Create().SetName(name).Save(ctx)
			if err != nil {
				return err
			}
			ids[name] = m.ID
		}
	}
	for i := range tree.Environments {
		for j := range tree.Environments[i].Items {
			it := &tree.Environments[i].Items[j]
			it.MaterialID = ids[it.MaterialName]
		}
	}
	return nil
}
