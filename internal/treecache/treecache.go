// Package treecache keeps, in memory, the JSON of signed inventories' trees
// (their environments, items, materials and photos) as answers wrote them.
//
// A signed inventory is evidence: the ent hooks of internal/freeze refuse
// every write to it but a correction (inventoryd import --correct-signed),
// which moves the inventory's version. So the bytes a query wrote for a
// signed inventory's environments, for one shape of selection, are the bytes
// every later query of that shape writes, until the version moves: they are
// kept under (inventory, version, shape), and a read that finds them skips
// the database's work for the tree (the eager loads of environments, items
// and photos) and the server's (scanning and writing them).
//
// Only the tree is kept, never the inventory: the inventory's own row is read
// by every query, under the company's privacy policy, and only a row that
// query returned can reach its tree. Another company's id reads no row, so
// nothing is served for it. Fields that can change after signing (a photo's
// signed URL, its digest, the edges back up to the inventory or out to other
// inventories) make a shape that is never kept (frozen, below).
//
// The cache is bounded in bytes (least recently used first out). A
// correction's event drops the corrected inventory's entries on every
// instance (Drop, from the live hub); the version in the key already keeps a
// corrected tree from being served in the moment before the event arrives.
package treecache

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/vektah/gqlparser/v2/ast"
)

// DefaultMaxBytes is the cache's bound unless configured (INVENTORY_TREE_CACHE_BYTES).
const DefaultMaxBytes = 64 << 20

// entryOverhead is what an entry costs beyond its bytes and shape: the
// list element, the map's slot, the key and the slice header.
const entryOverhead = 192

// Cache is one server's kept trees. A nil *Cache keeps nothing.
type Cache struct {
	schema *ast.Schema
	max    int64

	mu    sync.Mutex
	lru   *lru.LRU[entryKey, []byte]
	bytes int64

	hits, misses atomic.Int64
}

type entryKey struct {
	inventory uuid.UUID
	version   int
	shape     string
}

func (k entryKey) cost(b []byte) int64 { return int64(len(b) + len(k.shape) + entryOverhead) }

// New returns a cache of at most maxBytes over schema's types, or nil (no
// cache) when maxBytes is not positive.
func New(schema *ast.Schema, maxBytes int64) *Cache {
	if maxBytes <= 0 || schema == nil {
		return nil
	}
	c := &Cache{schema: schema, max: maxBytes}
	c.lru, _ = lru.NewLRU[entryKey, []byte](1<<62, func(k entryKey, b []byte) { c.bytes -= k.cost(b) })
	return c
}

func (c *Cache) get(k entryKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(k)
}

func (c *Cache) put(k entryKey, b []byte) {
	cost := k.cost(b)
	if cost > c.max/8 {
		return // one tree may not push out an eighth of the others
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return
	}
	c.lru.Add(k, b)
	c.bytes += cost
	for c.bytes > c.max {
		c.lru.RemoveOldest()
	}
}

// Drop forgets every tree kept of the inventory (its correction's event).
func (c *Cache) Drop(inventory uuid.UUID) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.lru.Keys() {
		if k.inventory == inventory {
			c.lru.Remove(k)
		}
	}
}

// Stats are the cache's counters: a hit is a tree written from the cache, a
// miss a signed inventory's tree written from the database (and then kept).
type Stats struct {
	Hits, Misses int64
	Bytes, Trees int64
	MaxBytes     int64
}

// Stats reads the counters (zero for a nil cache).
func (c *Cache) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Bytes: c.bytes, Trees: int64(c.lru.Len()), MaxBytes: c.max}
}

type requestKey struct{}

// request is what one query knows of the cache: the shapes of its tree
// fields, and the trees its inventory reads found kept (pinned, so that what
// the read decided is what the answer writes, whatever is evicted between).
type request struct {
	c  *Cache
	op *graphql.OperationContext

	mu     sync.Mutex
	shapes map[*ast.Field]string // "" : a shape never kept
	// aliases are the shapes of the tree fields by alias, over the whole
	// operation; "" where an alias names two shapes (or one never kept).
	aliases map[string]string
	pinned  map[pinKey][]byte
}

