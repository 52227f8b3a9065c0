// Package sqlf is a stub of github.com/leporo/sqlf for tests.
package sqlf

import (
	"context"
	"database/sql"
)

type Executor interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

type Stmt struct{}

func From(expr string, args ...any) *Stmt             { return &Stmt{} }
func Select(expr string, args ...any) *Stmt           { return &Stmt{} }
func InsertInto(tableName string) *Stmt               { return &Stmt{} }
func Update(tableName string) *Stmt                   { return &Stmt{} }
func (q *Stmt) Select(expr string, args ...any) *Stmt { return q }
func (q *Stmt) From(expr string, args ...any) *Stmt   { return q }
func (q *Stmt) To(dest any) *Stmt                     { return q }
func (q *Stmt) Where(expr string, args ...any) *Stmt  { return q }
func (q *Stmt) Set(field string, value any) *Stmt     { return q }
func (q *Stmt) Clause(expr string, args ...any) *Stmt { return q }
func (q *Stmt) QueryRowAndClose(ctx context.Context, db Executor) error {
	return nil
}
func (q *Stmt) ExecAndClose(ctx context.Context, db Executor) (sql.Result, error) {
	return nil, nil
}
