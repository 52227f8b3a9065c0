// Package gorm is a stub of gorm.io/gorm for the analyzer's tests: the
// methods the checks read, with their signatures.
package gorm

import (
	"context"
	"errors"
	"time"
)

var (
	ErrRecordNotFound = errors.New("record not found")
	ErrDuplicatedKey  = errors.New("duplicated key not allowed")
)

type DB struct {
	Error        error
	RowsAffected int64
}

type Model struct {
	ID        uint `gorm:"primarykey"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

func (db *DB) WithContext(ctx context.Context) *DB                  { return db }
func (db *DB) Where(query any, args ...any) *DB                     { return db }
func (db *DB) Not(query any, args ...any) *DB                       { return db }
func (db *DB) Or(query any, args ...any) *DB                        { return db }
func (db *DB) Model(value any) *DB                                  { return db }
func (db *DB) Table(name string, args ...any) *DB                   { return db }
func (db *DB) Clauses(conds ...any) *DB                             { return db }
func (db *DB) First(dest any, conds ...any) *DB                     { return db }
func (db *DB) Take(dest any, conds ...any) *DB                      { return db }
func (db *DB) Last(dest any, conds ...any) *DB                      { return db }
func (db *DB) Find(dest any, conds ...any) *DB                      { return db }
func (db *DB) Create(value any) *DB                                 { return db }
func (db *DB) Save(value any) *DB                                   { return db }
func (db *DB) FirstOrCreate(dest any, conds ...any) *DB             { return db }
func (db *DB) Attrs(attrs ...any) *DB                               { return db }
func (db *DB) Transaction(fc func(tx *DB) error, opts ...any) error { return fc(db) }
