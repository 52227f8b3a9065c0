package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/idem/sqlite"
	"github.com/agentidem/agentidem-go/idem/sqlite/internal/desk"
	"github.com/agentidem/agentidem-go/testkit"
)

func openDesk(t *testing.T) *desk.Desk {
	t.Helper()
	b, err := sqlite.Open(filepath.Join(t.TempDir(), "desk.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB().Exec(desk.Schema); err != nil {
		t.Fatal(err)
	}
	return &desk.Desk{DB: b.DB(), Keys: idem.New(b)}
}

// retry calls f up to three times while it fails, as an agent loop does.
func retry(f func() error) error {
	var err error
	for range 3 {
		if err = f(); err == nil {
			return nil
		}
	}
	return err
}

func parallel(fs ...func() error) error {
	errs := make([]error, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Go(func() { errs[i] = retry(f) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func openIfMissing(ctx context.Context, d *desk.Desk, id string) error {
	st, err := d.GetTraced(ctx, id)
	if err != nil || st != "" {
		return err
	}
	return d.UpsertTraced(ctx, id, "open")
}

type snapshot struct {
	Tickets [][3]any
	Notes   [][2]string
	Refunds [][2]any
}

func deskState(db *sql.DB, ordered bool) func() any {
	by := func(s string) string {
		if ordered {
			return " ORDER BY " + s
		}
		return ""
	}
	return func() any {
		var s snapshot
		rows, err := db.Query(`SELECT id, status, closes FROM tickets` + by("id"))
		if err != nil {
			return err.Error()
		}
		for rows.Next() {
			var id, st string
			var n int64
			rows.Scan(&id, &st, &n)
			s.Tickets = append(s.Tickets, [3]any{id, st, n})
		}
		rows.Close()
		if rows, err = db.Query(`SELECT ticket, body FROM notes` + by("ticket, body")); err != nil {
			return err.Error()
		}
		for rows.Next() {
			var a, b string
			rows.Scan(&a, &b)
			s.Notes = append(s.Notes, [2]string{a, b})
		}
		rows.Close()
		if rows, err = db.Query(`SELECT payment, amount FROM refunds` + by("payment")); err != nil {
			return err.Error()
		}
		for rows.Next() {
			var a string
			var n int64
			rows.Scan(&a, &n)
			s.Refunds = append(s.Refunds, [2]any{a, n})
		}
		rows.Close()
		return s
	}
}

// deskSuite runs agent's fault suite on a desk emptied before each
// scenario, with State reading its tables (ORDER BY when ordered).
func deskSuite(t *testing.T, d *desk.Desk, agent func(context.Context) error, ordered bool) {
	t.Helper()
	testkit.TestAgent(t, agent,
		testkit.Setup(func(ctx context.Context) error {
			_, err := d.DB.ExecContext(ctx, `DELETE FROM notes; DELETE FROM tickets; DELETE FROM refunds`)
			return err
		}),
		testkit.State(deskState(d.DB, ordered)))
}
