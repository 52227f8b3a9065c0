// Package clause is a stub of gorm.io/gorm/clause.
package clause

type Column struct{ Name string }

type OnConflict struct {
	Columns   []Column
	DoNothing bool
}

type Locking struct{ Strength string }
