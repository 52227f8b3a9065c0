package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team's agent (rtK, dlock) books a seat once per customer under a
// lock it takes from a lock service over HTTP (a long-polled POST /lock)
// before its first call, and frees after its last. Its two concurrent
// deliveries stalled on every run: the one holding the lock waited at its
// start gate for the other, which waited on the network for the lock, and
// a goroutine waiting for an HTTP response is busy, never quiet. The
// lockstep now lets the waiting delivery go on alone once the other has
// stayed busy outside any gate for aloneAfter. The twins keep the
// lockstep's finding: the same agent without the lock, against a fast
// service and against one that answers each request after longer than
// aloneAfter, books twice in duplicate_delivery/concurrent.

var (
	opFindSeat = &Op{Name: "find_booking", Kind: KindRead, Params: []string{"who"}, Pos: "lockservice_test.go:1"}
	opBookSeat = &Op{Name: "book", Kind: KindWrite, Params: []string{"who"}, Pos: "lockservice_test.go:2"}
)

// seatService is a booking service over HTTP: GET /find?who=w answers
// whether w has a booking, POST /book?who=w books (another booking on
// every call: no idempotency key). A request is answered after delay, and
// the n-th find (from 0) after n times stagger more, the find read after
// the wait, so that a booking made meanwhile is seen.
type seatService struct {
	delay, stagger time.Duration
	mu             sync.Mutex
	books          map[string]int
	finds          int
}

func (s *seatService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	wait := s.delay
	if r.URL.Path == "/find" {
		s.mu.Lock()
		wait += time.Duration(s.finds) * s.stagger
		s.finds++
		s.mu.Unlock()
	}
	time.Sleep(wait)
	who := r.URL.Query().Get("who")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.URL.Path {
	case "/find":
		json.NewEncoder(w).Encode(s.books[who] > 0)
	case "/book":
		s.books[who]++
	}
}

func (s *seatService) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for k, v := range s.books {
		m[k] = v
	}
	return m
}

// lockService is the red team's lock service: POST /lock?key=k blocks
// until k is free, POST /unlock?key=k frees it.
type lockService struct {
	mu    sync.Mutex
	locks map[string]chan struct{}
}

func (l *lockService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k := r.URL.Query().Get("key")
	l.mu.Lock()
	ch, ok := l.locks[k]
	if !ok {
		ch = make(chan struct{}, 1)
		l.locks[k] = ch
	}
	l.mu.Unlock()
	switch r.URL.Path {
	case "/lock":
		select {
		case ch <- struct{}{}:
			io.WriteString(w, "locked")
		case <-r.Context().Done():
		}
	case "/unlock":
		select {
		case <-ch:
		default:
		}
	}
}

func post(ctx context.Context, hc *http.Client, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, err
	}
	return hc.Do(req)
}

// seatAgent checks for a booking and books if there is none, under the
// lock service's lock when lock is not "" (its URL).
func seatAgent(hc *http.Client, svc, lock *string) func(context.Context) error {
	return func(ctx context.Context) error {
		if *lock != "" {
			resp, err := post(ctx, hc, *lock+"/lock?key=ada")
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			defer func() {
				if resp, err := post(context.Background(), hc, *lock+"/unlock?key=ada"); err == nil {
					resp.Body.Close()
				}
			}()
		}
		var found bool
		err := traced(ctx, opFindSeat, []any{"ada"}, nil, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, *svc+"/find?who="+url.QueryEscape("ada"), nil)
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			return json.NewDecoder(resp.Body).Decode(&found)
		})
		if err != nil || found {
			return err
		}
		return traced(ctx, opBookSeat, []any{"ada"}, []any{"ada"}, func(ctx context.Context) error {
			resp, err := post(ctx, hc, *svc+"/book?who=ada")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("book: %s", resp.Status)
			}
			return nil
		})
	}
}

