// Package transfer moves inventories in and out of the service as
// newline-delimited JSON: one inventory per line, in the field names of the
// legacy A1 detail (spec section 2.1) plus its property and the fields A1 does
// not show. docs/import-format.md documents it.
package transfer

// Record is one line: an inventory with its property, environments, items
// and photos.
type Record struct {
	CompanyID string `json:"CompanyId"`
	// CompanyName, when given, names the company (as `inventoryd company`
	// does); an export writes it on every line of a named company.
	CompanyName   string `json:"CompanyName,omitempty"`
	InventoryID   string `json:"InventoryId"`
	InventoryType *int   `json:"InventoryType"`
	RentalPrice   string `json:"RentalPrice"`
	// Deposit is decimal text, as RentalPrice; left out where none was
	// recorded.
	Deposit            *string `json:"Deposit,omitempty"`
	Currency           string  `json:"Currency,omitempty"`
	IsSigned           bool    `json:"IsSigned"`
	IsRemoteSigned     bool    `json:"IsRemoteSigned"`
	ApprovalCode       *string `json:"Approval_Code"`
	CreationDate       string  `json:"CreationDate"`
	SignatureDate      *string `json:"SignatureDate"`
	AgentSignatureDate *string `json:"AgentSignatureDate"`
	OwnerSignatureDate *string `json:"OwnerSignatureDate"`
	// TenantSignatureDate and RequiredSignatures are left out of a line
	// where the tenant neither signed nor must (the parties required are
	// then the agent and the owner), as in files written before the tenant
	// signed.
	TenantSignatureDate *string  `json:"TenantSignatureDate,omitempty"`
	RequiredSignatures  []string `json:"RequiredSignatures,omitempty"`
	PdfSha256           *string  `json:"PdfSha256"`
	// PdfFile is the signed PDF's path, relative to the files folder.
	PdfFile                string        `json:"PdfFile,omitempty"`
	Property               *Property     `json:"Property"`
	EnvironmentDiagnostics []Environment `json:"EnvironmentDiagnostics"`
}

// Property is the inventory's property.
type Property struct {
	PropertyID   string  `json:"PropertyId"`
	Code         string  `json:"Code"`
	Address      string  `json:"Address"`
	Neighborhood string  `json:"Neighborhood"`
	City         string  `json:"City"`
	PropertyType string  `json:"PropertyType"`
	IsActive     *bool   `json:"IsActive"`
	Detail       *string `json:"Detail"`
	Levels       *int    `json:"Levels"`
	CreationDate string  `json:"CreationDate,omitempty"`
}

// Environment is a room or area of the inventory.
type Environment struct {
	EnvironmentID   string `json:"EnvironmentId,omitempty"`
	EnvironmentName string `json:"EnvironmentName"`
	Description     string `json:"Description"`
	Level           *int   `json:"Level"`
	Order           *int   `json:"Order"`
	ItemDiagnostic  []Item `json:"ItemDiagnostic"`
}

// Item is a diagnosed item of an environment.
type Item struct {
	ItemDiagnosticID string    `json:"ItemDiagnosticId,omitempty"`
	ItemName         string    `json:"ItemName"`
	Description      string    `json:"Description"`
	Rating           *int      `json:"Rating"`
	Order            *int      `json:"Order"`
	ToRepair         bool      `json:"ToRepair"`
	Material         *Material `json:"Material"`
	Photo            []Photo   `json:"Photo"`
}

// Material names the item's material in the shared catalogue.
type Material struct {
	MaterialName string `json:"MaterialName"`
}

// Photo is a photo of an item.
type Photo struct {
	PhotoID          string  `json:"PhotoId,omitempty"`
	StorageReference string  `json:"StorageReference"`
	Sha256           *string `json:"Sha256"`
	// File is the photo's path, relative to the files folder.
	File string `json:"File,omitempty"`
}
