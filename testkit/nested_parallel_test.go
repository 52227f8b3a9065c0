package testkit_test

import (
	"context"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"golang.org/x/sync/errgroup"
)

var (
	processOp = &runtime.Op{Name: "process", Kind: runtime.KindWrite, Params: []string{"order"}}
	recordOp  = &runtime.Op{Name: "record", Kind: runtime.KindWrite, Params: []string{"order"}}
)

// ledgerService is a tool (process) whose only effect is a traced call
// of another (record): keyed through idem.Do, a repeat of record is
// replayed and changes nothing; naive, it appends again.
type ledgerService struct {
	j     *journal
	store *idem.Store
	keyed bool
}

func (l *ledgerService) process(ctx context.Context, order string) error {
	return tracedCall(ctx, processOp, []any{order}, []any{order}, nil, func(ctx context.Context) error {
		return tracedCall(ctx, recordOp, []any{order}, []any{order}, nil, func(ctx context.Context) error {
			appendEntry := func() {
				l.j.mu.Lock()
				defer l.j.mu.Unlock()
				l.j.entries = append(l.j.entries, order)
			}
			if !l.keyed {
				appendEntry()
				return nil
			}
			_, _, err := idem.Do(ctx, l.store, idem.Key("record", order), order, func(context.Context) (string, error) {
				appendEntry()
				return "ok", nil
			})
			return err
		})
	})
}

// Two parallel calls of a tool whose only effect is a keyed inner write,
// with State and no Settle: no window of the baseline holds either outer
// call alone, so State could not show that their effect is visible at all,
// and the redelivery's repeats, which change nothing, were counted as
// duplicates ("State saw no execution change the world"), 20 of 20 runs.
// The suite now runs the agent once with every call alone (serialWindows),
// whose windows show each one's effect: the repeats are absorbed. The
// naive inner write is still caught.
func TestParallelToolsWithKeyedInnerWritesAreNotDuplicates(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		var l *ledgerService
		agent := func(ctx context.Context) error {
			g, gctx := errgroup.WithContext(ctx)
			for _, order := range []string{"o1", "o2"} {
				g.Go(func() error { return l.process(gctx, order) })
			}
			return g.Wait()
		}
		for range 3 {
			rep := testkit.Run(&fakeT{name: "TestNestedParallel"}, agent, testkit.NoSummary(),
				testkit.Setup(func(context.Context) error {
					l = &ledgerService{j: &journal{}, store: idem.NewMemory(), keyed: keyed}
					return nil
				}),
				testkit.State(func() any {
					l.j.mu.Lock()
					defer l.j.mu.Unlock()
					return append([]string{}, l.j.entries...)
				}))
			if keyed {
				assert.True(t, rep.Safe, "keyed: %v", rep.Findings)
				continue
			}
			for _, sc := range []string{runtime.ScenarioDuplicateSeq, runtime.ScenarioDuplicateConcurrent, "crash_restart/record#1"} {
				caught := false
				for _, f := range rep.Findings {
					caught = caught || f.Scenario == sc && f.Code == runtime.CodeDuplicateWrite
				}
				assert.True(t, caught, "naive, %s: %v", sc, rep.Findings)
			}
		}
	}
}
