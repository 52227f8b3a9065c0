// Package generic holds generic annotated functions and methods of generic
// types.
package generic

import (
	"context"
	"fmt"
	"io"
)

// Number is a type set constraint.
type Number interface {
	~int | ~int64 | ~float64
}

// Sum adds numbers.
//
//agentidem:read
func Sum[N Number](ctx context.Context, xs ...N) (N, error) {
	var s N
	for _, x := range xs {
		s += x
	}
	return s, nil
}

// Save stores a value of any type under a key.
//
//agentidem:write identity=key
func Save[K comparable, V any](m map[K]V, key K, v V) error {
	m[key] = v
	return nil
}

// Label formats a Stringer.
//
//agentidem:read
func Label[S fmt.Stringer](s S) string { return s.String() }

// Box holds values by key.
type Box[K comparable, V any] struct {
	items map[K]V
}

// NewBox returns an empty box.
func NewBox[K comparable, V any]() *Box[K, V] { return &Box[K, V]{items: map[K]V{}} }

// Put is a method of a generic type with a pointer receiver.
//
//agentidem:write identity=k
func (b *Box[K, V]) Put(ctx context.Context, k K, v V) error {
	b.items[k] = v
	return nil
}

// Get is a method of a generic type with a value receiver.
//
//agentidem:read
func (b Box[K, V]) Get(k K) (V, bool) {
	v, ok := b.items[k]
	return v, ok
}

// Pair is a generic type whose receiver names its parameters differently.
type Pair[A, B any] struct {
	First  A
	Second B
}

// Swap returns the pair swapped.
//
//agentidem:read
func (p Pair[X, Y]) Swap() Pair[Y, X] { return Pair[Y, X]{p.Second, p.First} }

// Render has an inline constraint with a method that mentions an imported
// type, and a parameter of an interface type literal.
//
//agentidem:read
func Render[T interface {
	Format(w io.Writer, verbose ...bool) error
}](v T, out interface {
	io.Writer
	Flush() error
}) error {
	if err := v.Format(out); err != nil {
		return err
	}
	return out.Flush()
}
