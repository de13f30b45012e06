package upload_test

import (
	"os"
	"testing"

	"github.com/propertyrecords/inventory/internal/testdb/dbfree"
)

// This package's tests read no database: they run once, without
// TEST_DATABASE_URL (dbfree).
func TestMain(m *testing.M) { os.Exit(dbfree.Main(m)) }
