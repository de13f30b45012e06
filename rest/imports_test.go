package rest_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// REST must never have a query path of its own: its code may not import ent,
// SQL drivers or the store, only the GraphQL executor.
func TestRESTDoesNotReachTheDatabase(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"entgo.io/ent", "database/sql", "/ent", "/internal/store", "jackc/pgx", "modernc.org/sqlite"}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if strings.HasPrefix(path, bad) || strings.HasSuffix(path, bad) || strings.Contains(path, bad+"/") {
					t.Errorf("%s imports %s: REST must go through the GraphQL executor", file, path)
				}
			}
		}
	}
}
