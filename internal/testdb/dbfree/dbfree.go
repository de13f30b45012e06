// Package dbfree runs the tests of a package that reads no database once:
// in the run without TEST_DATABASE_URL. CI runs the whole suite on SQLite
// and again on PostgreSQL side by side, on 2 cores, within 20 minutes;
// decoding image bombs or rendering PDFs a second time shows nothing the
// first run did not. It has no dependencies of its own, so that such a
// package's test binary stays as small as the package.
package dbfree

import (
	"fmt"
	"os"
	"testing"
)

// Main is a TestMain body:
//
//	func TestMain(m *testing.M) { os.Exit(dbfree.Main(m)) }
func Main(m *testing.M) int {
	if os.Getenv("TEST_DATABASE_URL") != "" {
		fmt.Println("these tests read no database: the run without TEST_DATABASE_URL runs them")
		return 0
	}
	return m.Run()
}
