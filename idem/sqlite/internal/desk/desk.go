// Package desk holds a help desk agent's tools over SQLite (tickets,
// notes, refunds) for the tests of package sqlite: upserts, inserts that
// skip what exists, and a refund made idempotent with idem.
package desk

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

const Schema = `
CREATE TABLE IF NOT EXISTS tickets (id TEXT PRIMARY KEY, status TEXT NOT NULL, closes INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS notes (ticket TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (ticket, body));
CREATE TABLE IF NOT EXISTS refunds (payment TEXT NOT NULL, amount INTEGER NOT NULL);`

type Desk struct {
	DB   *sql.DB
	Keys *idem.Store
}

//agentidem:read name=getTicket entity=id
func (d *Desk) Get(ctx context.Context, id string) (string, error) {
	var s string
	err := d.DB.QueryRowContext(ctx, `SELECT status FROM tickets WHERE id = ?`, id).Scan(&s)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return s, err
}

//agentidem:write name=upsertTicket identity=id idempotent
func (d *Desk) Upsert(ctx context.Context, id, status string) error {
	_, err := d.DB.ExecContext(ctx, `INSERT INTO tickets (id, status) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status`, id, status)
	return err
}

//agentidem:write name=closeTicket identity=id
func (d *Desk) Close(ctx context.Context, id string) error {
	_, err := d.DB.ExecContext(ctx, `UPDATE tickets SET status = 'closed', closes = closes + 1 WHERE id = ? AND status != 'closed'`, id)
	return err
}

//agentidem:write name=addNote identity=id,body
func (d *Desk) Note(ctx context.Context, id, body string) error {
	res, err := d.DB.ExecContext(ctx, `INSERT INTO notes (ticket, body) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, body)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		runtime.MarkReplayed(ctx)
	}
	return nil
}

//agentidem:write name=refund identity=payment
func (d *Desk) Refund(ctx context.Context, payment string, amount int64) (string, error) {
	out, _, err := idem.Do(ctx, d.Keys, idem.Key("refund", payment), amount, func(ctx context.Context) (string, error) {
		tx, err := d.DB.BeginTx(ctx, nil)
		if err != nil {
			return "", err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, `INSERT INTO refunds (payment, amount) VALUES (?, ?)`, payment, amount); err != nil {
			return "", err
		}
		if err := tx.Commit(); err != nil {
			return "", err
		}
		return fmt.Sprintf("refunded %s %d", payment, amount), nil
	})
	return out, err
}

//agentidem:write name=openTicket identity=id
func (d *Desk) Open(ctx context.Context, id string) error {
	_, err := d.DB.ExecContext(ctx, `INSERT INTO tickets (id, status) VALUES (?, 'open') ON CONFLICT (id) DO NOTHING`, id)
	return err
}
