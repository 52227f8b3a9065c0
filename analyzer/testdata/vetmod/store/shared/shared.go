// Package shared is the store's logic over its tables.
package shared

import (
	"context"
	"database/sql"

	"example.com/vetmod/store/tables"
)

type Database struct {
	DB      *sql.DB
	Writer  tables.Writer
	Aliases tables.Aliases
}

func (d *Database) GetRoomIDForAlias(ctx context.Context, alias string) (string, error) {
	return d.Aliases.SelectRoomID(ctx, nil, alias)
}

func (d *Database) SetRoomAlias(ctx context.Context, alias, room string) error {
	return d.Writer.Do(d.DB, nil, func(txn *sql.Tx) error {
		return d.Aliases.InsertAlias(ctx, txn, alias, room)
	})
}

func (d *Database) SetRoomAliasOnce(ctx context.Context, alias, room string) error {
	return d.Writer.Do(d.DB, nil, func(txn *sql.Tx) error {
		return d.Aliases.InsertAliasOnce(ctx, txn, alias, room)
	})
}
