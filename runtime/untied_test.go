package runtime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dispatchSDK sends every request through one goroutine of its own, made
// before the suite, as a client with a send queue does; ownCtx sends with
// a context of its own, not the caller's.
type dispatchSDK struct {
	hc     *http.Client
	ownCtx bool
	jobs   chan dispatchJob
}

type dispatchJob struct {
	ctx  context.Context
	url  string
	done chan error
}

func newDispatchSDK(ownCtx bool) *dispatchSDK {
	d := &dispatchSDK{hc: &http.Client{Transport: Transport(nil)}, ownCtx: ownCtx, jobs: make(chan dispatchJob)}
	go func() {
		for j := range d.jobs {
			ctx := j.ctx
			if d.ownCtx {
				ctx = context.Background()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, j.url, nil)
			resp, err := d.hc.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			j.done <- err
		}
	}()
	return d
}

func (d *dispatchSDK) post(ctx context.Context, url string) error {
	done := make(chan error, 1)
	d.jobs <- dispatchJob{ctx: ctx, url: url, done: done}
	return <-done
}

// A write request an SDK's dispatcher goroutine sends with a context of
// its own is tied to no call: no lost_response was planned for it, its
// client's retries were never met, and a payments SDK that retried
// without a key passed 7 runs of 7, its only note saying to wrap the
// client with runtime.Transport, which it was (red team rR #1). The
// baseline that sent one is inconclusive and says which request and why.
// Sent with the caller's context, it is the call's, and tested.
func TestAWriteRequestTiedToNoCallIsNoted(t *testing.T) {
	charge := &Op{Name: "charge", Kind: KindWrite, Params: []string{"order"}}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for _, ownCtx := range []bool{true, false} {
		sdk := newDispatchSDK(ownCtx)
		agent := func(ctx context.Context) error {
			return traced(ctx, charge, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
				return sdk.post(ctx, srv.URL+"/charges")
			})
		}
		rep, err := Run(context.Background(), t.Name(), agent)
		close(sdk.jobs)
		require.NoError(t, err)
		notes := strings.Join(rep.Baseline.Trace.Notes, "\n")
		if ownCtx {
			assert.True(t, rep.Baseline.Inconclusive, "the baseline sent a write request no call is tied to")
			assert.Contains(t, notes, "no traced call could be tied to (POST "+strings.TrimPrefix(srv.URL, "http://")+"/charges)")
			assert.Equal(t, 1, strings.Count(notes, "no traced call could be tied to"), "one note: %q", notes)
			continue
		}
		assert.False(t, rep.Baseline.Inconclusive, "%q", notes)
		assert.NotContains(t, notes, "no traced call could be tied to")
		assert.NotNil(t, resultOf(t, rep, "lost_response/charge#1"), "the caller's request is the call's")
	}
}

// notifyDesk is a service that records each notification it is sent,
// once per Idempotency-Key where the request has one.
type notifyDesk struct {
	mu       sync.Mutex
	sent     []string
	keys     map[string]bool
	inflight atomic.Int32
}

func (d *notifyDesk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k := r.Header.Get("Idempotency-Key"); k != "" {
		if d.keys[k] {
			return
		}
		d.keys[k] = true
	}
	d.sent = append(d.sent, r.URL.Path)
}

// A tool that sends its notification from a goroutine it starts and does
// not wait for (fire and forget), with a context of its own, retrying
// timeouts: the request, sent after the call returned, was tied to no
// call, so no lost_response met the retry, and both twins were
// inconclusive (red team rR #1c; before 4ee6b32 the twin without a key
// passed with a Settle). The goroutine that started the sender made one
// write alone: the request is that write's, its lost_response is planned
// and fires, and the notifier without a key notifies twice.
func TestARequestAToolLeftSendingIsTheCalls(t *testing.T) {
	notify := &Op{Name: "notify", Kind: KindWrite, Params: []string{"order"}}
	for _, keyed := range []bool{true, false} {
		d := &notifyDesk{}
		srv := httptest.NewServer(d)
		hc := &http.Client{Transport: Transport(nil)}
		agent := func(ctx context.Context) error {
			return traced(ctx, notify, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
				d.inflight.Add(1)
				go func() {
					defer d.inflight.Add(-1)
					for range 3 {
						req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/notifications", nil)
						if keyed {
							req.Header.Set("Idempotency-Key", "notify-o-1")
						}
						resp, err := hc.Do(req)
						if err == nil {
							resp.Body.Close()
							return
						}
						if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
							return
						}
					}
				}()
				return nil
			})
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error {
				d.mu.Lock()
				d.sent, d.keys = nil, map[string]bool{}
				d.mu.Unlock()
				return nil
			}),
			State(func() any { d.mu.Lock(); defer d.mu.Unlock(); return map[string]any{"sent": slices.Clone(d.sent)} }),
			Settle(func(ctx context.Context) error {
				for d.inflight.Load() > 0 {
					select {
					case <-ctx.Done():
						return ctx.Err()
					case <-time.After(time.Millisecond):
					}
				}
				return nil
			}))
		srv.Close()
		require.NoError(t, err)
		assert.False(t, rep.Baseline.Inconclusive, "%q", rep.Baseline.Trace.Notes)
		r := resultOf(t, rep, "lost_response/notify#1")
		require.NotNil(t, r, "no lost_response planned for the request the tool left sending")
		for _, f := range r.Findings {
			assert.NotEqual(t, CodeFaultNotTriggered, f.Code, "%s", f.Message)
		}
		if keyed {
			assert.Empty(t, r.Findings, "the keyed notifier: %q", r.Trace.Notes)
			continue
		}
		if assert.NotEmpty(t, r.Findings, "notes %q", r.Trace.Notes) {
			assert.Equal(t, CodeDuplicateWrite, r.Findings[0].Code, "%s", r.Findings[0].Message)
		}
	}
}
