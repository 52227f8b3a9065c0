// Package stock holds a warehouse agent's tools over SQLite for the tests
// of package sqlite: a stock level set to a value (a repeat changes
// nothing) and one adjusted by a delta (a repeat adds again), an order
// placed in a transaction that decrements the stock only when the order
// is new (INSERT OR IGNORE), and the same transaction without the key.
package stock

import (
	"context"
	"database/sql"
)

// Schema creates the warehouse's tables.
const Schema = `
CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, qty INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS orders (ref TEXT NOT NULL, sku TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS orders_ref ON orders (ref) WHERE ref != '';
CREATE TABLE IF NOT EXISTS tags (sku TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (sku, tag));
CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, sku TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX IF NOT EXISTS outbox_ref ON outbox (ref) WHERE ref != '';`

// Warehouse is the agent's world.
type Warehouse struct{ DB *sql.DB }

// Level reads the stock of sku.
//
//agentidem:read name=level entity=sku
func (w *Warehouse) Level(ctx context.Context, sku string) (int, error) {
	var n int
	err := w.DB.QueryRowContext(ctx, `SELECT qty FROM stock WHERE sku = ?`, sku).Scan(&n)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return n, err
}

// SetLevel sets the stock of sku to n (UPDATE ... SET qty = n).
//
//agentidem:write name=setLevel identity=sku
func (w *Warehouse) SetLevel(ctx context.Context, sku string, n int) error {
	_, err := w.DB.ExecContext(ctx, `UPDATE stock SET qty = ? WHERE sku = ?`, n, sku)
	return err
}

// Adjust adds delta to the stock of sku (UPDATE ... SET qty = qty + delta).
//
//agentidem:write name=adjust identity=sku
func (w *Warehouse) Adjust(ctx context.Context, sku string, delta int) error {
	_, err := w.DB.ExecContext(ctx, `UPDATE stock SET qty = qty + ? WHERE sku = ?`, delta, sku)
	return err
}

// Tag tags sku unless it is tagged so (INSERT OR IGNORE).
//
//agentidem:write name=tag identity=sku,tag
func (w *Warehouse) Tag(ctx context.Context, sku, tag string) error {
	_, err := w.DB.ExecContext(ctx, `INSERT OR IGNORE INTO tags (sku, tag) VALUES (?, ?)`, sku, tag)
	return err
}

// Place places order ref for one sku in a transaction: the order row,
// then the stock decremented, only when the order is new.
//
//agentidem:write name=place identity=ref
func (w *Warehouse) Place(ctx context.Context, ref, sku string) error {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO orders (ref, sku) VALUES (?, ?) ON CONFLICT DO NOTHING`, ref, sku)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		if _, err := tx.ExecContext(ctx, `UPDATE stock SET qty = qty - 1 WHERE sku = ?`, sku); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// PlaceNaive is Place without the order's key: every call is an order.
//
//agentidem:write name=placeNaive identity=ref
func (w *Warehouse) PlaceNaive(ctx context.Context, ref, sku string) error {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders (ref, sku) VALUES ('', ?)`, sku); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE stock SET qty = qty - 1 WHERE sku = ?`, sku); err != nil {
		return err
	}
	return tx.Commit()
}

// Ship queues a shipment of one sku for order ref in the outbox; a
// worker takes it up later (Drain). A shipment queued for ref is not
// queued again.
//
//agentidem:write name=ship identity=ref
func (w *Warehouse) Ship(ctx context.Context, ref, sku string) error {
	_, err := w.DB.ExecContext(ctx, `INSERT INTO outbox (ref, sku) VALUES (?, ?) ON CONFLICT DO NOTHING`, ref, sku)
	return err
}

// ShipNaive is Ship without the key: every call queues a shipment.
//
//agentidem:write name=shipNaive identity=ref
func (w *Warehouse) ShipNaive(ctx context.Context, ref, sku string) error {
	_, err := w.DB.ExecContext(ctx, `INSERT INTO outbox (ref, sku) VALUES ('', ?)`, sku)
	return err
}

// Drain takes up the queued shipments, oldest first: each takes one of
// its sku from the stock. It returns the skus shipped.
func (w *Warehouse) Drain(ctx context.Context) ([]string, error) {
	rows, err := w.DB.QueryContext(ctx, `SELECT id, sku FROM outbox WHERE done = 0 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	type job struct {
		id  int64
		sku string
	}
	var jobs []job
	for rows.Next() {
		var j job
		if err := rows.Scan(&j.id, &j.sku); err != nil {
			rows.Close()
			return nil, err
		}
		jobs = append(jobs, j)
	}
	rows.Close()
	var shipped []string
	for _, j := range jobs {
		tx, err := w.DB.BeginTx(ctx, nil)
		if err != nil {
			return shipped, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE stock SET qty = qty - 1 WHERE sku = ?`, j.sku); err != nil {
			tx.Rollback()
			return shipped, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET done = 1 WHERE id = ?`, j.id); err != nil {
			tx.Rollback()
			return shipped, err
		}
		if err := tx.Commit(); err != nil {
			return shipped, err
		}
		shipped = append(shipped, j.sku)
	}
	return shipped, nil
}

// Drained reports whether the worker has taken up every queued shipment.
func (w *Warehouse) Drained(ctx context.Context) (bool, error) {
	var n int
	err := w.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE done = 0`).Scan(&n)
	return n == 0, err
}

// Stock is the stock levels alone, ordered: what the shipments change.
func (w *Warehouse) Stock() any {
	var out []string
	rows, err := w.DB.Query(`SELECT sku || '=' || qty FROM stock ORDER BY sku`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err.Error()
		}
		out = append(out, s)
	}
	return out
}

// Snapshot is the warehouse's observable state, ordered.
func (w *Warehouse) Snapshot() any {
	var out []string
	for _, q := range []string{
		`SELECT 'stock ' || sku || '=' || qty FROM stock ORDER BY sku`,
		`SELECT 'orders ' || sku || '=' || COUNT(*) FROM orders GROUP BY sku ORDER BY sku`,
		`SELECT 'tag ' || sku || ':' || tag FROM tags ORDER BY sku, tag`,
	} {
		rows, err := w.DB.Query(q)
		if err != nil {
			return err.Error()
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return err.Error()
			}
			out = append(out, s)
		}
		rows.Close()
	}
	return out
}

// Reset empties the warehouse and stocks skus with qty each.
func (w *Warehouse) Reset(ctx context.Context, qty int, skus ...string) error {
	if _, err := w.DB.ExecContext(ctx, `DELETE FROM stock; DELETE FROM orders; DELETE FROM tags; DELETE FROM outbox`); err != nil {
		return err
	}
	for _, s := range skus {
		if _, err := w.DB.ExecContext(ctx, `INSERT INTO stock (sku, qty) VALUES (?, ?)`, s, qty); err != nil {
			return err
		}
	}
	return nil
}
