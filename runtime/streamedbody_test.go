package runtime_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// These tests live in package runtime_test, not runtime: the scheduler
// tells the user's code from libraries and from this package by the frames
// of a goroutine's stack, and a function of package runtime's own tests
// is named as this package's (agentidem-go/runtime.TestX), which is no
// user's code. An agent here is the user's, as in a project that imports
// the runtime.

// orders is the sink of two writes of one order: capture and cancelOrder,
// each of which keeps one record per order, so that a repeat of either is
// replayed (the sink deduplicates) and nothing but the two writes in flight
// together can be a finding.
type orders struct {
	mu   sync.Mutex
	done map[string]bool
}

var (
	captureOp = &runtime.Op{Name: "capture", Kind: runtime.KindWrite, Params: []string{"order"}}
	cancelOp  = &runtime.Op{Name: "cancelOrder", Kind: runtime.KindWrite, Params: []string{"order", "reason"}}
)

// write runs one traced write of op on order, as generated code does.
func (s *orders) write(ctx context.Context, op *runtime.Op, args ...any) (err error) {
	c, cctx := runtime.Begin(ctx, op, args, args[:1], nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	s.mu.Lock()
	key := op.Name + "/" + args[0].(string)
	if s.done[key] {
		runtime.MarkReplayed(cctx)
	}
	s.done[key] = true
	s.mu.Unlock()
	if lost := c.Finish(nil); lost != nil {
		return lost
	}
	return nil
}

// captureAndCancel is one turn of an agent that runs two sub-tasks in
// parallel: capture order o1, and ask a model why to cancel it, then
// cancel it. The two writes of one order can be in flight together: a
// concurrent_writes_same_entity, however long the model's answer takes. With
// ordered set, the fixed agent: the cancellation waits for the capture to
// end, and nothing of one order is ever in flight twice.
func captureAndCancel(s func() *orders, ask func() (string, error), ordered bool) func(context.Context) error {
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		var capErr, cancelErr error
		captured := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			defer close(captured)
			capErr = s().write(ctx, captureOp, "o1")
		}()
		go func() {
			defer wg.Done()
			reason, err := ask()
			if err != nil {
				cancelErr = err
				return
			}
			if ordered {
				<-captured
			}
			cancelErr = s().write(ctx, cancelOp, "o1", reason)
		}()
		wg.Wait()
		return errors.Join(capErr, cancelErr)
	}
}

// modelDelay is how long the fake model takes to answer: the tens of
// milliseconds of a short completion.
const modelDelay = 30 * time.Millisecond

// remoteModel stands for a model that runs in another process: it thinks
// on a goroutine the test starts before the suite, which is none of the
// scenarios' goroutines, so its sleep keeps no scenario busy (a handler
// asleep on a goroutine of the scenario's did, and hid what these tests
// show whenever its server started a goroutine for the request: an HTTP/2
// stream's handler, a new HTTP/1.1 connection's).
type remoteModel struct {
	ask  chan *sync.Mutex
	done chan struct{}
}

