package testkit_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

// refundDesk is a refund refundDesk: refunds made and confirmations sent, in the order
// they landed.
type refundDesk struct {
	mu     sync.Mutex
	landed []string
}

var (
	deskRefundOp  = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"order"}}
	deskConfirmOp = &runtime.Op{Name: "confirm_refund", Kind: runtime.KindWrite, Params: []string{"order"}, After: []string{"refund"}}
)

func (d *refundDesk) do(ctx context.Context, op *runtime.Op, order string) (err error) {
	args := []any{order}
	c, _ := runtime.Begin(ctx, op, args, args, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	d.mu.Lock()
	d.landed = append(d.landed, op.Name+" "+order)
	d.mu.Unlock()
	return c.Finish(nil)
}

// TestReplayAfterChild is run by TestEveryScheduleOfAnAfterFindingFails in
// a child process: a support agent that refunds an order and confirms the
// refund in one model turn (two parallel tool calls), though
// confirm_refund declares after=refund.
func TestReplayAfterChild(t *testing.T) {
	if os.Getenv(replayChildEnv) != "1" {
		t.Skip("run by TestEveryScheduleOfAnAfterFindingFails")
	}
	var d *refundDesk
	testkit.TestAgent(t, func(ctx context.Context) error {
		g, ctx := errgroup.WithContext(ctx)
		g.Go(func() error { return d.do(ctx, deskRefundOp, "o-9") })
		g.Go(func() error { return d.do(ctx, deskConfirmOp, "o-9") })
		return g.Wait()
	}, testkit.Setup(func(context.Context) error { d = &refundDesk{}; return nil }),
		testkit.With(runtime.OnlyScenario(runtime.ScenarioInterleaving)))
}

var failedScheduleRE = regexp.MustCompile(`--- (FAIL|PASS): TestReplayAfterChild/interleaving/(\w+) `)

// Every schedule of a refund and its confirmation in one turn in which the
// confirmation started before the refund returned fails go test with
// dependent_calls_concurrent, and its replay line, pasted back, fails too:
// the four schedules after the first that showed the finding passed, and
// so did their replay lines (red team rtV #14), and the schedule that ran
// the confirmation to its end before the refund started had no finding.
// The schedule that ran the refund first, to its end, passes.
func TestEveryScheduleOfAnAfterFindingFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary for each schedule")
	}
	out := runReplayChild(nil, "-test.run=^TestReplayAfterChild$", "-test.v")
	var failed, passed []string
	for _, m := range failedScheduleRE.FindAllStringSubmatch(out, -1) {
		if m[1] == "FAIL" {
			failed = append(failed, m[2])
		} else {
			passed = append(passed, m[2])
		}
	}
	// s0 is confirm_refund#1, s1 refund#1 (labels sort by op name): only
	// s1f1s0f0 starts the confirmation after the refund returned.
	require.ElementsMatch(t, []string{"s0s1f0f1", "s1s0f1f0", "s0s1f1f0", "s0f0s1f1", "s1s0f0f1"}, failed, "output:\n%s", out)
	require.Equal(t, []string{"s1f1s0f0"}, passed, "output:\n%s", out)
	lines := printedReplayRE.FindAllStringSubmatch(out, -1)
	replayed := 0
	for _, m := range lines {
		if !strings.Contains(m[2], "/^interleaving$/") {
			continue
		}
		replayed++
		rerun := pasteReplay(m)
		assert.Contains(t, rerun, "dependent_calls_concurrent", "the replay line %q did not show the finding:\n%s", m[0], rerun)
		assert.Contains(t, rerun, "--- FAIL: TestReplayAfterChild", "the replay line %q passed:\n%s", m[0], rerun)
	}
	assert.Equal(t, len(failed), replayed, "a replay line for each failed schedule:\n%s", out)
}
