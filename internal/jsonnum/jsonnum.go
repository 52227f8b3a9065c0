// Package jsonnum reads JSON number literals exactly, for the redaction of
// numbers a tool may write in another form than it was sent in (runtime)
// and for identities taken from big numbers (toolspec).
package jsonnum

import (
	"math/big"
	"strconv"
	"strings"
)

// IntegerDigits returns the decimal digits of the JSON number literal s
// when its exact value is an integer ("1.2345678901234567891e19" gives
// "12345678901234567891"). The exponent is bounded (±400), so that the
// exact value stays small to compute.
func IntegerDigits(s string) (string, bool) {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 400 || e < -400 {
			return "", false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return "", false
	}
	return r.Num().String(), true
}
