package inventorytype

import (
	"strconv"
	"strings"
	"testing"
)

func TestMarshalGQLWritesTheQuotedEnumName(t *testing.T) {
	for _, typ := range append(All, Type(7), Type(-1)) {
		var b strings.Builder
		typ.MarshalGQL(&b)
		if want := strconv.Quote(typ.String()); b.String() != want {
			t.Errorf("%d: wrote %s, want %s", typ, b.String(), want)
		}
	}
}
