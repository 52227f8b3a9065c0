// Package imports uses imported packages in identity and entity
// expressions, one of them under an alias.
package imports

import (
	"context"
	"net/url"
	"path"
	str "strings"
	. "unicode"
)

// Order is placed by a customer.
type Order struct {
	Customer string
	Lines    []string
}

// Place writes an order; the identity normalises the customer with an
// aliased import and the entity joins a path.
//
//agentidem:write identity=str.ToLower(o.Customer),str.Join(o.Lines,"+") entity=path.Join("orders",o.Customer)
func Place(ctx context.Context, o Order) (string, error) {
	return str.ToUpper(o.Customer), nil
}

// Fetch reads a URL; its entity is the host.
//
//agentidem:read entity=u.Host
func Fetch(ctx context.Context, u *url.URL) ([]byte, error) {
	return []byte(path.Base(u.Path)), nil
}

// Tag writes with a quoted identity holding spaces and a constant.
//
//agentidem:write identity="str.TrimSpace(name), url.PathEscape(\"a b\")"
func Tag(name string) error { return nil }

// Normalize writes with an identity that uses a dot-imported function.
//
//agentidem:write identity=str.ToLower(name),ToLower('A'),MaxRune
func Normalize(ctx context.Context, name string) error {
	_ = IsUpper
	return nil
}
