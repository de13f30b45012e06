package records

// APINames are the GraphQL API's names of a tree's fields, relative to the
// mutation's input (environments[1].items[0].rating), as front ends bind
// errors to their form's fields. The generator's errors use them too.
var APINames = &Names{
	ID: "id", PropertyID: "propertyId", Type: "inventoryType", RentalPrice: "rentalPrice", Deposit: "deposit", Currency: "currency",
	Signed: "isSigned", RemoteSigned: "isRemoteSigned", ApprovalCode: "approvalCode", SignatureDate: "signatureDate", PDF: "pdfSha256",
	RequiredSignatures: "requiredSignatures",
	Environments:       "environments", EnvironmentID: "id", EnvironmentName: "name", EnvironmentDescription: "description",
	Level: "level", EnvironmentOrder: "order",
	Items: "items", ItemID: "id", ItemName: "name", ItemDescription: "description", Rating: "rating",
	ItemOrder: "order", MaterialID: "materialId",
	Photos: "photos", PhotoID: "id", StorageReference: "storageReference", PhotoSHA256: "sha256",
	PropertyCode: "code", PropertyAddress: "address", PropertyNeighborhood: "neighborhood", PropertyCity: "city",
	PropertyType: "propertyType", PropertyDetail: "detail", PropertyLevels: "levels",
}
