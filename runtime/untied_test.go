package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
			continue
		}
		assert.False(t, rep.Baseline.Inconclusive, "%q", notes)
		assert.NotContains(t, notes, "no traced call could be tied to")
		assert.NotNil(t, resultOf(t, rep, "lost_response/charge#1"), "the caller's request is the call's")
	}
}
