// Package squirrel is a stub of github.com/Masterminds/squirrel for tests.
package squirrel

import "database/sql"

type BaseRunner interface {
	Exec(query string, args ...any) (sql.Result, error)
	Query(query string, args ...any) (*sql.Rows, error)
}

type RowScanner interface{ Scan(...any) error }

type Eq map[string]any

type SelectBuilder struct{}
type InsertBuilder struct{}

func Select(columns ...string) SelectBuilder { return SelectBuilder{} }
func Insert(into string) InsertBuilder       { return InsertBuilder{} }

func (b SelectBuilder) From(from string) SelectBuilder               { return b }
func (b SelectBuilder) Where(pred any, args ...any) SelectBuilder    { return b }
func (b SelectBuilder) RunWith(runner BaseRunner) SelectBuilder      { return b }
func (b SelectBuilder) QueryRow() RowScanner                         { return nil }
func (b InsertBuilder) Columns(columns ...string) InsertBuilder      { return b }
func (b InsertBuilder) Values(values ...any) InsertBuilder           { return b }
func (b InsertBuilder) Suffix(sql string, args ...any) InsertBuilder { return b }
func (b InsertBuilder) RunWith(runner BaseRunner) InsertBuilder      { return b }
func (b InsertBuilder) Exec() (sql.Result, error)                    { return nil, nil }
