package runtime

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// The agent makes a call itself and, at once, a request to a fake of the
// service it calls, whose handler makes the other call. Before that, the
// handler takes the sink's lock (a channel semaphore), which a goroutine
// the test started before the suite (a compactor that lives for the whole
// test) holds for a while at a time, asleep. The handler is blocked on a
// channel send, but not behind a gate: it goes on by itself when the
// compactor wakes. Its client is not excused, and the two calls, in flight
// together, are one batch on every run; were the handler taken for one
// waiting for the scheduler, the scenario would look quiet with one call
// at its gate, and whether the two calls are a batch would depend on the
// compactor's timing.
func TestHandlerBlockedOnAnOutsideSleeperExcusesNoClient(t *testing.T) {
	sem := make(chan struct{}, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the compactor
		for {
			select {
			case <-stop:
				return
			case sem <- struct{}{}:
			}
			time.Sleep(3 * time.Millisecond)
			<-sem
			time.Sleep(50 * time.Microsecond)
		}
	})
	defer func() { close(stop); wg.Wait() }()
	put := func(string) {}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		defer func() { <-sem }()
		if err := tracedPut(r.Context(), put, r.URL.Query().Get("key")); err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
		}
	}))
	defer func() { srv.CloseClientConnections(); srv.Close() }()
	client := srv.Client()
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		var herr error
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/?key=remote", nil)
			resp, err := client.Do(req)
			if err != nil {
				herr = err
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				herr = errors.New(resp.Status)
			}
		})
		err := tracedPut(ctx, put, "local")
		wg.Wait()
		return errors.Join(err, herr)
	}
	apart := 0
	const runs = 20
	for range runs {
		s := NewSuite("handler-outside-sleeper", agent, OnlyScenario(ScenarioBaseline), StallTimeout(2*time.Second))
		res, err := s.Baseline(context.Background())
		s.Report()
		if err != nil {
			t.Fatal(err)
		}
		if res.Failed || len(res.Trace.Ops) != 2 {
			t.Fatalf("the baseline failed (%s) or traced %d calls, want 2", res.Error, len(res.Trace.Ops))
		}
		if b := res.Trace.Ops[0].Batch; b == 0 || res.Trace.Ops[1].Batch != b {
			apart++
		}
	}
	if apart != 0 {
		t.Errorf("the two calls in flight together were one batch in %d runs of %d only", runs-apart, runs)
	}
}
