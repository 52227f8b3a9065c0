// Package service checks and creates through another package's store,
// directly and through interfaces (shape 5 across packages).
package service

import (
	"context"
	"errors"

	"cbcsplit/store"
)

var errInUse = errors.New("alias in use")

func SetAlias(ctx context.Context, s *store.Store, alias, room string) error {
	got, err := s.RoomFor(ctx, alias)
	if err != nil {
		return err
	}
	if got == "" {
		return s.InsertAlias(ctx, alias, room) // want `INSERT INTO room_aliases runs when the SELECT from room_aliases`
	}
	return errInUse
}

func SetAliasChecked(ctx context.Context, s *store.Store, alias, room string) error {
	got, err := s.RoomFor(ctx, alias)
	if err != nil {
		return err
	}
	if got == "" {
		return s.InsertAliasChecked(ctx, alias, room)
	}
	return errInUse
}

// Database is implemented by *store.Store only (memAliases has no
// Close).
type Database interface {
	RoomFor(ctx context.Context, alias string) (string, error)
	InsertAlias(ctx context.Context, alias, room string) error
	Close() error
}

func SetAliasVia(ctx context.Context, db Database, alias, room string) error {
	if got, err := db.RoomFor(ctx, alias); err != nil || got != "" {
		return errInUse
	}
	return db.InsertAlias(ctx, alias, room) // want `INSERT INTO room_aliases runs when`
}

// Aliases is implemented by the store and by memAliases: which one runs
// is not known here.
type Aliases interface {
	RoomFor(ctx context.Context, alias string) (string, error)
	InsertAlias(ctx context.Context, alias, room string) error
}

type memAliases struct{ m map[string]string }

func (m *memAliases) RoomFor(ctx context.Context, alias string) (string, error) {
	return m.m[alias], nil
}
func (m *memAliases) InsertAlias(ctx context.Context, alias, room string) error {
	m.m[alias] = room
	return nil
}

func SetAliasAmbiguous(ctx context.Context, db Aliases, alias, room string) error {
	if got, err := db.RoomFor(ctx, alias); err != nil || got != "" {
		return errInUse
	}
	return db.InsertAlias(ctx, alias, room)
}
