package rest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/propertyrecords/inventory/internal/onewrite"
)

// list is a JSON array that is [] rather than null when empty, as legacy
// clients expect (e.g. Photo: "empty array when no photo").
type list[T any] []T

func (l list[T]) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]T(l))
}

// nodes reads the nodes of a GraphQL connection ({"edges": [{"node": …}]})
// and writes them as a plain list, the legacy shape.
type nodes[T any] list[T]

func (n *nodes[T]) UnmarshalJSON(b []byte) error {
	var conn struct {
		Edges []struct{ Node T }
	}
	if err := json.Unmarshal(b, &conn); err != nil {
		return err
	}
	*n = make(nodes[T], len(conn.Edges))
	for i, e := range conn.Edges {
		(*n)[i] = e.Node
	}
	return nil
}

func (n nodes[T]) MarshalJSON() ([]byte, error) { return list[T](n).MarshalJSON() }

// typeName is the legacy PropertyType object, {"typeName": "Casa"}, read
// from GraphQL's plain propertyType string.
type typeName string

func (t typeName) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		TypeName string `json:"typeName"`
	}{string(t)})
}

// pageMeta is the paging metadata of spec section 4, rule 1, as both
// GraphQL's page types and group B's list data spell it.
type pageMeta struct {
	Page            int  `json:"page"`
	PageSize        int  `json:"pageSize"`
	TotalRecords    int  `json:"totalRecords"`
	TotalPages      int  `json:"totalPages"`
	HasPreviousPage bool `json:"hasPreviousPage"`
	HasNextPage     bool `json:"hasNextPage"`
}

// members writes a JSON object of GraphQL's answer, whose operation's
// aliases already spell the legacy names, as it is, except for the members
// it names, which it writes through their function (a price as a number, a
// null as ""), and GraphQL's own (__typename), which it leaves out. List
// endpoints are written this way, straight from GraphQL's bytes: decoding
// them into structs and encoding them again cost a REST request a third
// more CPU than its GraphQL document.
type members map[string]func(buf []byte, v gjson.Result) []byte

func (m members) object(buf []byte, v gjson.Result) []byte {
	if !v.IsObject() {
		return append(buf, v.Raw...)
	}
	buf = append(buf, '{')
	first := true
	v.ForEach(func(key, value gjson.Result) bool {
		if strings.HasPrefix(key.Str, "__") {
			return true
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(append(buf, key.Raw...), ':')
		if write := m[key.Str]; write != nil {
			buf = write(buf, value)
		} else {
			buf = append(buf, value.Raw...)
		}
		return true
	})
	return append(buf, '}')
}

// list writes an array of objects, each through object; a null as [].
func (m members) list(buf []byte, v gjson.Result) []byte {
	if !v.IsArray() {
		return append(buf, "[]"...)
	}
	buf = append(buf, '[')
	first := true
	v.ForEach(func(_, element gjson.Result) bool {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = m.object(buf, element)
		return true
	})
	return append(buf, ']')
}

// asNumber writes GraphQL's exact decimal text (a Decimal is a string) as
// a JSON number.
func asNumber(buf []byte, v gjson.Result) []byte {
	if v.Type != gjson.String {
		return append(buf, v.Raw...)
	}
	return append(buf, v.Str...)
}

// typeNameObject writes a property type as the legacy {"typeName": …}
// object.
func typeNameObject(buf []byte, v gjson.Result) []byte {
	return append(nullAsEmpty(append(buf, `{"typeName":`...), v), '}')
}

// nullAsEmpty writes a null string as "".
func nullAsEmpty(buf []byte, v gjson.Result) []byte {
	if v.Type == gjson.Null {
		return append(buf, `""`...)
	}
	return append(buf, v.Raw...)
}

// metaOf reads the paging members of a GraphQL page in one pass.
func metaOf(page gjson.Result) pageMeta {
	var m pageMeta
	page.ForEach(func(key, value gjson.Result) bool {
		switch key.Str {
		case "page":
			m.Page = int(value.Int())
		case "pageSize":
			m.PageSize = int(value.Int())
		case "totalRecords":
			m.TotalRecords = int(value.Int())
		case "totalPages":
			m.TotalPages = int(value.Int())
		case "hasPreviousPage":
			m.HasPreviousPage = value.Bool()
		case "hasNextPage":
			m.HasNextPage = value.Bool()
		}
		return true
	})
	return m
}

// writeRaw writes a JSON body already encoded, ended by a newline as
// json.Encoder ends writeJSON's.
func writeRaw(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = onewrite.Answer(w, r, status, append(body, '\n'))
}
