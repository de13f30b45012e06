// Package datagen writes a deterministic synthetic dataset: the same seed and
// size give the same records, ids included. The run command's demo data comes
// from here.
package datagen

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	entphoto "github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/freeze"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/records"
	"github.com/propertyrecords/inventory/internal/report"
	"github.com/propertyrecords/inventory/internal/store"
	"github.com/propertyrecords/inventory/internal/tenant"
)

// Size says how much to generate.
type Size struct {
	Companies              int
	PropertiesPerCompany   int
	InventoriesPerProperty int
	MinEnvironments        int // per inventory
	MaxEnvironments        int
	MinItems               int // per environment
	MaxItems               int
	MaxPhotos              int // per item
}

// Demo is the dataset the server loads on first start.
var Demo = Size{
	Companies: 2, PropertiesPerCompany: 20, InventoriesPerProperty: 3,
	MinEnvironments: 3, MaxEnvironments: 6, MinItems: 3, MaxItems: 7, MaxPhotos: 2,
}

// DemoSeed is the seed of the demo dataset.
const DemoSeed = 20240501

// DemoCompanies are the ids of the first two generated companies, fixed so that
// the README and the GraphQL IDE can name them.
var DemoCompanies = []uuid.UUID{
	uuid.MustParse("11111111-1111-4111-8111-111111111111"),
	uuid.MustParse("22222222-2222-4222-8222-222222222222"),
}

// DemoCompanyNames are the demo companies' names, in the order of
// DemoCompanies: what their reports print at the top.
var DemoCompanyNames = []string{"Inmobiliaria Los Andes S.A.S.", "Administraciones del Valle Ltda."}

// Validate refuses sizes the generator cannot honour.
func (s Size) Validate() error {
	switch {
	case s.Companies < 1 || s.PropertiesPerCompany < 1 || s.InventoriesPerProperty < 0:
		return fmt.Errorf("datagen: want at least 1 company and 1 property per company")
	case s.MinEnvironments < 0 || s.MaxEnvironments < s.MinEnvironments:
		return fmt.Errorf("datagen: environments: want 0 <= min <= max, got %d-%d", s.MinEnvironments, s.MaxEnvironments)
	case s.MinItems < 0 || s.MaxItems < s.MinItems:
		return fmt.Errorf("datagen: items: want 0 <= min <= max, got %d-%d", s.MinItems, s.MaxItems)
	case s.MaxPhotos < 0:
		return fmt.Errorf("datagen: photos: want 0 or more, got %d", s.MaxPhotos)
	// The bounds an import enforces (the ListSize annotations of ent/schema).
	case s.MaxEnvironments > ent.InventoryEnvironmentsMax || s.MaxItems > ent.EnvironmentItemsMax || s.MaxPhotos > ent.ItemPhotosMax:
		return fmt.Errorf("datagen: want at most %d environments an inventory, %d items an environment and %d photos an item",
			ent.InventoryEnvironmentsMax, ent.EnvironmentItemsMax, ent.ItemPhotosMax)
	case s.MaxEnvironments*s.MaxItems > ent.EnvironmentItemsPerInventory ||
		s.MaxEnvironments*s.MaxItems*s.MaxPhotos > ent.ItemPhotosPerInventory:
		return fmt.Errorf("datagen: want at most %d items and %d photos an inventory, got up to %d and %d",
			ent.EnvironmentItemsPerInventory, ent.ItemPhotosPerInventory, s.MaxEnvironments*s.MaxItems, s.MaxEnvironments*s.MaxItems*s.MaxPhotos)
	}
	return nil
}

// Stats counts what was written.
type Stats struct {
	Companies, Properties, Inventories, Environments, Items, Photos int
	// CompanyIDs are the companies written to, in order.
	CompanyIDs []uuid.UUID
}

// Rows is the number of database rows written.
func (s Stats) Rows() int {
	return s.Properties + s.Inventories + s.Environments + s.Items + s.Photos
}

// Option tunes Load.
type Option func(*generator)

// OwnCompanies gives the dataset companies of its own, drawn from the seed
// like every other id, where by default its first two are the demo
// companies (DemoCompanies), whose ids the README and the IDE name: what
// `inventoryd generate` writes unless asked for the demo ones.
func OwnCompanies() Option {
	return func(g *generator) { g.ownCompanies = true }
}

