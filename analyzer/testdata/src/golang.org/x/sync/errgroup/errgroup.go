// Package errgroup is a stub of golang.org/x/sync/errgroup for tests.
package errgroup

import "context"

type Group struct{}

func WithContext(ctx context.Context) (*Group, context.Context) { return &Group{}, ctx }

func (g *Group) Go(f func() error)         { go f() }
func (g *Group) Wait() error               { return nil }
func (g *Group) SetLimit(n int)            {}
func (g *Group) TryGo(f func() error) bool { go f(); return true }
