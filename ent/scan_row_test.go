package ent

import (
	"testing"

	"github.com/propertyrecords/inventory/ent/environment"
	"github.com/propertyrecords/inventory/ent/inventory"
	"github.com/propertyrecords/inventory/ent/item"
	"github.com/propertyrecords/inventory/ent/material"
	"github.com/propertyrecords/inventory/ent/photo"
	"github.com/propertyrecords/inventory/ent/property"
)

// ent/template/scan_row.tmpl: a row's scan destinations are one allocation,
// and no two rows share one.
func TestScanningARowAllocatesOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		columns []string
		scan    func([]string) ([]any, error)
	}{
		{"Property", property.Columns, (*Property)(nil).scanValues},
		{"Inventory", inventory.Columns, (*Inventory)(nil).scanValues},
		{"Environment", environment.Columns, (*Environment)(nil).scanValues},
		{"Item", item.Columns, (*Item)(nil).scanValues},
		{"Material", material.Columns, (*Material)(nil).scanValues},
		{"Photo", photo.Columns, (*Photo)(nil).scanValues},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if allocs := testing.AllocsPerRun(100, func() { _, _ = tc.scan(tc.columns) }); allocs != 1 {
				t.Errorf("scanning a row of %d columns allocates %v times, want 1", len(tc.columns), allocs)
			}
			first, _ := tc.scan(tc.columns)
			second, _ := tc.scan(tc.columns)
			for i := range first {
				if first[i] == second[i] {
					t.Errorf("two rows share the destination of column %s", tc.columns[i])
				}
			}
			// A column a modifier added, and more columns than the type has,
			// still get a destination each.
			extra := append(append([]string(nil), tc.columns...), "extra")
			values, _ := tc.scan(extra)
			if len(values) != len(extra) || values[len(extra)-1] == nil {
				t.Errorf("%d columns got %d destinations", len(extra), len(values))
			}
		})
	}
}
