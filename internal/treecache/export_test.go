package treecache

// Frozen and NotFrozen are the classification of the tree's fields.
var Frozen, NotFrozen = frozen, notFrozen

// Put keeps b as a tree (of shape) for the test of the bound.
func (c *Cache) Put(inventory [16]byte, version int, shape string, b []byte) {
	c.put(entryKey{inventory, version, shape}, b)
}

// Get reads a kept tree.
func (c *Cache) Get(inventory [16]byte, version int, shape string) ([]byte, bool) {
	return c.get(entryKey{inventory, version, shape})
}
