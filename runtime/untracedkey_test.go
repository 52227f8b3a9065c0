package runtime

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A webhook handler (an httptest.Server that Setup starts) ships an order
// with its request's context, at a sink keyed by the order that Setup
// makes fresh for every scenario; the agent is the provider POSTing the
// event. In duplicate_delivery/concurrent, with two deliveries in flight,
// a handler's call cannot be told to be either delivery's and goes
// untraced; the other handler's call, traced, replays the key the
// untraced one made. The note said "the world Setup gave was not fresh"
// and told the user to reset a store that is reset (red team rtY #1). It
// says now that a call of the op went untraced and may have made the
// key, and how to carry the run; the scenario is still inconclusive. A
// sink Setup does not reset is still told so.
func TestReplayOfAnUntracedExecutionsKeyDoesNotBlameSetup(t *testing.T) {
	ship := &Op{Name: "ship_order", Kind: KindWrite, Params: []string{"order"}}
	for _, reset := range []bool{true, false} {
		var (
			mu        sync.Mutex
			keys      = map[string]bool{"ord-1": true} // an earlier test's, unless Setup resets
			shipments int
			srv       *httptest.Server
		)
		// The first handler ships while both deliveries wait for it
		// (untraced: neither's), the second once the first delivery has
		// returned (traced, the other's, a replay of the first's key):
		// the order the red team's runs showed now and then, every time.
		var arrived chan struct{}
		var n int
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if liveDeliveries() == 2 {
				if first {
					<-arrived
				} else {
					close(arrived)
					for liveDeliveries() > 1 {
						time.Sleep(time.Millisecond)
					}
				}
			}
			err := traced(r.Context(), ship, []any{"ord-1"}, []any{"ord-1"}, func(ctx context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if keys["ord-1"] {
					MarkReplayed(ctx)
					return nil
				}
				keys["ord-1"] = true
				shipments++
				return nil
			})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		})
		agent := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader([]byte(`{"order":"ord-1"}`)))
			resp, err := srv.Client().Do(req)
			if err != nil {
				return err
			}
			return resp.Body.Close()
		}
		rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioDuplicateConcurrent),
			Setup(func(context.Context) error {
				mu.Lock()
				if reset {
					keys = map[string]bool{}
				}
				shipments, n = 0, 0
				arrived = make(chan struct{})
				mu.Unlock()
				srv = httptest.NewServer(handler)
				return nil
			}),
			Teardown(func(context.Context) error { srv.Close(); return nil }),
			State(func() any { mu.Lock(); defer mu.Unlock(); return shipments }))
		if err != nil {
			t.Fatal(err)
		}
		if base := strings.Join(rep.Baseline.Trace.Notes, "\n"); strings.Contains(base, "the world Setup gave was not fresh") == reset {
			t.Errorf("reset %v: the baseline's notes blame Setup: %v, want %v:\n%s", reset, !reset, !reset, base)
		}
		for _, res := range rep.Results {
			if res.Scenario != ScenarioDuplicateConcurrent {
				continue
			}
			notes := strings.Join(res.Trace.Notes, "\n")
			untraced := len(res.Trace.Unattributed) > 0
			replayed := false
			for _, o := range res.Trace.Ops {
				replayed = replayed || o.Replayed
			}
			if !untraced || !replayed {
				t.Fatalf("reset %v: untraced %v, replayed %v: want the second handler's call traced, a replay of the first's, untraced", reset, untraced, replayed)
			}
			t.Logf("reset %v: inconclusive %v, untraced %v, replayed %v, notes:\n%s", reset, res.Inconclusive, untraced, replayed, notes)
			if reset && strings.Contains(notes, "not fresh") {
				t.Errorf("reset %v: a replay is blamed on Setup, whose sink is fresh:\n%s", reset, notes)
			}
			if !strings.Contains(notes, "a call of the same op in this run was not traced") {
				t.Errorf("reset %v: the note does not say the execution that made the key was untraced:\n%s", reset, notes)
			}
			if !res.Inconclusive && (untraced || replayed) {
				t.Errorf("reset %v: not inconclusive", reset)
			}
		}
	}
}

// liveDeliveries is how many deliveries of the active run are in flight
// (lookup's live).
func liveDeliveries() int {
	live := 0
	for _, r := range activeRecorders() {
		r.mu.Lock()
		live += r.pending
		for _, x := range r.all {
			if !x.returned.Load() {
				live++
			}
		}
		r.mu.Unlock()
	}
	return live
}
