package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stripe-go's back-off is a time.Sleep in its backend's retry loop, not a
// select on a timer (red team rtT #2): a goroutine asleep there is in a
// retry's back-off, and says whose. A time.Sleep anywhere else is only
// asleep.
func TestStripeSleepBackoffIsARetry(t *testing.T) {
	for _, tc := range []struct {
		block, why, where string
	}{
		{"goroutine 61 [sleep]:\ntime.Sleep(0x1dcd6500)\n\t/usr/local/go/src/runtime/time.go:363 +0x165\ngithub.com/stripe/stripe-go/v82.(*BackendImplementation).requestWithRetriesAndTelemetry(0xc0001a6000, 0xc000234000, 0xc0001b2000, 0xc00021e0c0)\n\t/root/go/pkg/mod/github.com/stripe/stripe-go/v82@v82.5.1/stripe.go:744 +0x4a5\ngithub.com/stripe/stripe-go/v82.(*BackendImplementation).Do(0xc0001a6000, 0xc000234000, 0xc0001b2000, {0xa1a950, 0xc000300000})\n\t/root/go/pkg/mod/github.com/stripe/stripe-go/v82@v82.5.1/stripe.go:845 +0x1b4",
			retryBackoffWhy, "stripe-go/v82.(*BackendImplementation).requestWithRetriesAndTelemetry, at "},
		{"goroutine 62 [sleep]:\ntime.Sleep(0x1dcd6500)\n\t/usr/local/go/src/runtime/time.go:363 +0x165\ngithub.com/stripe/stripe-go/v72.(*BackendImplementation).Do(0xc0001a6000, 0xc000234000, 0xc0001b2000, {0xa1a950, 0xc000300000})\n\t/root/go/pkg/mod/github.com/stripe/stripe-go/v72@v72.122.0/stripe.go:570 +0x1b4",
			retryBackoffWhy, "stripe-go/v72.(*BackendImplementation).Do, at "},
		// A sleep of stripe-go's outside its backend, and of anyone else.
		{"goroutine 63 [sleep]:\ntime.Sleep(0x1dcd6500)\n\t/usr/local/go/src/runtime/time.go:363 +0x165\ngithub.com/stripe/stripe-go/v82.(*BackendImplementation).DoStreamingLater(0xc0001a6000)\n\t/root/go/pkg/mod/github.com/stripe/stripe-go/v82@v82.5.1/stripe.go:900 +0x1b4",
			"sleep", ""},
		{"goroutine 64 [sleep]:\ntime.Sleep(0x1dcd6500)\n\t/usr/local/go/src/runtime/time.go:363 +0x165\nexample.com/agent.poll(0xc0001a6000)\n\t/src/agent/poll.go:12 +0x1b4",
			"sleep", ""},
	} {
		g, ok := parseGoroutine(tc.block)
		require.True(t, ok, tc.block)
		busy, why := g.busy(time.Time{})
		assert.True(t, busy, "goroutine %d", g.id)
		assert.Equal(t, tc.why, why, "goroutine %d", g.id)
		w := g.retryingWait()
		if tc.where == "" {
			assert.Empty(t, w, "goroutine %d", g.id)
		} else {
			assert.True(t, strings.HasPrefix(w, tc.where), "goroutine %d: %q", g.id, w)
		}
	}
}

// sleepyBackend is a client shaped like stripe-go's BackendImplementation:
// its retry loop sends a request again after a 5xx, having slept with
// time.Sleep. Its method is added to sleepBackoffs by the test: the core
// module imports no SDK.
type sleepyBackend struct{ hc *http.Client }

func (b *sleepyBackend) requestWithRetriesAndTelemetry(ctx context.Context, u string, retries int) error {
	for attempt := 0; ; attempt++ {
		resp, err := post(ctx, b.hc, u)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 500 || attempt == retries {
			return nil
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// The write's client re-sends a request whose 500 came after it was
// applied, sleeping in between as stripe-go does: the scenario notes the
// retry inside the call, as it does for the clients that back off in a
// select; the twin whose client does not retry gets no such note.
func TestRetryInsideAWriteAfterASleepIsNoted(t *testing.T) {
	defer func(saved []struct{ pkg, method string }) { sleepBackoffs = saved }(sleepBackoffs)
	sleepBackoffs = append(sleepBackoffs[:len(sleepBackoffs):len(sleepBackoffs)], struct{ pkg, method string }{"github.com/agentidem/agentidem-go/runtime", ".(*sleepyBackend).requestWithRetriesAndTelemetry"})
	for _, retries := range []int{2, 0} {
		l := &lossyLedger{}
		srv := httptest.NewServer(l)
		b := &sleepyBackend{hc: &http.Client{Timeout: 30 * time.Second}}
		agent := func(ctx context.Context) error {
			if err := traced(ctx, opCreditLossy, []any{"tx-1"}, []any{"tx-1"}, func(ctx context.Context) error {
				return b.requestWithRetriesAndTelemetry(ctx, srv.URL+"/credit?tx=tx-1", retries)
			}); err != nil {
				return err
			}
			return traced(ctx, opReadBalance, []any{"acct-1"}, nil, func(context.Context) error { return nil })
		}
		rep, err := Run(context.Background(), "sleepy", agent,
			Setup(func(context.Context) error {
				l.mu.Lock()
				l.balance, l.requests = 0, 0
				l.mu.Unlock()
				return nil
			}),
			State(func() any { l.mu.Lock(); defer l.mu.Unlock(); return l.balance }))
		srv.Close()
		require.NoError(t, err)
		var notes []string
		for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
			notes = append(notes, r.Trace.Notes...)
		}
		all := strings.Join(notes, "\n")
		if retries > 0 {
			assert.Contains(t, all, "a call of credit (a write) was seen in its client's retry back-off inside its tool body (runtime.(*sleepyBackend).requestWithRetriesAndTelemetry, at sdksleep_test.go:", "retries %d", retries)
		} else {
			assert.NotContains(t, all, retriedInsideMark, "retries %d", retries)
		}
	}
}
