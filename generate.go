// Package inventory is the Inventory and Property Records Service.
//
// The ent step must run before gqlgen: gqlgen binds the types ent generates.
package inventory

//go:generate go run -mod=mod ./ent/entc.go
//go:generate go run ./graph/gqlgen.go
