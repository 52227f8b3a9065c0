// Package pgx is a stub of github.com/jackc/pgx/v5 for tests.
package pgx

import (
	"context"
	"errors"
)

var ErrNoRows = errors.New("no rows in result set")

type Row interface{ Scan(dest ...any) error }

type CommandTag struct{ n int64 }

func (t CommandTag) RowsAffected() int64 { return t.n }

type Conn struct{}

func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) Row { return nil }
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (CommandTag, error) {
	return CommandTag{}, nil
}
func (c *Conn) BeginTx(ctx context.Context, opts TxOptions) (Tx, error) { return nil, nil }

type TxIsoLevel string

const Serializable TxIsoLevel = "serializable"

type TxOptions struct{ IsoLevel TxIsoLevel }

type Tx interface {
	QueryRow(ctx context.Context, sql string, args ...any) Row
	Exec(ctx context.Context, sql string, args ...any) (CommandTag, error)
	Commit(ctx context.Context) error
}

// BeginFunc runs fn in a transaction begun on db.
func BeginFunc(ctx context.Context, db interface {
	BeginTx(ctx context.Context, opts TxOptions) (Tx, error)
}, fn func(Tx) error) error {
	return nil
}
