// Package sqlx is a stub of github.com/jmoiron/sqlx for tests.
package sqlx

import "database/sql"

type DB struct{ *sql.DB }

func (db *DB) Get(dest any, query string, args ...any) error       { return nil }
func (db *DB) MustExec(query string, args ...any) sql.Result       { return nil }
func (db *DB) Select(dest any, query string, args ...any) error    { return nil }
func (db *DB) NamedExec(query string, arg any) (sql.Result, error) { return nil, nil }
