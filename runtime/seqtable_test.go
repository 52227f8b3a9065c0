package runtime

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// An agent pays in a transaction of its own: it takes the payment's row
// number from a sequence outside the state (a BIGSERIAL), calls its traced
// pay, and commits the row, untraced, creating the payments table with its
// first row. A failed attempt is rolled back, but the sequence keeps the
// number it gave: the retry's row is 2 where the baseline's was 1. That is
// one payment under another number, not a duplicate (it was counted as one
// before the table's rows were taken for names the sink made). An agent
// that commits the failed attempt leaves two rows and is caught.
func TestRowNumberedPastARolledBackAttemptInATableTheCommitMade(t *testing.T) {
	pay := &Op{Name: "pay", Kind: KindWrite, Params: []string{"order"}}
	for _, c := range []struct {
		name         string
		commitFailed bool
		stamped      bool // the row has a created_at the database sets (DEFAULT now())
		want         string
	}{
		{"rolled back", false, false, RepeatAbsorbed},
		{"failed attempt committed", true, false, RepeatDuplicate},
		// The moments are left out of both ends, and so must they be of
		// the baseline's windows that say the row is one its commit made
		// (a false duplicate_write in every run of a red team's
		// PostgreSQL probe with created_at).
		{"rolled back, created_at", false, true, RepeatAbsorbed},
		{"failed attempt committed, created_at", true, true, RepeatDuplicate},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &kvWorld{}
			var seq atomic.Int64
			agent := func(ctx context.Context) error {
				var err error
				for attempt := 0; attempt < 2; attempt++ {
					row := strconv.FormatInt(seq.Add(1), 10) // nextval: not given back on rollback
					err = traced(ctx, pay, []any{"o-1"}, []any{"o-1"}, func(context.Context) error { return nil })
					if err != nil && !c.commitFailed {
						continue // rolled back
					}
					w.do(func(m map[string]any) { // the commit, untraced
						rows, _ := m["payments"].(map[string]any)
						if rows == nil {
							rows = map[string]any{}
							m["payments"] = rows
						}
						r := map[string]any{"order": "o-1", "amount": 10}
						if c.stamped {
							r["created_at"] = time.Now().UTC().Format(time.RFC3339Nano)
						}
						rows[row] = r
					})
					if err == nil {
						break
					}
				}
				return err
			}
			rep := runOn(t, w, func(map[string]any) { seq.Store(0) }, agent, OnlyScenario(ScenarioLostAck+"/pay#1"))
			res, repeat, dup := judgedRepeat(t, rep)
			assert.Equal(t, c.want, repeat.Repeat, "%s, judged by %s; findings %v; notes %q", repeat.ID, repeat.JudgedBy, res.Findings, res.Trace.Notes)
			assert.Equal(t, c.want == RepeatDuplicate, dup, "duplicate_write: %v", res.Findings)
			assert.Equal(t, c.want == RepeatAbsorbed, rep.Safe, "the report's verdict")
		})
	}
}
