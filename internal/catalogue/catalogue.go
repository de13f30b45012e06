// Package catalogue keeps the rows of catalogue tables (materials): shared
// by every company, only ever inserted, never changed or removed. A row read
// once is therefore good for every later request of every company, and the
// eager loads of ent's generated code (ent/template/catalogue.tmpl) take
// catalogue rows from here and ask the database only for ids not seen yet.
package catalogue

import (
	"sync"
	"sync/atomic"
)

// DefaultSize is how many rows a Cache keeps: far more than the materials a
// company uses, and a few hundred kilobytes at most.
const DefaultSize = 10_000

// Cache holds catalogue rows by table and id. Once full it keeps what it
// has, and rows beyond it are read from the database each time; rows never
// change, so nothing it holds is ever stale.
type Cache struct {
	rows sync.Map // Key → row
	n    atomic.Int64
	size int64
}

// Key names a row: its table (ent's type name) and id.
type Key struct {
	Table string
	ID    any
}

// New is a Cache of at most size rows.
func New(size int) *Cache { return &Cache{size: int64(size)} }

// Get is the row of key, if the cache holds it.
func (c *Cache) Get(key Key) (any, bool) { return c.rows.Load(key) }

// Put keeps row under key while the cache has room.
func (c *Cache) Put(key Key, row any) {
	if c.n.Load() >= c.size {
		return
	}
	if _, loaded := c.rows.LoadOrStore(key, row); !loaded {
		c.n.Add(1)
	}
}
