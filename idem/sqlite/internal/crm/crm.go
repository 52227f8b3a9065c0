// Package crm is an agent's tools over database/sql on SQLite, for the
// harness's tests on real I/O: a customers table, a lookup, a plain insert
// and an idempotent one. Its wrappers are generated from the repository's
// root (CI checks they are current):
//
//	go build -o /tmp/agentidem-gen ./cmd/agentidem-gen
//	(cd idem/sqlite && /tmp/agentidem-gen ./internal/crm)
package crm

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentidem/agentidem-go/runtime"
)

// Schema creates the tables. customers has no unique constraint on email
// (so a blind insert duplicates); members has one.
const Schema = `
CREATE TABLE IF NOT EXISTS customers (id INTEGER PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS members (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL);`

// CRM is the agent's tools.
type CRM struct{ DB *sql.DB }

// Find reports whether a customer with this email exists.
//
//agentidem:read name=findCustomer entity=email
func (c *CRM) Find(ctx context.Context, email string) (bool, error) {
	var id int64
	err := c.DB.QueryRowContext(ctx, `SELECT id FROM customers WHERE email = ?`, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Create inserts a customer, whatever exists already.
//
//agentidem:write name=createCustomer identity=email
func (c *CRM) Create(ctx context.Context, email, name string) (int64, error) {
	res, err := c.DB.ExecContext(ctx, `INSERT INTO customers (email, name) VALUES (?, ?)`, email, name)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// Enroll adds a member; a repeat for the same email changes nothing and
// is reported as replayed.
//
//agentidem:write name=enrollMember identity=email
func (c *CRM) Enroll(ctx context.Context, email, name string) error {
	res, err := c.DB.ExecContext(ctx, `INSERT INTO members (email, name) VALUES (?, ?) ON CONFLICT (email) DO NOTHING`, email, name)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		runtime.MarkReplayed(ctx)
	}
	return nil
}
