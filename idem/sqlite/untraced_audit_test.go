package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem/sqlite"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

const auditSchema = `
CREATE TABLE IF NOT EXISTS members (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS signups (id INTEGER PRIMARY KEY, email TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS audit_log (id INTEGER PRIMARY KEY, line TEXT NOT NULL);`

var saveMemberOp = &runtime.Op{Name: "saveMember", Kind: runtime.KindWrite, Params: []string{"email"}}

// An agent saves a member through a traced tool, then appends an audit
// line with its own SQL, untraced. The tool is an upsert (INSERT ... ON
// CONFLICT (email) DO UPDATE) or, in the buggy agent, a plain INSERT into
// a table without UNIQUE. Under duplicate_delivery/concurrent, one
// delivery's audit INSERT runs while the other's call is in flight; the
// upsert must not be taken for a duplicate for it, and the plain insert
// must still be caught.
func TestUntracedAuditInsertUnderConcurrentDelivery(t *testing.T) {
	for _, c := range []struct {
		name   string
		insert string
		want   bool // a duplicate_write
	}{
		{"upsert", `INSERT INTO members (email, name) VALUES (?, ?) ON CONFLICT (email) DO UPDATE SET name = excluded.name`, false},
		{"plain insert", `INSERT INTO signups (email, name) VALUES (?, ?)`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := sqlite.Open(filepath.Join(t.TempDir(), "members.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			db := b.DB()
			if _, err := db.Exec(auditSchema); err != nil {
				t.Fatal(err)
			}
			agent := func(ctx context.Context) error {
				if err := tracedCall(ctx, saveMemberOp, "ann@example.com", func(ctx context.Context) error {
					time.Sleep(2 * time.Millisecond) // the round trip before the insert
					_, err := db.ExecContext(ctx, c.insert, "ann@example.com", "Ann")
					return err
				}); err != nil {
					return err
				}
				_, err := db.ExecContext(ctx, `INSERT INTO audit_log (line) VALUES (?)`, "saved ann@example.com")
				return err
			}
			rep := testkit.Run(t, agent, testkit.NoSummary(),
				testkit.With(runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent)),
				testkit.StallTimeout(5*time.Second),
				testkit.Setup(func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, `DELETE FROM members; DELETE FROM signups; DELETE FROM audit_log`)
					return err
				}),
				testkit.State(auditState(db)))
			var dups []string
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeDuplicateWrite {
					dups = append(dups, f.Message)
				}
			}
			if c.want && len(dups) != 1 {
				t.Errorf("the plain insert made two signups: %d duplicate_write findings", len(dups))
			}
			if !c.want && len(dups) != 0 {
				t.Errorf("a false duplicate_write of the upsert: %s", strings.Join(dups, "\n"))
			}
		})
	}
}

func auditState(db *sql.DB) func() any {
	return func() any {
		out := map[string][][]any{}
		for name, q := range map[string]string{
			"members":   `SELECT id, email, name FROM members ORDER BY id`,
			"signups":   `SELECT id, email, name FROM signups ORDER BY id`,
			"audit_log": `SELECT id, line FROM audit_log ORDER BY id`,
		} {
			rows, err := queryRows(db, q)
			if err != nil {
				return err.Error()
			}
			if len(rows) > 0 {
				out[name] = rows
			}
		}
		return out
	}
}
