package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/internal/apitest"
	"github.com/propertyrecords/inventory/internal/testdb"
)

// TestCompanyCommandNamesTheCompanyGraphQLShows: `inventoryd company --id
// --name` names a company, renames it when run again, and the server's
// Query.company answers the name; a bad id or an empty name is refused.
func TestCompanyCommandNamesTheCompanyGraphQLShows(t *testing.T) {
	url, data := testdb.DemoRecords.URL(t), t.TempDir()
	id := uuid.NewString()
	for _, name := range []string{"Inmobiliaria Uno", "Inmobiliaria Dos S.A.S."} {
		out, _, err := runCommand(t, url, data, "", "company", "--id", id, "--name", name)
		if err != nil || !strings.Contains(out, name) {
			t.Fatalf("company --name %q: %q, %v", name, out, err)
		}
	}
	for _, args := range [][]string{
		{"company", "--id", "nope", "--name", "X"},
		{"company", "--id", id, "--name", ""},
		{"company", "--id", id, "--name", strings.Repeat("x", 201)},
	} {
		if _, _, err := runCommand(t, url, data, "", args...); err == nil {
			t.Errorf("%q: taken, want a refusal", args)
		}
	}
	m := launchOn(t, url, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	closeAfter(t, m)
	var got struct {
		Company *struct {
			ID, Name string
		} `json:"company"`
	}
	(&apitest.Server{URL: m.URL()}).MustData(t, id, `{ company { id name } }`, nil, &got)
	if got.Company == nil || got.Company.ID != id || got.Company.Name != "Inmobiliaria Dos S.A.S." {
		t.Errorf("company: got %+v, want %s named Inmobiliaria Dos S.A.S.", got.Company, id)
	}
}
