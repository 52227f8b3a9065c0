package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem/sqlite"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

var (
	openTicketOp  = &runtime.Op{Name: "openTicket", Kind: runtime.KindWrite, Params: []string{"subject"}}
	ticketsSchema = `CREATE TABLE IF NOT EXISTS tickets (id INTEGER PRIMARY KEY, subject TEXT NOT NULL)`
)

// openTicket opens a ticket for subject, numbered by SQLite (INTEGER
// PRIMARY KEY): unless one is open for it when ifMissing.
func openTicket(ctx context.Context, db *sql.DB, subject string, ifMissing bool) error {
	return traced(ctx, openTicketOp, []any{subject}, func(ctx context.Context) error {
		time.Sleep(time.Millisecond) // the round trip before the insert
		q := `INSERT INTO tickets (subject) VALUES (?)`
		args := []any{subject}
		if ifMissing {
			q = `INSERT INTO tickets (subject) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM tickets WHERE subject = ?)`
			args = append(args, subject)
		}
		_, err := db.ExecContext(ctx, q, args...)
		return err
	})
}

func ticketOptions(t *testing.T) (*sql.DB, []testkit.Option) {
	t.Helper()
	b, err := sqlite.Open(filepath.Join(t.TempDir(), "tickets.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	db := b.DB()
	if _, err := db.Exec(ticketsSchema); err != nil {
		t.Fatal(err)
	}
	return db, []testkit.Option{
		testkit.NoSummary(),
		testkit.StallTimeout(5 * time.Second),
		testkit.Setup(func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, `DELETE FROM tickets`)
			return err
		}),
		testkit.State(func() any {
			var out [][2]any
			rows, err := db.Query(`SELECT id, subject FROM tickets ORDER BY id`)
			if err != nil {
				return err.Error()
			}
			defer rows.Close()
			for rows.Next() {
				var id int64
				var s string
				rows.Scan(&id, &s)
				out = append(out, [2]any{id, s})
			}
			return out
		}),
	}
}

// Two tickets opened in parallel in one model turn get the ids SQLite
// hands out in the order the inserts ran, which two deliveries at once
// need not share with the baseline: opened only when missing, the agent
// is safe on every run; opened on every call, it is caught on every run.
func TestRowIDsOfParallelCreatesAfterConcurrentDelivery(t *testing.T) {
	for _, c := range []struct {
		name      string
		ifMissing bool
		want      string
	}{
		{"opened when missing", true, ""},
		{"opened on every call", false, "duplicate_write"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, opts := ticketOptions(t)
			agent := func(ctx context.Context) error {
				return parallel(
					func() error { return openTicket(ctx, db, "printer jam", c.ifMissing) },
					func() error { return openTicket(ctx, db, "vpn down", c.ifMissing) })
			}
			stockVerdicts(t, 8, agent, opts, c.want)
		})
	}
}
