package rest

import "encoding/json"

// list is a JSON array that is [] rather than null when empty, as legacy
// clients expect (e.g. Photo: "empty array when no photo").
type list[T any] []T

func (l list[T]) MarshalJSON() ([]byte, error) {
	if l == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]T(l))
}

// rawList is a JSON array passed on as GraphQL wrote it, for lists that
// the operation's aliases already give the legacy shape: decoding them into
// structs only to encode them again was most of a REST request's own cost.
// A null (GraphQL's lists here are non-null) is written as [].
type rawList json.RawMessage

func (l *rawList) UnmarshalJSON(b []byte) error {
	*l = append((*l)[:0], b...)
	return nil
}

func (l rawList) MarshalJSON() ([]byte, error) {
	if len(l) == 0 || string(l) == "null" {
		return []byte("[]"), nil
	}
	return l, nil
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

// typed is the __typename of a node, to tell an id of the wrong type.
type typed struct {
	Typename string `json:"__typename"`
}