func newRemoteModel(t *testing.T) *remoteModel {
	m := &remoteModel{ask: make(chan *sync.Mutex, 64), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for mu := range m.ask {
			time.Sleep(modelDelay)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { close(m.ask); <-m.done })
	return m
}

// think returns once the model has thought for modelDelay. The caller
// waits on a lock, which the scheduler reads as waiting for another
// goroutine (quiet), as a handler relaying a remote model's answer is.
func (m *remoteModel) think() {
	var mu sync.Mutex
	mu.Lock()
	m.ask <- &mu
	mu.Lock()
}

// handler answers as a streaming model API does: the headers at once, the
// body once the model has thought. With inOnePiece, it answers once the
// model has thought, with headers and body together.
func (m *remoteModel) handler(inOnePiece bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if !inOnePiece {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		m.think()
		_, _ = io.WriteString(w, "fraud")
	}
}

// askOverHTTP asks the model at url, as an agent does, and reads its whole
// answer.
func askOverHTTP(client *http.Client, url string) func() (string, error) {
	return func() (string, error) {
		resp, err := client.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
}

// runOrders runs agent with fresh orders per scenario.
func runOrders(t *testing.T, agent func(s func() *orders) func(context.Context) error, opts ...runtime.Option) *runtime.Report {
	t.Helper()
	var mu sync.Mutex
	var cur *orders
	get := func() *orders { mu.Lock(); defer mu.Unlock(); return cur }
	opts = append([]runtime.Option{runtime.Setup(func(context.Context) error {
		mu.Lock()
		cur = &orders{done: map[string]bool{}}
		mu.Unlock()
		return nil
	})}, opts...)
	rep, err := runtime.Run(context.Background(), t.Name(), agent(get), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.BaselineSucceeded {
		t.Fatalf("baseline failed: %s", rep.BaselineFailure)
	}
	return rep
}

// findings lists the codes of a report's findings, for messages.
func findings(rep *runtime.Report) string {
	var codes []string
	for _, f := range rep.Findings {
		codes = append(codes, f.Code+" ("+f.Scenario+")")
	}
	return strings.Join(codes, ", ")
}

// stalls returns the stalled findings of a report.
func stalls(rep *runtime.Report) []string {
	var out []string
	for _, res := range rep.Results {
		for _, f := range res.Findings {
			if f.Code == runtime.CodeStalled {
				out = append(out, res.Scenario+": "+f.Message)
			}
		}
	}
	return out
}

// A goroutine of the agent that reads a model's answer streamed after its
// headers (io.ReadAll of the response body, in IO wait, or waiting on the
// HTTP/2 stream's pipe) is not quiet: the answer is coming, and a call
// follows it. Taken for quiet, it let the scheduler run the capture alone
// and the cancellation after it: one schedule ran, and the two writes of
// one order, in flight together in production, passed as SAFE. Answered
// in one piece (the client waits in the round trip, which always counted
// as busy), the same agent was UNSAFE; now both are.
func TestAnAnswerStreamedAfterItsHeadersIsWaitedFor(t *testing.T) {
	for _, c := range []struct {
		name       string
		http2      bool
		inOnePiece bool
	}{
		{"HTTP/1.1, in one piece", false, true},
		{"HTTP/1.1, streamed", false, false},
		{"HTTP/2, streamed", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(newRemoteModel(t).handler(c.inOnePiece))
			if c.http2 {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			client := srv.Client()
			rep := runOrders(t, func(s func() *orders) func(context.Context) error {
				return captureAndCancel(s, askOverHTTP(client, srv.URL), false)
			})
			expectInFlightTogether(t, rep, "answer")
		})
	}
}

// tcpReplier serves a line protocol on a listener from one goroutine that
// the test starts before the suite (as another process would be): for
// each connection, it reads a request line and answers it after delay.
// Being older than the scenarios, its goroutine is none of theirs, and its
// sleep does not keep them busy.
func tcpReplier(t *testing.T, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
				time.Sleep(delay)
				_, _ = io.WriteString(conn, "fraud\n")
			}
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// askOverTCP sends a request line to addr and reads the reply line, as a
// client of a cache or a queue does over a raw connection.
func askOverTCP(addr string) func() (string, error) {
	return func() (string, error) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "why o1\n"); err != nil {
			return "", err
		}
		line, err := bufio.NewReader(conn).ReadString('\n')
		return strings.TrimSpace(line), err
	}
}

// The same holds for a reply read off a raw TCP connection
// (net.(*conn).Read in IO wait, in the agent's code): the reply is
// coming, and the cancellation after it was in flight with the capture.
func TestAReplyReadOffARawConnectionIsWaitedFor(t *testing.T) {
	addr := tcpReplier(t, modelDelay)
	rep := runOrders(t, func(s func() *orders) func(context.Context) error {
		return captureAndCancel(s, askOverTCP(addr), false)
	})
	expectInFlightTogether(t, rep, "reply")
}

// The agent fixed (the cancellation waits for the capture) is SAFE, with
// the model's answer streamed as before: waiting for the answer finds
// nothing that is not there.
func TestAnAgentThatOrdersItsWritesIsSafeWhileItReadsAStreamedAnswer(t *testing.T) {
	srv := httptest.NewServer(newRemoteModel(t).handler(false))
	defer srv.Close()
	client := srv.Client()
	addr := tcpReplier(t, modelDelay)
	for _, c := range []struct {
		name string
		ask  func() (string, error)
	}{
		{"HTTP body", askOverHTTP(client, srv.URL)},
		{"TCP reply", askOverTCP(addr)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := runOrders(t, func(s func() *orders) func(context.Context) error {
				return captureAndCancel(s, c.ask, true)
			})
			if !rep.Safe || rep.InconclusiveCount > 0 {
				t.Errorf("safe %v, %d inconclusive, findings %s", rep.Safe, rep.InconclusiveCount, findings(rep))
			}
		})
	}
}

