// Package store is a store whose methods each run one statement; the
// check and the create are split across them (shape 5).
package store

import (
	"context"
	"database/sql"
	"errors"
)

// ErrAliasExists is returned when the alias is taken.
var ErrAliasExists = errors.New("alias exists")

var errInUse = errors.New("alias in use")

type Store struct{ db *sql.DB }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// RoomFor returns the room an alias points at, or "" when there is none.
func (s *Store) RoomFor(ctx context.Context, alias string) (string, error) {
	var room string
	err := s.db.QueryRowContext(ctx, "SELECT room_id FROM room_aliases WHERE alias = $1", alias).Scan(&room)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return room, err
}

// InsertAlias inserts an alias.
func (s *Store) InsertAlias(ctx context.Context, alias, room string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO room_aliases (alias, room_id) VALUES ($1, $2)", alias, room)
	return err
}

// InsertAliasOnce inserts an alias unless it exists.
func (s *Store) InsertAliasOnce(ctx context.Context, alias, room string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO room_aliases (alias, room_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", alias, room)
	return err
}

// InsertAliasChecked inserts an alias and reports a taken one as such.
func (s *Store) InsertAliasChecked(ctx context.Context, alias, room string) error {
	_, err := s.db.ExecContext(ctx, "INSERT INTO room_aliases (alias, room_id) VALUES ($1, $2)", alias, room)
	if isUniqueViolation(err) {
		return ErrAliasExists
	}
	return err
}

func isUniqueViolation(err error) bool { return false }

// lookup wraps RoomFor: it is summarized through it.
func (s *Store) lookup(ctx context.Context, alias string) (string, error) {
	return s.RoomFor(ctx, alias)
}

// CachedRoomFor returns something the read did not produce: not a read
// summary.
func (s *Store) CachedRoomFor(ctx context.Context, alias string, cache map[string]string) (string, error) {
	if r, ok := cache[alias]; ok {
		return r, nil
	}
	return s.RoomFor(ctx, alias)
}

func (s *Store) SetAlias(ctx context.Context, alias, room string) error {
	got, err := s.lookup(ctx, alias)
	if err != nil {
		return err
	}
	if got != "" {
		return errInUse
	}
	return s.InsertAlias(ctx, alias, room) // want `INSERT INTO room_aliases runs when the SELECT from room_aliases`
}

func (s *Store) SetAliasOnce(ctx context.Context, alias, room string) error {
	got, err := s.RoomFor(ctx, alias)
	if err != nil {
		return err
	}
	if got != "" {
		return errInUse
	}
	return s.InsertAliasOnce(ctx, alias, room)
}

func (s *Store) SetAliasCached(ctx context.Context, alias, room string, cache map[string]string) error {
	got, err := s.CachedRoomFor(ctx, alias, cache)
	if err != nil {
		return err
	}
	if got != "" {
		return errInUse
	}
	return s.InsertAlias(ctx, alias, room)
}

// Through an unnamed interface: its implementations are not looked up.
func viaUnnamed(ctx context.Context, s interface {
	RoomFor(ctx context.Context, alias string) (string, error)
	InsertAlias(ctx context.Context, alias, room string) error
}, alias, room string) error {
	if got, _ := s.RoomFor(ctx, alias); got != "" {
		return errInUse
	}
	return s.InsertAlias(ctx, alias, room)
}
