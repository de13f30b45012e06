package graph

import (
	"os"
	"testing"

	"github.com/propertyrecords/inventory/internal/testdb"
)

// The demo dataset is loaded once per test process (testdb.Dataset); on
// PostgreSQL its template database is dropped once the tests are done.
func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
