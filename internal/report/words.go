package report

import (
	"fmt"
	"strings"
)

// The reports are written for Colombia (es-CO), in its Spanish and with its
// way of writing numbers: what a party reads in a dispute is what they
// would have written themselves.

// currencySymbols are the signs written before an amount, by ISO 4217
// code; the code follows the amount in any case, so that "$" is never
// taken for another dollar.
var currencySymbols = map[string]string{"COP": "$", "USD": "$", "MXN": "$", "CLP": "$", "ARS": "$", "EUR": "€"}

// money is amount (a decimal's text, "1800000.00") in currency as es-CO
// writes it: "$ 1.800.000 COP", thousands by "." and decimals by ",",
// shown only when not zero ("$ 1.800.000,50 COP"). It works on the text,
// digit by digit: never through a float, which would round a large amount.
// Text that is not a decimal is printed as it is.
func money(amount, currency string) string {
	sign, digits := "", amount
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	whole, fraction, _ := strings.Cut(digits, ".")
	if whole == "" || !allDigits(whole) || !allDigits(fraction) {
		return strings.TrimSpace(amount + " " + currency)
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(d)
	}
	if strings.Trim(fraction, "0") != "" {
		b.WriteString("," + fraction)
	}
	out := sign + b.String()
	if symbol := currencySymbols[currency]; symbol != "" {
		out = symbol + " " + out
	}
	return strings.TrimSpace(out + " " + currency)
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// plural is n with the word that agrees with it: "1 mejoró", "2 mejoraron".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// propertyKind is the property's type and its levels as a person writes
// them: "Local de 2 niveles", "Casa de 1 nivel"; the type alone where the
// record gives no levels, the levels alone where it gives no type.
func propertyKind(kind string, levels int) string {
	kind = strings.TrimSpace(kind)
	switch {
	case levels <= 0:
		return kind
	case kind == "":
		return plural(levels, "nivel", "niveles")
	}
	return kind + " de " + plural(levels, "nivel", "niveles")
}
