package treecache_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/graph"
	"github.com/propertyrecords/inventory/internal/treecache"
)

// Every field of the tree's types is either frozen (kept) or not (a shape
// that selects it is never kept): a field added to the schema fails here
// until it is classified.
func TestEveryTreeFieldIsClassified(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	for typ, frozen := range treecache.Frozen {
		def := schema.Types[typ]
		if def == nil {
			t.Fatalf("type %s is not in the schema", typ)
		}
		for _, f := range def.Fields {
			if len(f.Name) > 1 && f.Name[:2] == "__" {
				continue
			}
			if frozen[f.Name] == treecache.NotFrozen[typ][f.Name] {
				t.Errorf("%s.%s: classify it as frozen (never changes once signed) or not", typ, f.Name)
			}
		}
		for name := range frozen {
			if def.Fields.ForName(name) == nil {
				t.Errorf("%s.%s is classified but not in the schema", typ, name)
			}
		}
	}
}

// The cache holds at most its bound, the least recently used out first; a
// tree of over an eighth of it is not kept; Drop forgets an inventory's
// trees in every shape and version.
func TestTheCacheHoldsItsBoundInBytes(t *testing.T) {
	const max = 64 << 10
	c := treecache.New(graph.NewExecutableSchema(graph.Config{}).Schema(), max)
	tree := bytes.Repeat([]byte("x"), 1000)
	ids := make([]uuid.UUID, 500)
	for i := range ids {
		ids[i] = uuid.New()
		c.Put(ids[i], 1, "environments{id}", tree)
		if s := c.Stats(); s.Bytes > max {
			t.Fatalf("after %d trees the cache holds %d bytes, over its %d", i+1, s.Bytes, max)
		}
	}
	s := c.Stats()
	if s.Trees < 40 || s.Bytes < max*3/4 {
		t.Errorf("the cache holds %d trees, %d bytes: want it near its bound of %d", s.Trees, s.Bytes, max)
	}
	if _, ok := c.Get(ids[0], 1, "environments{id}"); ok {
		t.Error("the oldest tree is still kept")
	}
	if _, ok := c.Get(ids[len(ids)-1], 1, "environments{id}"); !ok {
		t.Error("the newest tree is not kept")
	}
	c.Put(ids[0], 1, "big", bytes.Repeat([]byte("x"), max/8+1))
	if _, ok := c.Get(ids[0], 1, "big"); ok {
		t.Error("a tree of over an eighth of the bound was kept")
	}
	last := ids[len(ids)-1]
	for v := range 3 {
		c.Put(last, v+2, fmt.Sprint("shape", v), tree)
	}
	c.Drop(last)
	for v := range 3 {
		if _, ok := c.Get(last, v+2, fmt.Sprint("shape", v)); ok {
			t.Errorf("version %d's tree is still kept after Drop", v+2)
		}
	}
	if _, ok := c.Get(last, 1, "environments{id}"); ok {
		t.Error("the dropped inventory's first tree is still kept")
	}
	if treecache.New(nil, max) != nil || treecache.New(graph.NewExecutableSchema(graph.Config{}).Schema(), 0) != nil {
		t.Error("a cache of no bytes or no schema was made")
	}
}
