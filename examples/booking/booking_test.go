package booking

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/internal/reportschema"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const customer, flight = "ada", "LH400"

type agentFunc func(ctx context.Context, c *Client, customer, flight string) error

// world starts a booking service per scenario, on a keep-alive client
// every scenario shares, and guards it with an invariant.
type world struct {
	svc    *Service
	srv    *httptest.Server
	client *Client
}

func newWorld(t *testing.T) *world {
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &world{client: &Client{HTTP: &http.Client{Transport: tr, Timeout: 2 * time.Second}}}
}

func (w *world) options(more ...testkit.Option) []testkit.Option {
	return append([]testkit.Option{
		testkit.Setup(func(context.Context) error {
			w.svc = NewService()
			w.srv = httptest.NewServer(w.svc)
			w.client.Base = w.srv.URL
			return nil
		}),
		testkit.Teardown(func(context.Context) error { w.srv.Close(); return nil }),
		testkit.Invariant("at most one booking", func(*runtime.Trace) error {
			if n := w.svc.Count(customer, flight); n > 1 {
				return fmt.Errorf("%d bookings for %s on %s", n, customer, flight)
			}
			return nil
		}),
	}, more...)
}

func (w *world) agent(fn agentFunc) func(context.Context) error {
	return func(ctx context.Context) error { return fn(ctx, w.client, customer, flight) }
}