// A goroutine of the agent's own that reads a connection for as long as
// the agent runs (a websocket's loop, a subscription) is busy for a grace
// only: past it the scenario is quiet without it, goes on, and ends with
// no stall, the two writes of one order in flight together found as
// before. The grace is waited out once in the suite, not once for each
// delivery (each starts its loop afresh): the trace of the first scenario
// says the read was taken for a loop's, and the later ones take a read at
// that place for one at once. With a stall bound shorter than two graces,
// the grace is cut to half the bound.
func TestAGoroutineReadingForeverCostsAGraceNotAStall(t *testing.T) {
	for _, c := range []struct {
		name  string
		loops int
		stall time.Duration
	}{
		{"one loop, stall bound 3s", 1, 3 * time.Second},
		{"one loop, stall bound 300ms", 1, 300 * time.Millisecond},
		// Three loops started at three places, seen in one snapshot:
		// each one's grace runs from then, not from the end of the one
		// before it (three graces back to back outlast the bound).
		{"three loops, stall bound 2s", 3, 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := heldConns(t)
			rep := runOrders(t, func(s func() *orders) func(context.Context) error {
				turn := captureAndCancel(s, func() (string, error) { return "fraud", nil }, false)
				return func(ctx context.Context) error {
					var readers sync.WaitGroup
					var conns []net.Conn
					defer func() {
						for _, conn := range conns {
							conn.Close()
						}
						readers.Wait()
					}()
					for i := range c.loops {
						conn, err := net.Dial("tcp", addr)
						if err != nil {
							return err
						}
						conns = append(conns, conn)
						// Until the connection closes; each loop is
						// started at a place of its own.
						switch i {
						case 0:
							readers.Go(func() { _, _ = io.Copy(io.Discard, conn) })
						case 1:
							readers.Go(func() { _, _ = io.Copy(io.Discard, conn) })
						default:
							readers.Go(func() { _, _ = io.Copy(io.Discard, conn) })
						}
					}
					return turn(ctx)
				}
			}, runtime.StallTimeout(c.stall))
			if s := stalls(rep); len(s) > 0 {
				t.Errorf("a goroutine reading forever stalled the scenario: %s", strings.Join(s, "\n"))
			}
			if !rep.Has(runtime.CodeConcurrentWritesEntity) {
				t.Errorf("capture and cancelOrder of one order, in flight together, were not found: findings %s", findings(rep))
			}
			// The first scenario to wait out the grace says so, once for
			// each loop; the others do not wait for a read at those
			// places again.
			if n := loopNotes(rep); len(n) != c.loops {
				t.Errorf("%d reads were taken for loops, want %d: %s", len(n), c.loops, strings.Join(n, "\n"))
			}
		})
	}
}

// loopNotes returns the notes of the scenarios (the baseline's first)
// that took a read for a loop's.
func loopNotes(rep *runtime.Report) []string {
	var out []string
	for _, res := range append([]*runtime.Result{rep.Baseline}, rep.Results...) {
		if res == nil || res.Trace == nil {
			continue
		}
		for _, n := range res.Trace.Notes {
			if strings.Contains(n, "taken for a loop that reads") {
				out = append(out, res.Scenario+": "+n)
			}
		}
	}
	return out
}

// heldConns accepts connections on a listener the test starts before the
// suite and never writes to them, until the test ends: a reader of one
// waits for as long as its connection lives.
func heldConns(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// A library's loop that reads its connection for as long as it lives, as
// a gRPC transport's reader or an MCP SDK's event stream reader does, runs
// none of the user's code: here net/rpc's client reader, started by
// rpc.NewClient, whose stack holds the standard library's frames only
// (the agent's call that started it is its creator, no frame of its own).
// Nobody waits for what it reads, and it is quiet from the start: no
// scenario waits out a grace for it (none says it took a read for a
// loop's), none stalls, and the two writes of one order in flight together
// are found. (A loop of a module in the module cache is told the same way,
// by its files; no dependency of this module starts one that
// idleConnection does not already know.)
func TestALibrarysReaderLoopIsNotWaitedFor(t *testing.T) {
	addr := heldConns(t)
	rep := runOrders(t, func(s func() *orders) func(context.Context) error {
		turn := captureAndCancel(s, func() (string, error) { return "fraud", nil }, false)
		return func(ctx context.Context) error {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				return err
			}
			client := rpc.NewClient(conn) // its reader waits on conn until Close
			defer client.Close()
			return turn(ctx)
		}
	}, runtime.StallTimeout(3*time.Second))
	if s := stalls(rep); len(s) > 0 {
		t.Errorf("a library's reader stalled the scenario: %s", strings.Join(s, "\n"))
	}
	if n := loopNotes(rep); len(n) > 0 {
		t.Errorf("a library's reader was waited for: %s", strings.Join(n, "\n"))
	}
	if !rep.Has(runtime.CodeConcurrentWritesEntity) {
		t.Errorf("capture and cancelOrder of one order, in flight together, were not found: findings %s", findings(rep))
	}
}

// expectInFlightTogether checks that rep found the capture and the
// cancellation of one order in flight together, with no stall, and without
// taking the awaited read (what: the answer, the reply) for a loop's.
func expectInFlightTogether(t *testing.T, rep *runtime.Report, what string) {
	t.Helper()
	if !rep.Has(runtime.CodeConcurrentWritesEntity) {
		t.Errorf("capture and cancelOrder of one order, in flight together, were not found: findings %s", findings(rep))
	}
	if s := stalls(rep); len(s) > 0 {
		t.Errorf("stalled: %s", strings.Join(s, "\n"))
	}
	if n := loopNotes(rep); len(n) > 0 {
		t.Errorf("the %s, %s in coming, was taken for a loop's read: %s", what, modelDelay, strings.Join(n, "\n"))
	}
}
