package store

import (
	"context"
	"fmt"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/property"
	"github.com/propertyrecords/inventory/internal/tenant"
)

var nodeTables = []string{property.Table, inventory.Table, environment.Table, item.Table, photo.Table, material.Table}

// NodeTables returns the table of each id that exists, in one statement.
//
// It reads ids across companies on purpose: it reveals only which table an
// existing id is in, and the node is then loaded through the tenancy-filtered
// client, so another company's id still reads as not found. A caller that may
// not read at all (no company) is refused before anything is looked up.
func (s *Store) NodeTables(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	if err := tenant.Authorize(ctx); err != nil {
		return nil, err
	}
	found := make(map[uuid.UUID]string, len(ids))
	if len(ids) == 0 {
		return found, nil
	}
	var (
		query strings.Builder
		args  []any
	)
	for i, table := range nodeTables {
		if i > 0 {
			query.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&query, "SELECT id, '%s' FROM %s WHERE id IN (", table, table)
		for j, id := range ids {
			if j > 0 {
				query.WriteString(", ")
			}
			args = append(args, id)
			query.WriteString(s.placeholder(len(args)))
		}
		query.WriteString(")")
	}
	var rows entsql.Rows
	if err := s.drv.Query(ctx, query.String(), args, &rows); err != nil {
		return nil, fmt.Errorf("store: locating nodes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id    uuid.UUID
			table string
		)
		if err := rows.Scan(&id, &table); err != nil {
			return nil, fmt.Errorf("store: locating nodes: %w", err)
		}
		found[id] = table
	}
	return found, rows.Err()
}

func (s *Store) placeholder(n int) string {
	if s.dialect == dialect.Postgres {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}