// WithProgress calls report after each batch written, at most twice a second.
// WithTimeZone has the reports of signed inventories show times in loc
// beside UTC (report.DefaultTimeZone when not given).
func WithTimeZone(loc *time.Location) Option {
	return func(g *generator) { g.zone = loc }
}

func WithProgress(report func(Stats)) Option {
	return func(g *generator) { g.progress = report }
}

// epoch is the earliest creation date of generated records.
var epoch = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

// Load writes a dataset in one transaction: on any error no record is
// written. With a file store it also writes each signed inventory's PDF and
// each photo, before the records that name them, so that no record ever
// points at a missing file; a nil store writes records only.
func Load(ctx context.Context, client *ent.Client, fileStore *files.Store, seed uint64, size Size, opts ...Option) (Stats, error) {
	if err := size.Validate(); err != nil {
		return Stats{}, err
	}
	ctx = tenant.Unrestricted(ctx, "datagen: writing generated records for every company")
	ctx = records.BulkLoads(ctx)
	// The files are flushed to disk all at once, before the records that
	// name them commit, rather than one by one.
	ctx, written := files.DeferSync(ctx)
	var stats Stats
	err := records.InTx(ctx, client, func(tx *ent.Tx) error {
		restoreCache, err := store.WithBulkCache(ctx, tx)
		if err != nil {
			return err
		}
		rebuildIndexes, err := store.WithoutSecondaryIndexes(ctx, tx, treeTables...)
		if err != nil {
			return err
		}
		g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), tx: tx, files: fileStore, seed: seed}
		for _, opt := range opts {
			opt(g)
		}
		g.writes.SetLimit(concurrentWrites)
		stats, err = g.load(ctx, size)
		// A load that stopped early leaves no write running in the
		// transaction it rolls back.
		if saveErr := g.saved(); err == nil {
			err = saveErr
		}
		if err := g.writes.Wait(); err != nil {
			return err
		}
		if err != nil {
			return err
		}
		if err := rebuildIndexes(); err != nil {
			return err
		}
		if err := restoreCache(); err != nil {
			return err
		}
		return written.Sync()
	})
	if err != nil {
		return Stats{}, err
	}
	return stats, nil
}

// treeTables are the tables a load writes in bulk: into an empty database,
// without their secondary indexes until the end (store.WithoutSecondaryIndexes).
var treeTables = []string{property.Table, inventory.Table, environment.Table, item.Table, entphoto.Table}

// Empty reports whether the database has no properties: a first start,
// which LoadDemoIfEmpty loads.
func Empty(ctx context.Context, client *ent.Client) (bool, error) {
	exists, err := client.Property.Query().Exist(tenant.Unrestricted(ctx, "datagen: is the database empty?"))
	return err == nil && !exists, err
}

// LoadDemoIfEmpty loads the demo dataset into a database with no properties.
func LoadDemoIfEmpty(ctx context.Context, client *ent.Client, store *files.Store, opts ...Option) (loaded bool, stats Stats, err error) {
	if empty, err := Empty(ctx, client); err != nil || !empty {
		return false, Stats{}, err
	}
	stats, err = Load(ctx, client, store, DemoSeed, Demo, opts...)
	return err == nil, stats, err
}

// concurrentWrites is how many files the generator writes at once.
const concurrentWrites = 4

type generator struct {
	// writes stores the files beside the generation (put).
	writes errgroup.Group

	zone  *time.Location // of the reports' times
	rng   *rand.Rand
	tx    *ent.Tx
	files *files.Store
	err   error           // the first file that could not be written
	ctx   context.Context // of the load, for file writes

	progress     func(Stats)
	lastProgress time.Time
	seed         uint64
	checked      bool // refuseReload has run
	ownCompanies bool // OwnCompanies
	// companyName is the name of the company being generated, "" for one
	// of the dataset's own (which has none).
	companyName string
	// codesAfter is the highest number of the company's INM-NNNN property
	// codes already in the database: the new properties number on from it.
	codesAfter int

	materials  map[string]uuid.UUID
	properties []*ent.PropertyCreate
	// tree is the inventory being generated; batch holds the written ones
	// until the next flush.
	tree  *records.Inventory
	batch records.Batch
	stats Stats
	// saving is the batch the database is writing while the next one is
	// generated (flush), nil when none is: the two take both cores rather
	// than turns on one. It answers once, with the write's error.
	saving chan error
}