type pinKey struct {
	inventory uuid.UUID
	shape     string
}

// Begin gives ctx the cache for the query op: nothing for a nil cache or an
// operation that is not a query.
func (c *Cache) Begin(ctx context.Context, op *graphql.OperationContext) context.Context {
	if c == nil || op == nil || op.Operation == nil || op.Operation.Operation != ast.Query {
		return ctx
	}
	return context.WithValue(ctx, requestKey{}, &request{c: c, op: op})
}

func requestOf(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// Skip is asked by an inventory query, for each row it read, whether the
// trees it was to eager-load under aliases are all kept for that row: then
// they are pinned for the answer, and the query loads none of them for it.
func Skip(ctx context.Context, inventory uuid.UUID, signed bool, version int, aliases []string) bool {
	r := requestOf(ctx)
	if r == nil || !signed || len(aliases) == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.walk()
	found := make([]entryKey, 0, len(aliases))
	for _, alias := range aliases {
		shape := r.aliases[alias]
		if shape == "" {
			return false
		}
		found = append(found, entryKey{inventory, version, shape})
	}
	trees := make([][]byte, len(found))
	for i, k := range found {
		b, ok := r.c.get(k)
		if !ok {
			return false
		}
		trees[i] = b
	}
	if r.pinned == nil {
		r.pinned = map[pinKey][]byte{}
	}
	for i, k := range found {
		r.pinned[pinKey{inventory, k.shape}] = trees[i]
	}
	return true
}

// Tree is one inventory's tree field in the answer being written.
type Tree struct {
	r      *request
	key    entryKey
	pinned []byte
	mark   int
	errors int
}

// Lookup is the tree of field for the inventory, as the answer writes it:
// Pinned when its read found it kept; else, for a signed inventory and a
// shape that is kept, one to Keep once written.
func Lookup(ctx context.Context, inventory uuid.UUID, signed bool, version int, field *ast.Field) Tree {
	r := requestOf(ctx)
	if r == nil || !signed {
		return Tree{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	shape := r.shapeOf(field)
	if shape == "" {
		return Tree{}
	}
	t := Tree{r: r, key: entryKey{inventory, version, shape}}
	t.pinned = r.pinned[pinKey{inventory, shape}]
	return t
}

// Pinned is the tree's JSON, when it is kept and the read pinned it.
func (t *Tree) Pinned() []byte {
	if t.pinned != nil {
		t.r.c.hits.Add(1)
	}
	return t.pinned
}

// Start notes where the tree's JSON begins in the answer (mark) and how many
// errors it has so far: one written with errors is never kept.
func (t *Tree) Start(ctx context.Context, mark int) {
	if t.r == nil {
		return
	}
	t.mark, t.errors = mark, len(graphql.GetErrors(ctx))
}

// Keep keeps the tree's JSON, the end of answer since Start, unless an
// error was answered on the way.
func (t *Tree) Keep(ctx context.Context, answer []byte) {
	if t.r == nil || len(graphql.GetErrors(ctx)) != t.errors || t.mark > len(answer) {
		return
	}
	t.r.c.misses.Add(1)
	t.r.c.put(t.key, append([]byte(nil), answer[t.mark:]...))
}

// walk finds the operation's tree fields (Inventory.environments) under
// every path, once: their shapes by alias.
func (r *request) walk() {
	if r.aliases != nil {
		return
	}
	r.aliases = map[string]string{}
	root := r.c.schema.Query
	if root == nil {
		return
	}
	r.walkSet(r.op.Operation.SelectionSet, root, 0)
}

// maxWalkDepth bounds the walk (the query limits bound depth before it).
const maxWalkDepth = 32

func (r *request) walkSet(set ast.SelectionSet, def *ast.Definition, depth int) {
	if depth > maxWalkDepth {
		return
	}
	for _, typ := range r.c.schema.GetPossibleTypes(def) {
		for _, f := range graphql.CollectFields(r.op, set, implementors(r.c.schema, typ)) {
			if typ.Name == treeParent && f.Name == treeField {
				shape := r.shapeOf(f.Field)
				if kept, seen := r.aliases[f.Alias]; seen && kept != shape {
					shape = ""
				}
				r.aliases[f.Alias] = shape
				continue
			}
			if fd := typ.Fields.ForName(f.Name); fd != nil {
				if child := r.c.schema.Types[fd.Type.Name()]; child != nil && len(f.Selections) > 0 {
					r.walkSet(f.Selections, child, depth+1)
				}
			}
		}
	}
}

// The tree field: what is kept is Inventory.environments.
const (
	treeParent = "Inventory"
	treeField  = "environments"
	treeType   = "Environment"
)

// shapeOf is the shape of a tree field: its arguments and its selection
// (aliases, fields and their arguments, fragments and @skip/@include
// resolved), the same text for any selection that writes the same JSON; ""
// when it selects a field that is not frozen.
func (r *request) shapeOf(field *ast.Field) string {
	if shape, ok := r.shapes[field]; ok {
		return shape
	}
	if r.shapes == nil {
		r.shapes = map[*ast.Field]string{}
	}
	var b strings.Builder
	shape := ""
	if r.writeShape(&b, field, r.c.schema.Types[treeType]) {
		shape = b.String()
	}
	r.shapes[field] = shape
	return shape
}

func (r *request) writeShape(b *strings.Builder, field *ast.Field, typ *ast.Definition) bool {
	b.WriteString(field.Name)
	if len(field.Arguments) > 0 {
		args, err := json.Marshal(field.ArgumentMap(r.op.Variables)) // keys sorted
		if err != nil {
			return false
		}
		b.Write(args)
	}
	if typ == nil || typ.Kind != ast.Object {
		return typ != nil
	}
	b.WriteByte('{')
	for i, f := range graphql.CollectFields(r.op, field.SelectionSet, implementors(r.c.schema, typ)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Alias)
		b.WriteByte(':')
		if f.Name == "__typename" {
			b.WriteString(f.Name)
			continue
		}
		fd := typ.Fields.ForName(f.Name)
		if fd == nil || !frozen[typ.Name][f.Name] {
			return false
		}
		if !r.writeShape(b, f.Field, r.c.schema.Types[fd.Type.Name()]) {
			return false
		}
	}
	b.WriteByte('}')
	return true
}

// implementors are the type conditions an object of typ satisfies: its name
// and its interfaces'.
func implementors(schema *ast.Schema, typ *ast.Definition) []string {
	names := []string{typ.Name}
	for _, i := range schema.GetImplements(typ) {
		names = append(names, i.Name)
	}
	return names
}

// frozen are the fields of a signed inventory's tree that never change: its
// rows' columns, which internal/freeze keeps as they were signed, and the
// edges down the tree. Every other field (the edges back up or out to other
// inventories, a photo's signed URL, which expires, and its digest, which may
// be recorded after signing) makes a shape that is never kept.
// TestEveryTreeFieldIsClassified holds this list to the schema.
var frozen = map[string]map[string]bool{
	"Environment": set("id", "inventoryId", "inventoryID", "name", "description", "level", "order", "items"),
	"Item": set("id", "environmentId", "environmentID", "materialId", "materialID", "name", "description",
		"rating", "order", "toRepair", "material", "photos"),
	"Material": set("id", "name"),
	"Photo":    set("id", "itemId", "itemID", "storageReference", "contentType"),
}

// notFrozen are the fields of the tree's types that a kept shape may not
// select, each for the reason given at frozen.
var notFrozen = map[string]map[string]bool{
	"Environment": set("inventory"),
	"Item":        set("environment"),
	"Material":    set("items"),
	"Photo":       set("item", "url", "sha256"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Active says whether ctx's query may use the cache.
func Active(ctx context.Context) bool { return requestOf(ctx) != nil }
