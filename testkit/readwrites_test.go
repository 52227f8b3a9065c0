package testkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// mailDesk is a support desk behind an HTTP server: POST /emails sends a
// mail (appends to the outbox), GET /customer answers. A job queued with
// POST /jobs is carried out by a worker of the desk's own a moment later.
type mailDesk struct {
	mu     sync.Mutex
	outbox []string
	done   []string
	beats  int
	jobs   chan string
	srv    *httptest.Server
}

func newMailDesk(worker, heartbeat bool) *mailDesk {
	d := &mailDesk{jobs: make(chan string, 8)}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/emails":
			d.mu.Lock()
			d.outbox = append(d.outbox, r.URL.Query().Get("to"))
			d.mu.Unlock()
		case r.Method == http.MethodPost && r.URL.Path == "/jobs":
			d.jobs <- r.URL.Query().Get("id")
		case r.URL.Path == "/customer":
			time.Sleep(5 * time.Millisecond) // a slow lookup
		}
	}))
	if worker {
		go func() {
			for id := range d.jobs {
				time.Sleep(2 * time.Millisecond)
				d.mu.Lock()
				d.done = append(d.done, id)
				d.mu.Unlock()
			}
		}()
	}
	if heartbeat {
		go func() {
			for range 200 {
				time.Sleep(time.Millisecond)
				d.mu.Lock()
				d.beats++
				d.mu.Unlock()
			}
		}()
	}
	return d
}

func (d *mailDesk) close() {
	d.srv.Close()
	close(d.jobs)
}

func (d *mailDesk) state(beats bool) any {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := map[string]any{"outbox": append([]string{}, d.outbox...), "done": append([]string{}, d.done...)}
	if beats {
		m["beats"] = d.beats
	}
	return m
}

var (
	notifyReadOp   = &runtime.Op{Name: "notify_customer", Kind: runtime.KindRead, Params: []string{"to"}}
	lookupReadOp   = &runtime.Op{Name: "lookup_customer", Kind: runtime.KindRead, Params: []string{"id"}}
	enqueueWriteOp = &runtime.Op{Name: "enqueue", Kind: runtime.KindWrite, Params: []string{"id"}, Idempotent: true}
)

func (d *mailDesk) call(ctx context.Context, op *runtime.Op, method, path, arg string) error {
	return tracedCall(ctx, op, []any{arg}, []any{arg}, nil, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, method, d.srv.URL+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
}

// A write annotated read (notify_customer POSTs a mail) changed the state
// inside its own window in every run, and the suite, State given, said
// SAFE with nothing to note (red team rtV #25). Now the baseline carries
// a read_changed_state warning naming the op and what changed, and the
// suite is INCONCLUSIVE. A true read (a GET) is SAFE; so is a read whose
// window a worker of the world's own lands an effect in (a job the write
// before it queued), and one beside a heartbeat that changes the state by
// itself: the suite cannot tell whose change it was, and says nothing.
func TestAReadWhoseCallChangesTheStateIsNoted(t *testing.T) {
	for _, tc := range []struct {
		name              string
		worker, heartbeat bool
		agent             func(d *mailDesk) func(context.Context) error
		noted             bool
	}{
		{"read that POSTs", false, false, func(d *mailDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				return d.call(ctx, notifyReadOp, http.MethodPost, "/emails?to=ada", "ada")
			}
		}, true},
		{"read that GETs", false, false, func(d *mailDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				return d.call(ctx, lookupReadOp, http.MethodGet, "/customer", "c-1")
			}
		}, false},
		{"read beside the worker's job", true, false, func(d *mailDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				if err := d.call(ctx, enqueueWriteOp, http.MethodPost, "/jobs?id=j1", "j1"); err != nil {
					return err
				}
				return d.call(ctx, lookupReadOp, http.MethodGet, "/customer", "c-1")
			}
		}, false},
		{"read beside a heartbeat", false, true, func(d *mailDesk) func(context.Context) error {
			return func(ctx context.Context) error {
				return d.call(ctx, lookupReadOp, http.MethodGet, "/customer", "c-1")
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d *mailDesk
			t.Cleanup(func() {
				if d != nil {
					d.close()
				}
			})
			ft := &fakeT{name: "TestDesk"}
			rep := testkit.Run(ft, func(ctx context.Context) error { return tc.agent(d)(ctx) },
				testkit.NoSummary(),
				testkit.Setup(func(context.Context) error {
					if d != nil {
						d.close()
					}
					d = newMailDesk(tc.worker, tc.heartbeat)
					return nil
				}),
				testkit.State(func() any { return d.state(tc.heartbeat) }))
			require.NotNil(t, rep.Baseline)
			var noted []string
			for _, f := range rep.Baseline.Findings {
				if f.Code == runtime.CodeReadChangedState {
					noted = append(noted, f.Message)
				}
			}
			if !tc.noted {
				assert.Empty(t, noted, "a read that changed nothing itself is flagged")
				return
			}
			require.Len(t, noted, 1, "%v", rep.Baseline.Findings)
			assert.True(t, strings.HasPrefix(noted[0], `notify_customer is annotated read, but the state changed while its call 1:notify_customer#1 ran (outbox: 0 → 1 entry, added "ada")`), noted[0])
			assert.Contains(t, noted[0], "annotate it //agentidem:write identity=")
			assert.True(t, rep.Baseline.Inconclusive)
			assert.Contains(t, fmt.Sprint(rep.Baseline.Findings), "warning")
			assert.False(t, ft.failed(), "a warning fails nothing: %v", ft.errors)
		})
	}
}

// The agent holds what State needs across a read (a transaction on a pool
// of one connection, here a lock): State for the read check runs aside
// and is waited for a second at most, so the baseline does not stall on
// it, and the check turns off; the writes are judged as before.
func TestAReadHeldAcrossWhatStateNeedsDoesNotStall(t *testing.T) {
	var (
		conn sync.Mutex // the pool's only connection
		rows []string
	)
	readOp := &runtime.Op{Name: "find_row", Kind: runtime.KindRead, Params: []string{"id"}}
	writeOp := &runtime.Op{Name: "add_row", Kind: runtime.KindWrite, Params: []string{"id"}, Idempotent: true}
	agent := func(ctx context.Context) error {
		conn.Lock() // BEGIN
		err := tracedCall(ctx, readOp, []any{"r1"}, []any{"r1"}, nil, func(context.Context) error { return nil })
		conn.Unlock() // COMMIT
		if err != nil {
			return err
		}
		return tracedCall(ctx, writeOp, []any{"r1"}, []any{"r1"}, nil, func(context.Context) error {
			conn.Lock()
			defer conn.Unlock()
			if !slices.Contains(rows, "r1") {
				rows = append(rows, "r1")
			}
			return nil
		})
	}
	ft := &fakeT{name: "TestTx"}
	start := time.Now()
	rep := testkit.TestAgent(ft, agent, testkit.NoSummary(), testkit.StallTimeout(5*time.Second),
		testkit.Setup(func(context.Context) error { conn.Lock(); rows = nil; conn.Unlock(); return nil }),
		testkit.State(func() any { conn.Lock(); defer conn.Unlock(); return slices.Clone(rows) }))
	assert.False(t, ft.failed(), "%v", ft.errors)
	for _, f := range rep.Findings {
		assert.NotEqual(t, runtime.CodeStalled, f.Code, f.Message)
		assert.NotEqual(t, runtime.CodeReadChangedState, f.Code, f.Message)
	}
	assert.Less(t, time.Since(start), 20*time.Second)
}