func (g *generator) load(ctx context.Context, size Size) (Stats, error) {
	g.ctx = ctx
	if err := g.ensureMaterials(ctx); err != nil {
		return Stats{}, err
	}
	for c := 0; c < size.Companies; c++ {
		company := g.id() // drawn either way, so the ids after it are the same
		g.companyName = ""
		// The transaction's connection is the writer's until the batch
		// it writes is done.
		if err := g.saved(); err != nil {
			return Stats{}, err
		}
		if c < len(DemoCompanies) && !g.ownCompanies {
			company, g.companyName = DemoCompanies[c], DemoCompanyNames[c]
			if err := records.NameCompany(ctx, g.tx.Client(), company, g.companyName); err != nil {
				return Stats{}, err
			}
		}
		if err := g.numberCodesAfterExisting(ctx, company); err != nil {
			return Stats{}, err
		}
		g.stats.Companies++
		g.stats.CompanyIDs = append(g.stats.CompanyIDs, company)
		for p := 0; p < size.PropertiesPerCompany; p++ {
			g.property(company, p, size)
			if err := g.flush(ctx, false); err != nil {
				return Stats{}, err
			}
		}
	}
	return g.stats, g.flush(ctx, true)
}

// numberCodesAfterExisting makes the company's new property codes follow
// the highest INM-NNNN code it already has, so that a dataset written into
// a company with properties (the demo companies, asked for again with
// another seed) repeats none of their codes. An empty company numbers from
// INM-0001, as it always did.
func (g *generator) numberCodesAfterExisting(ctx context.Context, company uuid.UUID) error {
	codes, err := g.tx.Property.Query().
		Where(property.CompanyID(company), property.CodeHasPrefix(codePrefix)).
		Select(property.FieldCode).Strings(ctx)
	if err != nil {
		return err
	}
	g.codesAfter = 0
	for _, code := range codes {
		if n, err := strconv.Atoi(strings.TrimPrefix(code, codePrefix)); err == nil && n > g.codesAfter {
			g.codesAfter = n
		}
	}
	return nil
}

// codePrefix starts every generated property code.
const codePrefix = "INM-"

// refuseReload fails, before anything is written, when the dataset's first
// property (whose id depends on the seed alone) is already in the database.
func (g *generator) refuseReload(ctx context.Context) error {
	if g.checked || len(g.properties) == 0 {
		return nil
	}
	g.checked = true
	if err := g.saved(); err != nil {
		return err
	}
	first, _ := g.properties[0].Mutation().ID()
	exists, err := g.tx.Property.Query().Where(property.ID(first)).Exist(ctx)
	if err != nil {
		return err
	}
	if exists {
		return fmt.Errorf("datagen: the dataset of seed %d is already in the database: generate with another seed", g.seed)
	}
	return nil
}

