// Package pgxpool is a stub of github.com/jackc/pgx/v5/pgxpool for tests.
// Its methods run SQL of their own, as the real driver's do: a driver's
// package is not summarized, and its methods are read as the queries they
// are given.
package pgxpool

import (
	"context"

	"github.com/jackc/pgx/v5"
)

type Pool struct{ c *pgx.Conn }

func (p *Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return p.c.QueryRow(ctx, sql, args...)
}

func (p *Pool) Exec(ctx context.Context, sql string, args ...any) (pgx.CommandTag, error) {
	if _, err := p.c.Exec(ctx, "INSERT INTO pool_audit (query) VALUES ($1)", sql); err != nil {
		return pgx.CommandTag{}, err
	}
	return p.c.Exec(ctx, sql, args...)
}

func (p *Pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	return p.c.BeginTx(ctx, opts)
}
