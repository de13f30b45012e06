// Package inventorytype holds the four inventory type codes of the legacy
// contract. The code (0..3) is what is stored and what REST clients send; the
// GraphQL enum name and the Spanish display name are derived from it.
package inventorytype

import (
	"fmt"
	"io"
	"strconv"

	"github.com/propertyrecords/inventory/internal/apperr"
)

// Type is an inventory type code.
type Type int

const (
	Captacion    Type = 0 // property intake
	Colocacion   Type = 1 // placement
	PreVisita    Type = 2 // pre-visit
	Desocupacion Type = 3 // vacating
)

// All lists every type in code order.
var All = []Type{Captacion, Colocacion, PreVisita, Desocupacion}

var (
	names     = [...]string{"captación", "colocación", "pre-visita", "desocupación"}
	enumNames = [...]string{"CAPTACION", "COLOCACION", "PRE_VISITA", "DESOCUPACION"}
	// quotedEnumNames are enumNames as JSON strings, written as they are:
	// every answer with a page of inventories writes one a row.
	quotedEnumNames = [...]string{`"CAPTACION"`, `"COLOCACION"`, `"PRE_VISITA"`, `"DESOCUPACION"`}
)

// Valid reports whether t is one of the four codes.
func (t Type) Valid() bool { return t >= Captacion && t <= Desocupacion }

// Code is the stable numeric code.
func (t Type) Code() int { return int(t) }

// Name is the display name used by the legacy contract, e.g. "captación".
func (t Type) Name() string {
	if !t.Valid() {
		return ""
	}
	return names[t]
}

// String is the GraphQL enum name, e.g. "PRE_VISITA".
func (t Type) String() string {
	if !t.Valid() {
		return strconv.Itoa(int(t))
	}
	return enumNames[t]
}

// Validate is ent's field validator.
func Validate(v int) error {
	if !Type(v).Valid() {
		return fmt.Errorf("inventory type %d is not one of 0..3", v)
	}
	return nil
}

// Parse reads a type from its code ("0".."3") or its enum name.
func Parse(s string) (Type, error) {
	for _, t := range All {
		if s == t.String() || s == strconv.Itoa(t.Code()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%q is not an inventory type: use 0, 1, 2 or 3", s)
}

// MarshalGQL writes the enum name.
func (t Type) MarshalGQL(w io.Writer) {
	if !t.Valid() {
		_, _ = io.WriteString(w, strconv.Quote(t.String()))
		return
	}
	_, _ = io.WriteString(w, quotedEnumNames[t])
}

// UnmarshalGQL reads the enum name.
func (t *Type) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return apperr.Errorf(apperr.Invalid, "inventory type must be an enum name, got %T", v)
	}
	parsed, err := Parse(s)
	if err != nil {
		return apperr.Errorf(apperr.Invalid, "%v", err)
	}
	*t = parsed
	return nil
}
