package graph

import (
	"context"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/internal/paging"
)

// InventoryPage is one numbered page of inventories. Its rows are loaded when
// data is resolved, so that field collection sees data's own selection and
// eager-loads exactly the nested fields asked for.
type InventoryPage struct {
	paging.Meta
	query *ent.InventoryQuery
}

func (p *InventoryPage) Data(ctx context.Context) ([]*ent.Inventory, error) {
	q, err := p.query.CollectFields(ctx)
	if err != nil {
		return nil, err
	}
	return q.All(ctx)
}

// PropertyPage is one numbered page of properties; see InventoryPage.
type PropertyPage struct {
	paging.Meta
	query *ent.PropertyQuery
}

func (p *PropertyPage) Data(ctx context.Context) ([]*ent.Property, error) {
	q, err := p.query.CollectFields(ctx)
	if err != nil {
		return nil, err
	}
	return q.All(ctx)
}

// RepairPage is one numbered page of the repair list; see InventoryPage.
type RepairPage struct {
	paging.Meta
	query *ent.ItemQuery
}

func (p *RepairPage) Data(ctx context.Context) ([]*ent.Item, error) {
	q, err := p.query.CollectFields(ctx)
	if err != nil {
		return nil, err
	}
	return q.All(ctx)
}
