package testkit_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// rowStore is a flat table keyed by row id, with a network-like latency.
type rowStore struct {
	mu   sync.Mutex
	rows map[string]string
}

// put upserts: a repeat changes nothing.
func (s *rowStore) put(ctx context.Context, key, v string) error {
	time.Sleep(2 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[key] = v
	return nil
}

func (s *rowStore) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, v := range s.rows {
		out[k] = v
	}
	return out
}

var sessionPutOp = &runtime.Op{Kind: runtime.KindWrite, Name: "put", Params: []string{"key", "v"}, Pos: "addedkeys_test.go:1"}

func (s *rowStore) putTraced(ctx context.Context, key, v string) (err error) {
	args := []any{key, v}
	call, cctx := runtime.Begin(ctx, sessionPutOp, args, args[0:1:1], nil)
	if err = call.Start(); err != nil {
		return
	}
	defer call.Recover(&err)
	err = s.put(cctx, key, v)
	if lost := call.Finish(err); lost != nil {
		return lost
	}
	return
}

// A SAFE agent: each delivery records its own session row (what an agent
// framework does for every inbound message, untraced), then upserts two
// rows keyed by the work (a repeat changes nothing). The store is one flat
// table: its top-level keys are row ids.
func TestSessionRowPerDeliveryIsSafe(t *testing.T) {
	var (
		s   *rowStore
		seq atomic.Int64
	)
	agent := func(ctx context.Context) error {
		n := seq.Add(1)
		s.mu.Lock()
		s.rows[fmt.Sprintf("session-%d", n)] = "received order 1" // the framework's own record, untraced
		s.mu.Unlock()
		var g errgroup.Group
		for _, k := range []string{"order-1", "invoice-1"} {
			g.Go(func() error { return s.putTraced(ctx, k, "v") })
		}
		return g.Wait()
	}
	opts := []testkit.Option{
		testkit.Setup(func(context.Context) error {
			s = &rowStore{rows: map[string]string{}}
			seq.Store(0)
			return nil
		}),
		testkit.State(func() any { return s.snapshot() }),
		testkit.NoSummary(),
	}
	verdicts := map[string]int{}
	for range 10 {
		rep := testkit.Run(&fakeT{name: "TestSession"}, agent, opts...)
		var keys []string
		for _, f := range rep.Findings {
			keys = append(keys, f.Code+" "+f.Scenario+" "+f.Message)
		}
		for _, res := range rep.Results {
			if res.Scenario == runtime.ScenarioDuplicateConcurrent && res.Trace != nil {
				for _, o := range res.Trace.Ops {
					keys = append(keys, fmt.Sprintf("  op %s %s repeat=%s by=%s overl=%v", o.ID, o.Identity, o.Repeat, o.JudgedBy, o.Overlapped))
				}
			}
		}
		sort.Strings(keys)
		verdicts[strings.Join(keys, "\n")]++
	}
	for k, n := range verdicts {
		t.Logf("%d× :\n%s", n, k)
	}
	for k := range verdicts {
		if strings.Contains(k, "duplicate_write") {
			t.Errorf("false duplicate_write in a safe agent")
		}
	}
}

// issueStore numbers issues per repository: every open adds a new row.
type issueStore struct {
	mu   sync.Mutex
	rows map[string]string
	next map[string]int
}

func (s *issueStore) open(ctx context.Context, repo string) error {
	time.Sleep(2 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next[repo]++
	s.rows[fmt.Sprintf("%s#%d", repo, s.next[repo])] = "deploy failed"
	return nil
}

var issueOpenOp = &runtime.Op{Kind: runtime.KindWrite, Name: "open", Params: []string{"repo"}, Pos: "addedkeys_test.go:2"}

func (s *issueStore) openTraced(ctx context.Context, repo string) (err error) {
	args := []any{repo}
	call, cctx := runtime.Begin(ctx, issueOpenOp, args, args[0:1:1], nil)
	if err = call.Start(); err != nil {
		return
	}
	defer call.Recover(&err)
	err = s.open(cctx, repo)
	if lost := call.Finish(err); lost != nil {
		return lost
	}
	return
}

// The case 065580b fixed, with and without a session row per delivery:
// two issues opened in parallel, delivered twice at once, are four issues.
func TestParallelOpensDeliveredTwiceAreDuplicates(t *testing.T) {
	for _, session := range []bool{false, true} {
		var (
			s   *issueStore
			seq atomic.Int64
		)
		agent := func(ctx context.Context) error {
			n := seq.Add(1)
			if session {
				s.mu.Lock()
				s.rows[fmt.Sprintf("session-%d", n)] = "deploy failed"
				s.mu.Unlock()
			}
			var g errgroup.Group
			for _, repo := range []string{"api", "web"} {
				g.Go(func() error { return s.openTraced(ctx, repo) })
			}
			return g.Wait()
		}
		opts := []testkit.Option{
			testkit.Setup(func(context.Context) error {
				s = &issueStore{rows: map[string]string{}, next: map[string]int{}}
				seq.Store(0)
				return nil
			}),
			testkit.State(func() any {
				s.mu.Lock()
				defer s.mu.Unlock()
				out := map[string]string{}
				for k, v := range s.rows {
					out[k] = v
				}
				return out
			}),
			testkit.With(runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent)),
			testkit.NoSummary(),
		}
		missed := 0
		for range 10 {
			rep := testkit.Run(&fakeT{name: "TestOpen"}, agent, opts...)
			if !rep.Has(runtime.CodeDuplicateWrite) {
				missed++
			}
		}
		if missed > 0 {
			t.Errorf("session=%v: the duplicate issues were missed in %d of 10 runs", session, missed)
		}
	}
}
