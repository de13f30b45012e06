package records

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/propertyrecords/inventory/ent"
	"github.com/propertyrecords/inventory/ent/company"
	"github.com/propertyrecords/inventory/ent/schema"
	"github.com/propertyrecords/inventory/internal/apperr"
)

// OwnCompany is the caller's company as ctx may read it; nil while it has
// no name.
func OwnCompany(ctx context.Context, client *ent.Client) (*ent.Company, error) {
	c, err := client.Company.Query().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return c, err
}

// ValidateCompanyName checks a company's name as the schema bounds it, the
// error naming the field as field.
func ValidateCompanyName(field, name string) *apperr.Error {
	c := &checker{names: &Names{}, env: -1, item: -1, photo: -1}
	c.required(field, name, schema.MaxCompanyNameRunes, company.NameValidator)
	return c.err
}

// NameCompany sets the name of company id, making its row the first time:
// the operator's act (`inventoryd company`, an import), so ctx must be
// tenant.Unrestricted. A name the company already has writes nothing.
// name must have passed ValidateCompanyName.
func NameCompany(ctx context.Context, client *ent.Client, id uuid.UUID, name string) error {
	// Renamed where it has another name, else made; a row made meanwhile
	// by another writer is renamed on the second try.
	for try := 0; ; try++ {
		stored, err := client.Company.Query().Where(company.ID(id)).Only(ctx)
		if err == nil && stored.Name == name {
			return nil
		}
		n, err := client.Company.Update().Where(company.ID(id)).SetName(name).Save(ctx)
		if err == nil && n == 0 {
			err = client.Company.Create().SetID(id).SetName(name).Exec(ctx)
			if ent.IsConstraintError(err) && try == 0 {
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("records: naming company %s: %w", id, err)
		}
		return nil
	}
}
