// Package postgres implements the tables with statements prepared at
// start-up.
package postgres

import (
	"context"
	"database/sql"

	"example.com/vetmod/store/tables"
)

const (
	selectRoomIDSQL    = "SELECT room_id FROM room_aliases WHERE alias = $1"
	insertAliasSQL     = "INSERT INTO room_aliases (alias, room_id) VALUES ($1, $2)"
	insertAliasOnceSQL = "INSERT INTO room_aliases (alias, room_id) VALUES ($1, $2) ON CONFLICT DO NOTHING"
)

type aliasesStatements struct {
	selectRoomIDStmt    *sql.Stmt
	insertAliasStmt     *sql.Stmt
	insertAliasOnceStmt *sql.Stmt
}

type statement struct {
	stmt **sql.Stmt
	sql  string
}

func prepare(db *sql.DB, list []statement) (err error) {
	for _, s := range list {
		if *s.stmt, err = db.Prepare(s.sql); err != nil {
			return err
		}
	}
	return nil
}

// NewAliases prepares the alias table's statements.
func NewAliases(db *sql.DB) (tables.Aliases, error) {
	s := &aliasesStatements{}
	return s, prepare(db, []statement{
		{&s.selectRoomIDStmt, selectRoomIDSQL},
		{&s.insertAliasStmt, insertAliasSQL},
		{&s.insertAliasOnceStmt, insertAliasOnceSQL},
	})
}

func (s *aliasesStatements) SelectRoomID(ctx context.Context, txn *sql.Tx, alias string) (room string, err error) {
	stmt := tables.TxStmt(txn, s.selectRoomIDStmt)
	err = stmt.QueryRowContext(ctx, alias).Scan(&room)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return
}

func (s *aliasesStatements) InsertAlias(ctx context.Context, txn *sql.Tx, alias, room string) error {
	_, err := tables.TxStmt(txn, s.insertAliasStmt).ExecContext(ctx, alias, room)
	return err
}

func (s *aliasesStatements) InsertAliasOnce(ctx context.Context, txn *sql.Tx, alias, room string) error {
	_, err := tables.TxStmt(txn, s.insertAliasOnceStmt).ExecContext(ctx, alias, room)
	return err
}
