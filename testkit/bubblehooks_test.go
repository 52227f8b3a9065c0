package testkit_test

import (
	"context"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"
)

var bubbleRowOp = &runtime.Op{Name: "insert_row", Kind: runtime.KindWrite, Params: []string{"key"}}

// TestSetupInEveryBubbleOfAVirtualTimeSuite: with VirtualTime, Setup
// runs inside each scenario's bubble, and its bound's timer came from a
// pool: a timer made in an earlier scenario's bubble, reused in the next,
// ended the test binary ("select on synctest channel from outside
// bubble"). It did when the pool was empty as a bubble's Setup began (a
// collection empties it): here the agent's first run, the baseline's on
// real time, collects twice, the next Setup (in a bubble) makes a timer,
// and with one P the pool hands it to the Setup after, in another bubble.
func TestSetupInEveryBubbleOfAVirtualTimeSuite(t *testing.T) {
	if !inChild(t, "GOMAXPROCS=1") {
		return
	}
	var mu sync.Mutex
	var made []string
	collected := false
	agent := func(ctx context.Context) error {
		if !collected {
			collected = true
			goruntime.GC()
			goruntime.GC()
		}
		g, gctx := errgroup.WithContext(ctx)
		for _, key := range []string{"k0", "k1"} {
			g.Go(func() error {
				return tracedCall(gctx, bubbleRowOp, []any{key}, []any{key}, nil, func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					if !slices.Contains(made, key) {
						made = append(made, key)
					}
					return nil
				})
			})
		}
		return g.Wait()
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(), testkit.VirtualTime(),
		testkit.Setup(func(context.Context) error { mu.Lock(); made = nil; mu.Unlock(); return nil }),
		testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return slices.Sorted(slices.Values(made)) }))
	assert.True(t, rep.Safe && rep.InconclusiveCount == 0, "%v", rep.Findings)
	virtual := 0
	for _, res := range rep.Results {
		switch {
		case res.Fault != nil:
			assert.Equal(t, runtime.ClockReal, res.Clock, "a fault scenario runs on real time: %s", res.Scenario)
		case res.Kind == runtime.ScenarioInterleaving:
			assert.Equal(t, runtime.ClockVirtual, res.Clock, res.Scenario)
			virtual++
		}
	}
	assert.NotZero(t, virtual, "no interleaving ran in a bubble")
}

// inChild reports whether the calling test runs in the child process it
// starts, with env added: in the parent it runs the child, bounded by the
// child's -test.timeout, and fails when the child does. A bubble that
// stalls, or a fatal error of the Go runtime, ends that process only.
func inChild(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv("AGENTIDEM_CHILD") == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.timeout=20s", "-test.count=1")
	cmd.Env = append(append(os.Environ(), "AGENTIDEM_CHILD="+t.Name()), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	var first string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") {
			first = l
			break
		}
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	require.NoError(t, err, "the child failed after %v: %s\n%s", time.Since(start).Round(time.Millisecond), first, strings.Join(lines[max(0, len(lines)-40):], "\n"))
	return false
}
