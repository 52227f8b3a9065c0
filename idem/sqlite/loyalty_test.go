package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/idem/sqlite"
	"github.com/agentidem/agentidem-go/idem/sqlite/internal/loyalty"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

func openLoyalty(t *testing.T) *loyalty.Program {
	t.Helper()
	b, err := sqlite.Open(filepath.Join(t.TempDir(), "loyalty.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if _, err := b.DB().Exec(loyalty.Schema); err != nil {
		t.Fatal(err)
	}
	return &loyalty.Program{DB: b.DB()}
}

func loyaltyState(db *sql.DB) func() any {
	return func() any {
		var out []string
		for _, q := range []string{`SELECT member || '=' || n FROM visits ORDER BY member`, `SELECT email || ':' || tier FROM members ORDER BY email`} {
			rows, err := db.Query(q)
			if err != nil {
				return err.Error()
			}
			for rows.Next() {
				var s string
				rows.Scan(&s)
				out = append(out, s)
			}
			rows.Close()
		}
		return out
	}
}

func errorCodes(rep *runtime.Report) string {
	seen := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			seen[f.Code] = true
		}
	}
	var out []string
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// A check-in agent: look the member up, enroll if absent, count the visit,
// retrying each write once on error. The counter is an upsert that adds:
// declared idempotent it is not_idempotent, undeclared a duplicate_write;
// the enrollment (ON CONFLICT DO NOTHING, undeclared) is absorbed by State.
func TestLoyaltyCheckInVerdicts(t *testing.T) {
	for _, c := range []struct {
		name     string
		declared bool
		want     string
	}{
		{"declared idempotent", true, runtime.CodeNotIdempotent},
		{"undeclared", false, runtime.CodeDuplicateWrite},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := openLoyalty(t)
			agent := func(ctx context.Context) error {
				tier, err := p.LookupTraced(ctx, "ann@example.com")
				if err != nil {
					return err
				}
				if tier == "" {
					if err := p.EnrollTraced(ctx, "ann@example.com", "gold"); err != nil {
						if err := p.EnrollTraced(ctx, "ann@example.com", "gold"); err != nil {
							return err
						}
					}
				}
				count := p.AddVisitTraced
				if c.declared {
					count = p.CountVisitTraced
				}
				if err := count(ctx, "ann@example.com"); err != nil {
					return count(ctx, "ann@example.com")
				}
				return nil
			}
			verdicts := map[string]int{}
			for range 3 {
				rep := testkit.Run(t, agent, testkit.NoSummary(),
					testkit.Setup(func(ctx context.Context) error {
						_, err := p.DB.ExecContext(ctx, `DELETE FROM visits; DELETE FROM members`)
						return err
					}),
					testkit.State(loyaltyState(p.DB)))
				var lines []string
				for _, f := range rep.Findings {
					if f.Severity == runtime.SeverityError {
						lines = append(lines, f.Scenario+" "+f.Code+" "+strings.Join(f.Ops, ","))
					}
				}
				sort.Strings(lines)
				verdicts[strings.Join(lines, "\n")]++
				if got := errorCodes(rep); got != c.want {
					t.Errorf("error codes %q, want %q:\n%s", got, c.want, strings.Join(lines, "\n"))
				}
			}
			if len(verdicts) != 1 {
				for v, n := range verdicts {
					t.Logf("%d runs:\n%s", n, v)
				}
				t.Errorf("%d verdicts in 3 runs", len(verdicts))
			}
		})
	}
}
