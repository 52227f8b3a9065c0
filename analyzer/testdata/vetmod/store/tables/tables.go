// Package tables declares the tables of a store as interfaces, the layout
// of a matrix homeserver: implementations live in packages that import
// this one, invisible from the shared layer that calls them.
package tables

import (
	"context"
	"database/sql"
)

type Aliases interface {
	SelectRoomID(ctx context.Context, txn *sql.Tx, alias string) (string, error)
	InsertAlias(ctx context.Context, txn *sql.Tx, alias, room string) error
	InsertAliasOnce(ctx context.Context, txn *sql.Tx, alias, room string) error
}

// Writer runs f, in a transaction of its own when txn is nil.
type Writer interface {
	Do(db *sql.DB, txn *sql.Tx, f func(txn *sql.Tx) error) error
}

// TxStmt binds a statement to a transaction, or runs it alone when there
// is none.
func TxStmt(txn *sql.Tx, stmt *sql.Stmt) *sql.Stmt {
	if txn != nil {
		return txn.Stmt(stmt)
	}
	return stmt
}
