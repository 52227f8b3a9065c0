package runtime

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// An agent that sends two requests at once to a fake of the service it
// calls, whose handler serializes on the sink's lock (or a channel
// semaphore) around the tool it calls: under the baseline's schedule the
// first handler's call waits at its gate holding the lock, and the second
// handler waits for the lock. Both clients wait for an answer that only
// the scheduler lets come, but only the request held at a gate excused
// its client: the scheduler never saw the agent quiet, and the baseline
// stalled every time on 15ffdaa. The second handler waits for the gate as
// much as the first does: the scenario is quiet, and the calls run one
// after the other, as the lock makes them.
func TestSchedulerSeesAHandlerBlockedBehindAGate(t *testing.T) {
	for _, c := range []struct {
		name string
		// serialize returns the sink's critical section: acquire, and
		// the release to defer.
		serialize func() (acquire func(), release func())
		// timeout runs the handler in a goroutine of
		// http.TimeoutHandler's.
		timeout bool
		// warm sends two requests before the suite, so that the
		// handlers run on keep-alive connections whose goroutines
		// are older than the scenario.
		warm bool
	}{
		{name: "sync.Mutex", serialize: mutex},
		{name: "channel semaphore", serialize: semaphore},
		{name: "behind http.TimeoutHandler", serialize: mutex, timeout: true},
		{name: "on connections older than the scenario", serialize: mutex, warm: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			acquire, release := c.serialize()
			var opened atomic.Int32
			put := func(string) { opened.Add(1) }
			var h http.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				key := r.URL.Query().Get("key")
				if key == "" {
					return // warming up
				}
				acquire()
				defer release()
				if err := tracedPut(r.Context(), put, key); err != nil {
					http.Error(rw, err.Error(), http.StatusBadGateway)
				}
			})
			if c.timeout {
				h = http.TimeoutHandler(h, time.Minute, "timeout")
			}
			srv := httptest.NewServer(h)
			defer func() { srv.CloseClientConnections(); srv.Close() }()
			client := srv.Client()
			post := func(ctx context.Context, key string) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/open?key="+key, nil)
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
			agent := func(ctx context.Context) error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, key := range []string{"a", "b"} {
					wg.Go(func() { errs[i] = post(ctx, key) })
				}
				wg.Wait()
				return errors.Join(errs...)
			}
			if c.warm {
				var wg sync.WaitGroup
				for range 2 {
					wg.Go(func() {
						if err := post(context.Background(), ""); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
			}
			s := NewSuite("handler-lock-parallel", agent, OnlyScenario(ScenarioBaseline), StallTimeout(2*time.Second))
			endSuite(t, s)
			res, err := s.Baseline(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Code == CodeStalled {
					t.Errorf("stalled: %s", f.Message)
				}
			}
			if res.Failed {
				t.Errorf("the baseline failed: %s", res.Error)
			}
			if got := len(res.Trace.Ops); got != 2 {
				t.Errorf("%d calls traced, want the two handlers'", got)
			}
			for _, o := range res.Trace.Ops {
				if o.Batch != 0 {
					t.Errorf("%s was in flight with another call: the lock serializes them", o.ID)
				}
			}
		})
	}
}

func mutex() (func(), func()) {
	var mu sync.Mutex
	return mu.Lock, mu.Unlock
}

func semaphore() (func(), func()) {
	sem := make(chan struct{}, 1)
	return func() { sem <- struct{}{} }, func() { <-sem }
}

// A real deadlock through the test's HTTP server, on a keep-alive
// connection older than the scenario: the agent holds the lock its
// handler needs. The stall is reported in bounded time and names the
// handler blocked on the lock, though its goroutine is not the scenario's;
// it once named only the client waiting for the answer.
func TestStallNamesAHandlerOnAnOlderConnection(t *testing.T) {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("warm") == "" {
			mu.Lock()
			defer mu.Unlock()
		}
	}))
	defer func() { srv.CloseClientConnections(); srv.Close() }()
	client := srv.Client()
	post := func(ctx context.Context, query string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/?"+query, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := post(context.Background(), "warm=1"); err != nil {
		t.Fatal(err)
	}
	agent := func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if err := post(ctx, ""); err != nil {
			return err
		}
		return tracedPut(ctx, func(string) {}, "k")
	}
	s := NewSuite("stall-older-conn", agent, OnlyScenario(ScenarioBaseline), StallTimeout(300*time.Millisecond))
	endSuite(t, s)
	msg := baselineStall(t, s)
	for _, want := range []string{
		"delivery 1 (goroutine ",
		"is waiting for an HTTP response at handlerlock_test.go:",
		"is blocked on a sync.Mutex at handlerlock_test.go:",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
}
