// Package hostile declares names that generated code used to collide with:
// package-level names equal to the packages the generated file imports,
// parameters named any and nil, a blank receiver type parameter, a function
// and a method whose descriptors were named alike, a type parameter named
// like an imported package, unnamed parameters next to a package-level name
// the identity uses, a string literal holding the generator's placeholder,
// and an identity that panics on a nil pointer.
package hostile

import (
	stdctx "context"
	"errors"
	neturl "net/url"
)

// url and context are package-level names equal to the names of packages
// that wrappers need (net/url, context).
var url = "https://shop.test"

func context() string { return "ctx" }

// p1 is a package-level name that an unnamed parameter's synthesized name
// would hide.
var p1 = "pkg-p1"

// Any has a parameter named any.
//
//agentidem:write identity=any
func Any(ctx stdctx.Context, any string) error { return nil }

// Nil has a parameter named nil.
//
//agentidem:write identity=nil
func Nil(nil int) (int, error) { return nil, errors.New(context()) }

// Box is generic.
type Box[T any] struct{ v T }

// Put has a receiver whose type parameter is blank.
//
//agentidem:write identity=k
func (b *Box[_]) Put(k string) error { return nil }

// A has a method X, and a function A_X exists too.
type A struct{}

// X is a method of A.
//
//agentidem:write identity=id
func (A) X(id string) error { return nil }

// A_X is a function whose wrapper's descriptor was named like (A).X's.
//
//agentidem:write identity=id
func A_X(id string) error { return nil }

// Typed has a type parameter named like an imported package.
//
//agentidem:read entity=u.Host
func Typed[url any](u *neturl.URL, v url) (string, error) { return u.Host, nil }

// Unnamed has unnamed parameters; its identity is the package-level p1.
//
//agentidem:write identity=p1
func Unnamed(string, int) error { return nil }

// Literal's identity holds the generator's placeholder text.
//
//agentidem:write identity=neturl.PathEscape("agentidemQual0_"+s)
func Literal(s string) error { return nil }

// Order is shipped.
type Order struct{ ID string }

// Ship returns its own error for a nil order: its identity o.ID panics on
// one, which must not change what the agent sees.
//
//agentidem:write identity=o.ID
func Ship(o *Order) error {
	if o == nil {
		return errors.New("ship: no order")
	}
	return nil
}

// Site uses the package-level url in its identity.
//
//agentidem:write identity=url+path
func Site(path string) error { return nil }
