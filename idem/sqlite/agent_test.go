package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem/sqlite/internal/crm"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	_ "modernc.org/sqlite"
)

// An agent whose tools use database/sql on SQLite, opened once for the
// test (the pool's goroutines and connections outlive every scenario),
// with two lookups in parallel. The harness runs every scenario and
// schedule on it to a verdict: the blind insert is caught, the idempotent
// insert passes.
func openCRM(t *testing.T) *crm.CRM {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "crm.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(crm.Schema); err != nil {
		t.Fatal(err)
	}
	return &crm.CRM{DB: db}
}

func crmOptions(c *crm.CRM, table string) []testkit.Option {
	return []testkit.Option{
		testkit.Setup(func(ctx context.Context) error {
			_, err := c.DB.ExecContext(ctx, `DELETE FROM `+table)
			return err
		}),
		testkit.Invariant("one row per email", func(*runtime.Trace) error {
			var n int
			if err := c.DB.QueryRow(`SELECT COUNT(*) FROM ` + table + ` WHERE email = 'ada@example.com'`).Scan(&n); err != nil {
				return err
			}
			if n > 1 {
				return fmt.Errorf("%d rows for one email", n)
			}
			return nil
		}),
		testkit.NoSummary(),
	}
}

// lookups checks two emails at once, as one model turn does.
func lookups(ctx context.Context, c *crm.CRM) error {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, email := range []string{"ada@example.com", "grace@example.com"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.FindTraced(ctx, email)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func TestSQLAgentBlindInsertIsCaught(t *testing.T) {
	c := openCRM(t)
	agent := func(ctx context.Context) error {
		if err := lookups(ctx, c); err != nil {
			return err
		}
		var err error
		for i := 0; i < 3; i++ { // retries a blind insert
			if _, err = c.CreateTraced(ctx, "ada@example.com", "Ada"); err == nil {
				return nil
			}
		}
		return err
	}
	rep := testkit.Run(t, agent, crmOptions(c, "customers")...)
	if !rep.BaselineSucceeded || rep.Safe {
		t.Fatalf("want a passing baseline and an unsafe verdict; baseline ok=%v safe=%v", rep.BaselineSucceeded, rep.Safe)
	}
	got := map[string]bool{}
	for _, f := range rep.Findings {
		got[f.Code+" "+f.Scenario] = true
		if f.Code == runtime.CodeStalled {
			t.Errorf("stalled: %s", f.Message)
		}
	}
	for _, want := range []string{"duplicate_write lost_acknowledgement/createCustomer#1", "duplicate_write duplicate_delivery/concurrent"} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
}

func TestSQLAgentIdempotentInsertPasses(t *testing.T) {
	c := openCRM(t)
	agent := func(ctx context.Context) error {
		if err := lookups(ctx, c); err != nil {
			return err
		}
		var err error
		for i := 0; i < 3; i++ {
			if err = c.EnrollTraced(ctx, "ada@example.com", "Ada"); err == nil {
				return nil
			}
		}
		return err
	}
	rep := testkit.TestAgent(t, agent, crmOptions(c, "members")...)
	scheduled := 0
	for _, r := range rep.Results {
		if r.Kind == runtime.ScenarioInterleaving {
			scheduled++
		}
	}
	if !rep.Safe || scheduled == 0 {
		t.Fatalf("want safe with the parallel lookups scheduled; safe=%v schedules=%d", rep.Safe, scheduled)
	}
}