// id draws a version 4 UUID from the seeded generator, so ids are repeatable.
func (g *generator) id() uuid.UUID {
	var u uuid.UUID
	for i := 0; i < 16; i += 8 {
		v := g.rng.Uint64()
		for j := 0; j < 8; j++ {
			u[i+j] = byte(v >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

func pick[T any](g *generator, xs []T) T { return xs[g.rng.IntN(len(xs))] }

func (g *generator) between(lo, hi int) int { return lo + g.rng.IntN(hi-lo+1) }

func (g *generator) ensureMaterials(ctx context.Context) error {
	existing, err := g.tx.Material.Query().Where(material.NameIn(materials...)).All(ctx)
	if err != nil {
		return err
	}
	g.materials = make(map[string]uuid.UUID, len(materials))
	for _, m := range existing {
		g.materials[m.Name] = m.ID
	}
	var create []*ent.MaterialCreate
	for _, name := range materials {
		id := g.id() // drawn either way, so existing materials do not shift later ids
		if _, ok := g.materials[name]; !ok {
			g.materials[name] = id
			create = append(create, g.tx.Material.Create().SetID(id).SetName(name))
		}
	}
	return g.tx.Material.CreateBulk(create...).Exec(ctx)
}

func (g *generator) property(company uuid.UUID, n int, size Size) {
	kind := pick(g, propertyKinds)
	place := pick(g, cities)
	id := g.id()
	levels := g.between(kind.minLevels, kind.maxLevels)
	created := epoch.Add(time.Duration(g.rng.IntN(365*24*3600)) * time.Second)
	code := fmt.Sprintf("%s%04d", codePrefix, g.codesAfter+n+1)
	if n%7 == 6 {
		code = "" // some companies do not code every property
	}
	create := g.tx.Property.Create().SetID(id).SetCompanyID(company).
		SetCode(code).
		SetAddress(fmt.Sprintf("%s %d # %d-%d", pick(g, streets), g.between(1, 180), g.between(1, 120), g.between(1, 99))).
		SetNeighborhood(pick(g, place.neighborhoods)).
		SetCity(place.name).
		SetPropertyType(kind.name).
		SetIsActive(g.rng.IntN(10) != 0).
		SetLevels(levels).
		SetCreatedAt(created)
	if g.rng.IntN(4) == 0 {
		create.SetDetail(pick(g, propertyDetails))
	}
	g.properties = append(g.properties, create)
	g.stats.Properties++
	// Refused before this property's files are written: a dataset written
	// again (numbering its codes after its own) must not overwrite the
	// files its records already name.
	if err := g.refuseReload(g.ctx); err != nil && g.err == nil {
		g.err = err
	}
	p := create.Mutation()
	info := report.Inventory{PropertyCode: code, PropertyType: kind.name, City: place.name, PropertyLevels: levels}
	info.Address, _ = p.Address()
	info.Neighborhood, _ = p.Neighborhood()
	// Each inventory after the first re-inspects the rooms of the one before
	// it, later: the history a comparison reads (see derive).
	var previous *report.Inventory
	for i := 0; i < size.InventoriesPerProperty; i++ {
		doc := g.inventory(company, id, info, created, size, previous)
		previous, created = &doc, doc.CreatedAt
	}
}

// businessCycle is the order a property's inventories come in.
var businessCycle = []inventorytype.Type{inventorytype.Captacion, inventorytype.PreVisita, inventorytype.Colocacion, inventorytype.Desocupacion}

func (g *generator) inventory(company, property uuid.UUID, doc report.Inventory, after time.Time, size Size, previous *report.Inventory) report.Inventory {
	id := g.id()
	levels := doc.PropertyLevels
	// Types rotate, so that every type appears in any dataset of four or more
	// inventories, in the order of a property's business: listed (captación),
	// visited, let (colocación), vacated (desocupación); so a property's
	// history often holds a move-in and the move-out after it.
	kind := businessCycle[g.stats.Inventories%len(businessCycle)]
	created := after.Add(time.Duration(g.between(1, 400*24*3600)) * time.Second)
	tree := &records.Inventory{ID: id, CompanyID: company, PropertyID: property, Type: kind,
		RentalPrice: decimal.New(int64(g.between(16, 120))*50_000, 0), Currency: "COP", CreatedAt: created}
	if kind == inventorytype.Colocacion || kind == inventorytype.Desocupacion {
		// A tenancy's inventories record its deposit: a month's rent, as
		// is usual (and no draw, so the rest of the dataset is unchanged).
		deposit := tree.RentalPrice
		tree.Deposit = &deposit
	}
	if g.stats.Inventories%3 != 2 { // two in three are signed
		agent := created.Add(time.Duration(g.between(3600, 10*24*3600)) * time.Second)
		owner := agent.Add(time.Duration(g.between(60, 3*24*3600)) * time.Second)
		remote := g.rng.IntN(3) == 0
		code := fmt.Sprintf("APR-%06d", g.rng.IntN(1_000_000))
		tree.Signature = records.Signature{Signed: true, Remote: remote, ApprovalCode: &code,
			Agent: &agent, Owner: &owner, Date: &owner}
	}
	g.tree = tree
	g.stats.Inventories++
	if previous != nil && len(previous.Environments) > 0 {
		doc.Environments = g.derive(previous.Environments, size)
	} else {
		names := g.rng.Perm(len(rooms))
		for e, n := 0, g.between(size.MinEnvironments, size.MaxEnvironments); e < n; e++ {
			env := g.environment(rooms[names[e%len(names)]], g.between(1, levels), e, size)
			doc.Environments = append(doc.Environments, env)
		}
	}
	doc.CreatedAt = created
	if s := tree.Signature; g.files != nil && kind.Valid() && s.Signed {
		doc.ID, doc.TypeName, doc.Currency, doc.CreatedAt = id.String(), kind.Name(), "COP", created
		doc.RentalPrice = tree.RentalPrice.StringFixed(2)
		doc.CompanyName, doc.Deposit = g.companyName, ""
		if tree.Deposit != nil {
			doc.Deposit = tree.Deposit.StringFixed(2)
		}
		doc.AgentSigned, doc.OwnerSigned, doc.SignatureDate = *s.Agent, *s.Owner, *s.Date
		doc.ApprovalCode, doc.RemoteSigned = *s.ApprovalCode, s.Remote
		if sum := g.storePDF(doc); sum != "" {
			tree.Signature.PDFSha256 = &sum
		}
	}
	// Generated records obey the rules every writer does: a failure here is
	// the generator's bug, stopped before it is written.
	if err := records.Validate(tree, levels, records.APINames); err != nil && g.err == nil {
		g.err = fmt.Errorf("datagen: inventory %s: %w", id, err)
	}
	client := g.tx.Client()
	g.batch.Inventories = append(g.batch.Inventories, records.NewInventory(client, tree))
	g.batch.AddTree(client, tree)
	g.tree = nil
	return doc
}

func (g *generator) environment(name string, level, order int, size Size) report.Environment {
	id := g.id()
	description := pick(g, roomDescriptions)
	g.tree.Environments = append(g.tree.Environments, records.Environment{ID: id, Name: name, Description: description, Level: level, Order: order})
	g.stats.Environments++
	doc := report.Environment{Name: name, Level: level, Description: description}
	// The same draws as before rooms had fixtures of their own (a
	// permutation of every item), so that the rest of a dataset stays as
	// it was; the room takes those of them that belong in it.
	var fitting []string
	for _, n := range g.rng.Perm(len(itemNames)) {
		if fitsIn(itemNames[n], name) {
			fitting = append(fitting, itemNames[n])
		}
	}
	var items []placedItem
	for i, n := 0, g.between(size.MinItems, size.MaxItems); i < n; i++ {
		items = append(items, g.item(fitting[i%len(fitting)], i, size))
	}
	doc.Items = inAPIOrder(items)
	return doc
}

// placedItem is a written item with what the API orders items by.
type placedItem struct {
	report.Item
	order *int
	id    uuid.UUID
}

// inAPIOrder lists items as the API does (ent/schema/item.go): by order,
// those without one last, then by name and id; so that the report a
// party signs lists them where the apps show them.
func inAPIOrder(items []placedItem) []report.Item {
	slices.SortStableFunc(items, func(a, b placedItem) int {
		switch {
		case a.order != nil && b.order != nil && *a.order != *b.order:
			return cmp.Compare(*a.order, *b.order)
		case a.order == nil && b.order != nil:
			return 1
		case a.order != nil && b.order == nil:
			return -1
		case a.Name != b.Name:
			return strings.Compare(a.Name, b.Name)
		}
		return bytes.Compare(a.id[:], b.id[:])
	})
	out := make([]report.Item, len(items))
	for i, it := range items {
		out[i] = it.Item
	}
	return out
}

func (g *generator) item(name string, order int, size Size) placedItem {
	rating := g.between(1, 5)
	// One draw over the whole catalogue, as before items had materials of
	// their own, taken into the item's.
	ofItem := materialsOf[name]
	material := ofItem[g.rng.IntN(len(materials))%len(ofItem)]
	return g.writeItem(report.Item{Name: name, Material: material, Rating: rating,
		ToRepair: rating <= 2, Description: pick(g, commentsByRating[rating])}, order, size)
}

// derive re-inspects the rooms of an earlier inventory, as the next
// inspection of a property does: the same rooms and items, each with new
// photos; about one item in five worse than before (to repair at 2 or
// less), one in three of those rated 3 or less repaired to 5, and per
// inventory one item gone and one new.
func (g *generator) derive(earlier []report.Environment, size Size) []report.Environment {
	gone, added := g.rng.IntN(len(earlier)), g.rng.IntN(len(earlier))
	var out []report.Environment
	for e, was := range earlier {
		id := g.id()
		g.tree.Environments = append(g.tree.Environments, records.Environment{ID: id, Name: was.Name,
			Description: was.Description, Level: was.Level, Order: e})
		g.stats.Environments++
		env := report.Environment{Name: was.Name, Level: was.Level, Description: was.Description}
		var items []placedItem
		skip := -1
		// Within the size's bounds: a room keeps MinItems to MaxItems.
		if e == gone && len(was.Items) > max(1, size.MinItems) {
			skip = g.rng.IntN(len(was.Items))
		}
		for i, it := range was.Items {
			if i == skip {
				continue
			}
			switch {
			case g.rng.IntN(5) == 0 && it.Rating > 1:
				it.Rating = max(1, it.Rating-g.between(1, 2))
				it.Description = pick(g, commentsByRating[it.Rating])
			case it.Rating <= 3 && g.rng.IntN(3) == 0:
				it.Rating, it.Description = 5, "Reparado"
			}
			it.ToRepair = it.Rating <= 2
			items = append(items, g.writeItem(it, len(items), size))
		}
		if e == added && len(items) < size.MaxItems {
			items = append(items, g.item(belongingIn(pick(g, itemNames), was.Name), len(items), size))
		}
		env.Items = inAPIOrder(items)
		out = append(out, env)
	}
	return out
}

// belongingIn is item, or if it does not belong in room the first of the
// items that do (a new item found at an inspection: one draw, as before).
func belongingIn(item, room string) string {
	if fitsIn(item, room) {
		return item
	}
	for _, other := range itemNames {
		if fitsIn(other, room) {
			return other
		}
	}
	return item
}

// writeItem writes an item as spec describes it, with its photos.
func (g *generator) writeItem(spec report.Item, order int, size Size) placedItem {
	id := g.id()
	placed := placedItem{id: id}
	it := records.Item{ID: id, Name: spec.Name, Description: spec.Description, MaterialID: g.materials[spec.Material],
		Rating: spec.Rating, ToRepair: spec.ToRepair}
	// One item in ten, counted over the whole dataset so that even small
	// sizes have some, was never ordered by the inspector: its order is null.
	if g.stats.Items%10 != 9 {
		it.Order = &order
		placed.order = &order
	}
	g.stats.Items++
	spec.Photos = nil // a new inspection's own photos
	for p, n := 0, g.rng.IntN(size.MaxPhotos+1); p < n; p++ {
		ref := fmt.Sprintf("%s-%d.jpg", id, p+1)
		photo := records.Photo{ID: g.id(), StorageReference: ref}
		if sum, thumb := g.storePhoto(ref); sum != "" {
			photo.SHA256 = &sum
			spec.Photos = append(spec.Photos, report.Photo{Reference: ref, SHA256: sum, Thumbnail: thumb})
		}
		it.Photos = append(it.Photos, photo)
		g.stats.Photos++
	}
	env := &g.tree.Environments[len(g.tree.Environments)-1]
	env.Items = append(env.Items, it)
	placed.Item = spec
	return placed
}

// flush starts writing the pending rows, parents first, once a batch is
// full (or at the end, where it waits for the write), keeping memory bounded
// for large datasets: at most two batches are held, the one being written
// and the one being generated.
func (g *generator) flush(ctx context.Context, final bool) error {
	if g.err != nil {
		return g.err
	}
	if !final && len(g.batch.Items) < store.BatchSize {
		return nil
	}
	if err := g.refuseReload(ctx); err != nil {
		return err
	}
	if err := g.saved(); err != nil {
		return err
	}
	properties, batch := g.properties, g.batch
	g.properties, g.batch = nil, records.Batch{}
	saving := make(chan error, 1)
	g.saving = saving
	go func() { saving <- g.save(ctx, properties, batch) }()
	if g.progress != nil && (final || time.Since(g.lastProgress) >= 500*time.Millisecond) {
		g.progress(g.stats)
		g.lastProgress = time.Now()
	}
	if final {
		return g.saved()
	}
	return nil
}

// save writes a batch and the properties of its inventories. It alone uses
// the transaction while it runs (saved waits for it).
func (g *generator) save(ctx context.Context, properties []*ent.PropertyCreate, batch records.Batch) error {
	if err := store.SaveInBatches(ctx, properties, func(b []*ent.PropertyCreate) error { return g.tx.Property.CreateBulk(b...).Exec(ctx) }); err != nil {
		return err
	}
	if err := batch.Save(ctx, g.tx.Client()); err != nil {
		return err
	}
	// Every tree of the batch is whole: the signed-record checks need
	// remember none of it (memory stays flat however many rows are loaded).
	freeze.Forget(g.tx)
	return nil
}

// saved waits for the batch being written, if one is, and gives its error.
func (g *generator) saved() error {
	if g.saving == nil {
		return nil
	}
	err := <-g.saving
	g.saving = nil
	return err
}