// runSeats runs the seat agent's concurrent duplicate delivery, with the
// lock service when locked, against a service that answers after delay,
// under stall bound stall (aloneAfter: the lesser of half of it and 1 s).
func runSeats(t *testing.T, locked bool, delay, stagger, stall time.Duration) *Result {
	t.Helper()
	svc := &seatService{delay: delay, stagger: stagger}
	ssrv := httptest.NewServer(svc)
	defer ssrv.Close()
	hc := &http.Client{Timeout: 30 * time.Second}
	var lsrv *httptest.Server
	defer func() {
		if lsrv != nil {
			lsrv.Close()
		}
	}()
	base, lock := ssrv.URL, ""
	rep, err := Run(context.Background(), "seats", seatAgent(hc, &base, &lock),
		OnlyScenario(ScenarioDuplicateConcurrent),
		StallTimeout(stall),
		Setup(func(context.Context) error {
			svc.mu.Lock()
			svc.books, svc.finds = map[string]int{}, 0
			svc.mu.Unlock()
			if locked {
				if lsrv != nil {
					lsrv.Close()
				}
				lsrv = httptest.NewServer(&lockService{locks: map[string]chan struct{}{}})
				lock = lsrv.URL
			}
			return nil
		}),
		State(svc.snapshot))
	require.NoError(t, err)
	require.True(t, rep.BaselineSucceeded, "baseline: %+v", rep.BaselineFailure)
	require.Len(t, rep.Results, 1)
	return rep.Results[0]
}

func resultCodes(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	return out
}

func TestLockServiceOverHTTPGoesOnAlone(t *testing.T) {
	for range 3 {
		start := time.Now()
		r := runSeats(t, true, 0, 0, time.Second) // aloneAfter: 500 ms
		assert.Empty(t, resultCodes(r), "%s: %v", r.Scenario, r.Findings)
		assert.True(t, r.Safe, "the lock serializes the deliveries: safe")
		notes := strings.Join(r.Trace.Notes, "\n")
		assert.Contains(t, notes, "went on alone at its call 1 (find_booking): the other delivery was still busy outside any gate after 500ms")
		assert.Contains(t, notes, "waiting for an HTTP response")
		assert.Less(t, time.Since(start), 5*time.Second, "no stall: it went on alone after aloneAfter, once")
	}
}

// The twins: without the lock, the check-then-book is caught, as it was,
// against a fast service, against a slow one whose answers take longer
// than aloneAfter (the two finds are released together and answered
// together: the deliveries reach their books a moment apart), and against
// one that answers the second find 300 ms after the first, which reads
// after that wait: the first delivery waits at its book's gate for less
// than aloneAfter, and the second still reads before either books. Going
// on alone at once (aloneAfter cut to 1 ms) misses it: the first books
// before the second reads. The known limit: an answer later than the other
// delivery's by more than aloneAfter, read after that wait, loses the
// interleaving (README, Known limitations), and says so in a note.
//
// On a loaded machine the second answer is late by the stagger and by
// the load, which the lockstep cannot tell from a lock's long poll: with
// aloneAfter at 500 ms (a stall bound of 1 s), 200 ms of slack, the
// second delivery was still waiting for its find after 500 ms in 5 of 30
// runs under -race beside CPU burners, and the first went on alone (with
// the note), and a 1 s stall bound stalled a baseline (1 of 30). So the
// bound here is 2 s: aloneAfter 1 s, 700 ms of slack, and the slow
// service answers after 1.1 s, longer than aloneAfter still.
func TestCheckThenBookOverHTTPStillCaught(t *testing.T) {
	for _, c := range []struct {
		delay, stagger time.Duration
		runs           int
	}{{0, 0, 3}, {1100 * time.Millisecond, 0, 2}, {0, 300 * time.Millisecond, 3}} {
		for range c.runs {
			r := runSeats(t, false, c.delay, c.stagger, 2*time.Second)
			assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "%+v: %v", c, r.Findings)
			assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "went on alone", "%+v", c)
		}
	}
}
