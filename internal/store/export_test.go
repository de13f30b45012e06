package store

import "entgo.io/ent/dialect"

// DriverOf is the driver the store's client sends statements through (the
// guard, and the router with standbys), for tests that send their own.
func DriverOf(s *Store) dialect.Driver { return s.drv }
