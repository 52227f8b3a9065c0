// Package storage opens the store behind an interface.
package storage

import (
	"context"
	"database/sql"

	"example.com/vetmod/store/postgres"
	"example.com/vetmod/store/shared"
)

type Database interface {
	GetRoomIDForAlias(ctx context.Context, alias string) (string, error)
	SetRoomAlias(ctx context.Context, alias, room string) error
	SetRoomAliasOnce(ctx context.Context, alias, room string) error
}

func Open(db *sql.DB, w interface {
	Do(db *sql.DB, txn *sql.Tx, f func(txn *sql.Tx) error) error
}) (Database, error) {
	a, err := postgres.NewAliases(db)
	if err != nil {
		return nil, err
	}
	return &shared.Database{DB: db, Writer: w, Aliases: a}, nil
}