// urlErrors gives each fault the *url.Error net/http returns when the same
// happens for real: a timeout for an answer that never came, a refused
// connection for a request that never reached the service.
func (w *world) urlErrors(op string, kind runtime.FaultKind) error {
	u := w.client.Base + "/bookings"
	switch kind {
	case runtime.FaultLostAck, runtime.FaultLostRequest:
		return &url.Error{Op: "Post", URL: u, Err: context.DeadlineExceeded}
	case runtime.FaultBefore:
		return &url.Error{Op: "Post", URL: u, Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	}
	return nil
}

// gatewayErrors gives each fault the answer of a gateway in front of the
// service: a 504 for an answer that never came (the gateway timed out
// after the service booked), a 503 for a request that never reached it.
func gatewayErrors(op string, kind runtime.FaultKind) error {
	switch kind {
	case runtime.FaultLostAck:
		return &StatusError{Code: http.StatusGatewayTimeout, Body: "upstream timed out"}
	case runtime.FaultLostRequest, runtime.FaultBefore:
		return &StatusError{Code: http.StatusServiceUnavailable, Body: "no healthy upstream"}
	}
	return nil
}

// bookCalls counts the calls of book in each fault scenario of rep.
func bookCalls(rep *runtime.Report) map[string]int {
	calls := map[string]int{}
	for _, res := range rep.Results {
		for _, op := range res.Trace.Ops {
			if op.Name == "book" {
				calls[res.Scenario]++
			}
		}
	}
	return calls
}

// noteOnDefaultFaults runs fn's suite with the runtime's own injected
// errors: fn retries on none of them, books once in every scenario, and
// passes; the report and the summary say that no injected fault was
// retried, and name FaultError.
func noteOnDefaultFaults(t *testing.T, fn agentFunc) {
	w := newWorld(t)
	rep := testkit.TestAgent(t, w.agent(fn), w.options()...)
	require.True(t, rep.Safe)
	assert.Equal(t, 1, bookCalls(rep)["lost_acknowledgement/book#1"], "the agent does not retry the runtime's own timeout")
	require.Len(t, rep.Notes, 1)
	assert.Contains(t, rep.Notes[0], "no injected fault was retried")
	assert.Contains(t, rep.Notes[0], "lost_acknowledgement, lost_request, before_operation_failure")
	assert.Contains(t, rep.Notes[0], "testkit.FaultError")
	assert.Contains(t, testkit.Summary(rep), "\n  note: no injected fault was retried")
	assert.NoError(t, reportschema.Validate(rep), "the report with its notes fits the schema")
}

// Red team rtK: reported SAFE with nothing said, 10 runs of 10. It still
// passes (it never retries the runtime's own errors, and that is safe),
// and the report now says why the pass is not the whole story.
func TestTransportRetryAgentUnderTheRuntimesErrorsGetsTheNote(t *testing.T) {
	noteOnDefaultFaults(t, TransportRetryAgent)
}

func TestStatusRetryAgentUnderTheRuntimesErrorsGetsTheNote(t *testing.T) {
	noteOnDefaultFaults(t, StatusRetryAgent)
}

// caught runs fn's suite with faults that return what retry looks for: the
// lost acknowledgement is retried and books twice.
func caught(t *testing.T, fn agentFunc, faults func(*world) func(string, runtime.FaultKind) error) {
	w := newWorld(t)
	rep := testkit.Run(t, w.agent(fn), w.options(testkit.FaultError(faults(w)))...)
	require.True(t, rep.BaselineSucceeded)
	assert.False(t, rep.Safe)
	var dup, inv bool
	for _, f := range rep.Findings {
		if f.Scenario != "lost_acknowledgement/book#1" {
			continue
		}
		dup = dup || f.Code == runtime.CodeDuplicateWrite
		inv = inv || f.Code == runtime.CodeInvariantFailed && strings.Contains(f.Message, "2 bookings")
	}
	assert.True(t, dup, "duplicate_write in lost_acknowledgement/book#1: %v", rep.Findings)
	assert.True(t, inv, "the invariant fails in lost_acknowledgement/book#1: %v", rep.Findings)
	assert.Empty(t, rep.Notes, "the agent retried")
}

func TestTransportRetryAgentIsCaughtWithURLErrors(t *testing.T) {
	caught(t, TransportRetryAgent, func(w *world) func(string, runtime.FaultKind) error { return w.urlErrors })
}

func TestStatusRetryAgentIsCaughtWithGatewayErrors(t *testing.T) {
	caught(t, StatusRetryAgent, func(*world) func(string, runtime.FaultKind) error { return gatewayErrors })
}

// passes runs the keyed agent's suite with the errors its retry looks
// for: it retries, under its key, and the service replays.
func passes(t *testing.T, retry func(error) bool, faults func(*world) func(string, runtime.FaultKind) error) {
	w := newWorld(t)
	rep := testkit.TestAgent(t, w.agent(KeyedAgent(retry)), w.options(testkit.FaultError(faults(w)))...)
	assert.True(t, rep.Safe)
	assert.Equal(t, 2, bookCalls(rep)["lost_acknowledgement/book#1"], "the lost answer is retried")
	assert.Empty(t, rep.Notes, "the agent retried")
}

func TestKeyedTransportAgentPassesWithURLErrors(t *testing.T) {
	passes(t, Transport, func(w *world) func(string, runtime.FaultKind) error { return w.urlErrors })
}

func TestKeyedStatusAgentPassesWithGatewayErrors(t *testing.T) {
	passes(t, Gateway, func(*world) func(string, runtime.FaultKind) error { return gatewayErrors })
}

// production runs fn once, outside any suite, against a service whose
// first POST books and then loses its answer as lose does, and returns
// how many bookings it made.
func production(t *testing.T, fn agentFunc, lose func(w http.ResponseWriter)) int {
	svc := NewService()
	first := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && first {
			first = false
			svc.ServeHTTP(httptest.NewRecorder(), r) // booked
			lose(w)
			return
		}
		svc.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c := &Client{Base: srv.URL, HTTP: &http.Client{Timeout: time.Second}}
	err := fn(context.Background(), c, customer, flight)
	t.Logf("agent returned %v", err)
	return svc.Count(customer, flight)
}

// closeConn closes the connection before the answer: the client gets a
// *url.Error.
func closeConn(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

// gatewayTimeout answers 504, as a gateway that timed out waiting.
func gatewayTimeout(w http.ResponseWriter) {
	http.Error(w, "upstream timed out", http.StatusGatewayTimeout)
}

// What the suite must tell apart, without it: against a real lost answer
// the naive agents book twice, and the keyed one once.
func TestRealLostAnswers(t *testing.T) {
	assert.Equal(t, 2, production(t, TransportRetryAgent, closeConn), "a connection closed after the booking")
	assert.Equal(t, 2, production(t, StatusRetryAgent, gatewayTimeout), "a 504 after the booking")
	assert.Equal(t, 1, production(t, KeyedAgent(Transport), closeConn))
	assert.Equal(t, 1, production(t, KeyedAgent(Gateway), gatewayTimeout))
}
