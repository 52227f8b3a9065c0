// Package locks takes database locks for other packages: its LockFacts
// reach them.
package locks

import (
	"context"
	"database/sql"
)

// Key takes a transaction-scoped advisory lock on key.
func Key(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", key)
	return err
}

// KeyOnDB takes a transaction-scoped advisory lock on a database: its
// statement's own transaction ends at once, and so does the lock.
func KeyOnDB(ctx context.Context, db *sql.DB, key string) error {
	_, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", key)
	return err
}

// Session takes a session advisory lock on the connection.
func Session(ctx context.Context, conn *sql.Conn, key string) error {
	_, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext($1))", key)
	return err
}
