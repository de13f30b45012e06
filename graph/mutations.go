package graph

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/propertyrecords/inventory/internal/files"
	"github.com/propertyrecords/inventory/internal/inventorytype"
	"github.com/propertyrecords/inventory/internal/records"
)

// The inputs of the mutations (mutations.graphql), each the tree of
// internal/records in GraphQL's shape. entgql's generated inputs name an
// edge's records by their ids (environmentIDs: [ID!]); an inventory is made
// with its rooms and items in one request, so these are written by hand.

// CreateInventoryInput is createInventory's input.
type CreateInventoryInput struct {
	ID            *uuid.UUID          `json:"id"`
	PropertyID    uuid.UUID           `json:"propertyId"`
	InventoryType inventorytype.Type  `json:"inventoryType"`
	RentalPrice   decimal.Decimal     `json:"rentalPrice"`
	Deposit       *decimal.Decimal    `json:"deposit"`
	Currency      string              `json:"currency"`
	Environments  []*EnvironmentInput `json:"environments"`
	// RequiredSignatures has its default in the schema ([AGENT, OWNER]).
	RequiredSignatures []records.Party `json:"requiredSignatures"`
}

// UpdateInventoryInput is updateInventory's input.
type UpdateInventoryInput struct {
	ID              uuid.UUID           `json:"id"`
	ExpectedVersion int                 `json:"expectedVersion"`
	InventoryType   *inventorytype.Type `json:"inventoryType"`
	RentalPrice     *decimal.Decimal    `json:"rentalPrice"`
	Deposit         *decimal.Decimal    `json:"deposit"`
	Currency        *string             `json:"currency"`
	// Environments is nil when not given: the tree stays.
	Environments []*EnvironmentInput `json:"environments"`
}

// EnvironmentInput is a room of either input.
type EnvironmentInput struct {
	ID          *uuid.UUID   `json:"id"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Level       int          `json:"level"`
	Items       []*ItemInput `json:"items"`
}

// ItemInput is an item of a room.
type ItemInput struct {
	ID          *uuid.UUID `json:"id"`
	Name        string     `json:"name"`
	MaterialID  uuid.UUID  `json:"materialId"`
	Rating      int        `json:"rating"`
	ToRepair    bool       `json:"toRepair"`
	Description string     `json:"description"`
	Order       *int       `json:"order"`
}

// SignInventoryInput is signInventory's input.
type SignInventoryInput struct {
	InventoryID     uuid.UUID     `json:"inventoryId"`
	Party           records.Party `json:"party"`
	SignerName      string        `json:"signerName"`
	Remote          bool          `json:"remote"`
	ExpectedVersion *int          `json:"expectedVersion"`
}

// signing is the signature the input states.
func (in *SignInventoryInput) signing() records.Signing {
	return records.Signing{InventoryID: in.InventoryID, Party: in.Party, SignerName: in.SignerName,
		Remote: in.Remote, ExpectedVersion: in.ExpectedVersion}
}

// RequestSignatureInput is requestSignature's input.
type RequestSignatureInput struct {
	InventoryID uuid.UUID     `json:"inventoryId"`
	Party       records.Party `json:"party"`
	SignerName  string        `json:"signerName"`
	ExpiresIn   *int          `json:"expiresIn"`
}

// request is the link the input asks for.
func (in *RequestSignatureInput) request() records.LinkRequest {
	return records.LinkRequest{InventoryID: in.InventoryID, Party: in.Party, SignerName: in.SignerName, ExpiresIn: in.ExpiresIn}
}

// SignPath starts the path of a signature link's page (internal/signpage):
// the token follows it.
const SignPath = "/sign/"

// signURL is the page of the link token names, under the request's base
// URL (as the download URLs are: files.BaseURL).
func signURL(ctx context.Context, token string) string {
	return files.BaseURL(ctx) + SignPath + token
}

// CancelSignatureRequestInput is cancelSignatureRequest's input.
type CancelSignatureRequestInput struct {
	InventoryID uuid.UUID     `json:"inventoryId"`
	Party       records.Party `json:"party"`
}

// SignatureLink is a link requestSignature issued.
type SignatureLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// CancelSignatureRequestPayload is what cancelSignatureRequest did.
type CancelSignatureRequestPayload struct {
	Cancelled bool `json:"cancelled"`
}

// InventoryPayload is what both mutations answer: the inventory written,
// loaded by its resolver with what the query selects below it.
type InventoryPayload struct {
	ID uuid.UUID
	// Written is the inventory as createInventory wrote it, answered
	// without reading it back; nil: it is read.
	Written *records.WrittenTree
}

// tree is the inventory the input describes.
func (in *CreateInventoryInput) tree() *records.Inventory {
	inv := &records.Inventory{PropertyID: in.PropertyID, Type: in.InventoryType, RentalPrice: in.RentalPrice,
		Deposit: in.Deposit, Currency: in.Currency, Environments: environments(in.Environments), RequiredSignatures: in.RequiredSignatures}
	if in.ID != nil {
		inv.ID = *in.ID
	}
	return inv
}

// change is the change the input describes.
func (in *UpdateInventoryInput) change() *records.Change {
	ch := &records.Change{ID: in.ID, ExpectedVersion: in.ExpectedVersion, Type: in.InventoryType,
		RentalPrice: in.RentalPrice, Deposit: in.Deposit, Currency: in.Currency}
	if in.Environments != nil {
		envs := environments(in.Environments)
		ch.Environments = &envs
	}
	return ch
}

// environments are the rooms given, each ordered by its place in the list.
func environments(in []*EnvironmentInput) []records.Environment {
	out := make([]records.Environment, len(in))
	for i, env := range in {
		out[i] = records.Environment{ID: orNil(env.ID), Name: env.Name, Description: env.Description, Level: env.Level, Order: i}
		for _, it := range env.Items {
			out[i].Items = append(out[i].Items, records.Item{ID: orNil(it.ID), Name: it.Name, Description: it.Description,
				MaterialID: it.MaterialID, Rating: it.Rating, Order: it.Order, ToRepair: it.ToRepair})
		}
	}
	return out
}

func orNil(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

// payload answers a mutation that wrote the inventory id, or failed.
func payload(id uuid.UUID, err error) (*InventoryPayload, error) {
	if err != nil {
		return nil, err
	}
	return &InventoryPayload{ID: id}, nil
}

// PhotoPayload is what addItemPhoto answers: the photo, loaded by its
// resolver.
type PhotoPayload struct {
	ID uuid.UUID
}

// RemovedPhoto is what removeItemPhoto answers.
type RemovedPhoto struct {
	PhotoID uuid.UUID `json:"photoId"`
	ItemID  uuid.UUID
}
