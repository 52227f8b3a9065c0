package runtime

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The flake of testkit's TestToolBehindTheTestsHTTPServer ("in Setup, once
// per key"), made to happen every time. The agent posts to a fake of the
// service it calls, an httptest server whose handler opens the ticket
// under the sink's lock (or a channel semaphore). Under concurrent
// duplicate delivery, the second delivery begins here only once the
// handler of the first one's request has called the tool (a hook; under
// load, the Go scheduler did the same once). On 15ffdaa the second
// delivery, started but not yet listed, did not count as in flight: the
// handler's call was taken for the first delivery's and waited at the
// lockstep gate, holding the lock, and the second delivery's request
// blocked on that lock in its handler. Both deliveries were HTTP clients
// waiting for an answer, the one request held at the gate excused one of
// them only, and the scenario stalled until its stall timeout, every time.
// Both deliveries are in flight from the moment they are started: the
// handler's call is refused as one of either, as when the second delivery
// begins first, and the verdict does not depend on which goroutine ran
// first. (With only the quiescence fixed, as the next test needs, the
// scenario no longer stalled, but the call was traced as the first
// delivery's: another verdict.)
func TestHandlerCallBeforeTheSecondDeliveryBegins(t *testing.T) {
	for _, c := range []struct {
		name string
		// serialize returns the sink's critical section: acquire, and
		// the release to defer.
		serialize func() (acquire func(), release func())
	}{
		{"sync.Mutex", mutex},
		{"sync.RWMutex", func() (func(), func()) {
			var mu sync.RWMutex
			return mu.Lock, mu.Unlock
		}},
		{"channel semaphore", semaphore},
	} {
		t.Run(c.name, func(t *testing.T) {
			acquire, release := c.serialize()
			var opened atomic.Int32
			put := func(string) { opened.Add(1) }
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				acquire()
				defer release()
				if opened.Load() > 0 { // one ticket per key
					return
				}
				if err := tracedPut(r.Context(), put, r.URL.Query().Get("key")); err != nil {
					http.Error(rw, err.Error(), http.StatusBadGateway)
				}
			}))
			defer func() { srv.CloseClientConnections(); srv.Close() }()
			client := srv.Client()
			agent := func(ctx context.Context) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/open?key=D-1", nil)
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return errors.New(resp.Status)
				}
				return nil
			}
			// The second delivery begins only once the handler of the
			// first one's request has called the tool: its call waits
			// at the gate, or it ran. It spins meanwhile, so that it
			// never looks quiet: the lockstep cannot let the first
			// delivery go on alone before the second one has sent its
			// request.
			testHookDelivery = func(r *recorder, n int) {
				lk, _ := r.gate.(*lockstep)
				if n != 2 || lk == nil {
					return
				}
				deadline := time.Now().Add(10 * time.Second)
				for opened.Load() == 0 && time.Now().Before(deadline) {
					lk.mu.Lock()
					parked := len(lk.waiting)
					lk.mu.Unlock()
					if parked > 0 {
						return
					}
					goruntime.Gosched()
				}
			}
			defer func() { testHookDelivery = nil }()
			s := NewSuite("handler-lock", agent, OnlyScenario(ScenarioDuplicateConcurrent), StallTimeout(2*time.Second))
			endSuite(t, s)
			opened.Store(0)
			if _, err := s.Baseline(context.Background()); err != nil {
				t.Fatal(err)
			}
			plan := s.Plan()
			if len(plan) != 1 || plan[0].Name != ScenarioDuplicateConcurrent {
				t.Fatalf("plan %v, want the concurrent duplicate delivery", plan)
			}
			opened.Store(0)
			res, err := s.RunScenario(context.Background(), plan[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Code == CodeStalled {
					t.Errorf("stalled: %s", f.Message)
				}
			}
			// As when the second delivery begins first: the handler's
			// call, made while both deliveries are in flight, is told
			// of neither, and the verdict says so.
			refused := strings.Join(res.Trace.Refused, "\n")
			if !strings.Contains(refused, "call of put refused") || !strings.Contains(refused, "either of the 2 deliveries of this run in flight together (it serves an HTTP request to this process") {
				t.Errorf("the handler's call was not refused as one of either delivery:\n%s\nnotes:\n%s", refused, strings.Join(res.Trace.Notes, "\n"))
			}
			if n := opened.Load(); n != 1 {
				t.Errorf("%d tickets opened, want 1", n)
			}
		})
	}
}
