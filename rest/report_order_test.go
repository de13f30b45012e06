package rest_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// The signed PDF lists rooms and items in the order A1 and GraphQL give
// them, so that a party reading the PDF beside the app finds each line where
// the other shows it.
func TestTheSignedPDFListsItemsInTheAPIsOrder(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (poppler-utils) is not installed: .ci/run installs it")
	}
	a := demoWithFiles(t)
	inv := signedInventory(t, a)
	var gql struct {
		Node struct {
			PDFURL       string `json:"pdfUrl"`
			Environments []struct {
				Name  string `json:"name"`
				Items []struct {
					Name string `json:"name"`
				} `json:"items"`
			} `json:"environments"`
		} `json:"node"`
	}
	a.MustData(t, companyA, `query($id: ID!) { node(id: $id) { ... on Inventory { pdfUrl environments { name items { name } } } } }`,
		map[string]any{"id": inv.InventoryID}, &gql)
	res := a.get(t, strings.TrimPrefix(gql.Node.PDFURL, a.URL))
	cmd := exec.Command("pdftotext", "-layout", "-", "-")
	cmd.Stdin = bytes.NewReader(res.body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	at, lines := 0, 0
	for _, env := range gql.Node.Environments {
		for _, want := range append([]string{env.Name}, names(env.Items)...) {
			i := strings.Index(text[at:], want)
			if i < 0 {
				t.Fatalf("after line %d the PDF has no %q in the API's order", lines, want)
			}
			at += i + len(want)
			lines++
		}
	}
	if lines < 4 {
		t.Fatalf("%d rooms and items: want a record with some", lines)
	}
}

func names[T interface {
	~struct {
		Name string `json:"name"`
	}
}](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = struct {
			Name string `json:"name"`
		}(it).Name
	}
	return out
}
