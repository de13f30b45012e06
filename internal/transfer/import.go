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
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
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
	Created, Updated int
	Rejections       []Rejection
	Elapsed          time.Duration
}

func (s Summary) String() string {
	return fmt.Sprintf("imported %d inventories (%d created, %d updated), rejected %d, in %s",
		s.Created+s.Updated, s.Created, s.Updated, len(s.Rejections), s.Elapsed.Round(time.Millisecond))
}

// Import reads records from r, one per line. A bad record is rejected with
// its line, field and reason and nothing of it is written; the good ones go
// in. The error is for what stops the whole run: reading r, or ctx.
func (im *Importer) Import(ctx context.Context, r io.Reader) (Summary, error) {
	// Once a run, not once a line: the audit log gets one line per import.
	ctx = tenant.Unrestricted(ctx, "import: writing the records of an import file, each checked against its company")
	started := time.Now()
	var sum Summary
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
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		line, tooLong, err := lines.next()
		if errors.Is(err, io.EOF) && len(line) == 0 && !tooLong {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return sum, fmt.Errorf("import: reading line %d: %w", n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			created, ferr := im.importLine(ctx, root, line, tooLong)
			switch {
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
	sum.Elapsed = time.Since(started)
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
// inventory was new.
func (im *Importer) importLine(ctx context.Context, root *os.Root, line []byte, tooLong bool) (bool, *fieldError) {
	if tooLong {
		return false, reject("", "the line is longer than %d MiB", MaxLine>>20)
	}
	rec, ferr := decode(line)
	if ferr != nil {
		return false, ferr
	}
	p, ferr := check(rec)
	if ferr != nil {
		return false, ferr
	}
	if ferr := im.readFiles(root, p); ferr != nil {
		return false, ferr
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

// write stores the record's files, then writes the record in one
// transaction: the inventory ends up exactly as the record says, its
// environments, items and photos replaced.
func (im *Importer) write(ctx context.Context, p *plan) (created bool, ferr *fieldError) {
	tx, err := im.Client.Tx(ctx)
	if err != nil {
		return false, reject("", "the database refused a transaction: %v", err)
	}
	// Ownership first: a record may not overwrite another company's files.
	ferr = checkOwnership(ctx, tx, p)
	if ferr == nil {
		ferr = im.storeFiles(ctx, p)
	}
	if ferr == nil {
		created, ferr = writeRecord(ctx, tx, p)
	}
	if ferr != nil {
		if rerr := tx.Rollback(); rerr != nil {
			ferr.reason += fmt.Sprintf(" (rolling back: %v)", rerr)
		}
		return false, ferr
	}
	if err := tx.Commit(); err != nil {
		return false, reject("", "the database refused the record: %v", err)
	}
	return created, nil
}

// storeFiles writes the files before the record commits, so that no
// committed record ever names a missing file; a file whose record is then
// refused is never served.
func (im *Importer) storeFiles(ctx context.Context, p *plan) *fieldError {
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

func writeRecord(ctx context.Context, tx *ent.Tx, p *plan) (created bool, ferr *fieldError) {
	dbErr := func(what string, err error) *fieldError {
		return reject("", "the database refused the %s: %v", what, err)
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
func checkOwnership(ctx context.Context, tx *ent.Tx, p *plan) *fieldError {
	prop, err := tx.Property.Get(ctx, p.property)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return reject("", "reading the property: %v", err)
	case prop.CompanyID != p.company:
		return reject("Property.PropertyId", "%s belongs to another company", p.property)
	default:
		p.propertyExists = true
	}
	inv, err := tx.Inventory.Get(ctx, p.inventory)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return reject("", "reading the inventory: %v", err)
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
		return reject("", "checking the storage references: %v", err)
	}
	return nil
}

func takenError(field string, taken []uuid.UUID, err error) *fieldError {
	if err != nil {
		return reject("", "checking the %s values: %v", field, err)
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
