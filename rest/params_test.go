package rest_test

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// A string parameter is bounded as GraphQL's string arguments are (REST
// passes its parameters as the operation's variables): an over-long city
// filter is a 400 naming it, not an INTERNAL error from SQLite's LIKE
// pattern limit. And no message quotes more than a short prefix of what it
// refuses.
func TestOverlongParametersAreRefusedByName(t *testing.T) {
	a := demo(t)
	long := strings.Repeat("ab", 25_001)
	res := a.get(t, base+"/repairs?x-company-id="+companyA+"&city="+long)
	code, parameter := errorOf(t, res)
	if res.status != http.StatusBadRequest || code != "INVALID_ARGUMENT" || parameter != "city" {
		t.Errorf("B5 with a 50,002-character city: got %d %s on %q: %.300s; want 400 INVALID_ARGUMENT on city", res.status, code, parameter, res.body)
	}

	for _, path := range []string{
		base + "/inventories?x-company-id=" + companyA + "&page=" + long,
		base + "/inventories?x-company-id=" + companyA + "&sortBy=" + long,
		base + "/inventories?x-company-id=" + companyA + "&isSigned=" + long,
		base + "/inventories/details?x-company-id=" + companyA + "&InventoryId=" + long,
		base + "/repairs?x-company-id=" + companyA + "&since=" + long,
		base + "/inventories?x-company-id=" + strings.Repeat("é", 100),
	} {
		res := a.get(t, path)
		if res.status != http.StatusBadRequest || len(res.body) > 600 || strings.Contains(string(res.body), strings.Repeat("ab", 40)) ||
			!utf8.Valid(res.body) || strings.Contains(string(res.body), `\ufffd`) || strings.Contains(string(res.body), `\x`) {
			t.Errorf("%.120s…: got %d %.600s; want 400 quoting at most a short prefix, in whole characters", path, res.status, res.body)
		}
	}
}
