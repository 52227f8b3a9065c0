package grpctest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// suite runs the red team's refund agent (rtN F1) against a fresh gRPC
// server per scenario: over bufconn, or over localhost TCP when tcp is set.
// An invariant counts the refunds the ledger really booked: the truth the
// verdict is checked against.
func suite(t *testing.T, keyed, state, tcp bool, opts ...runtime.Option) *runtime.Report {
	t.Helper()
	var srv *Server
	var c *Client
	all := []runtime.Option{
		runtime.Setup(func(context.Context) error {
			if srv != nil {
				c.Conn.Close()
				srv.Stop()
			}
			var err error
			if tcp {
				if srv, err = StartTCP(); err != nil {
					return err
				}
			} else {
				srv = Start(false)
			}
			conn, err := srv.Dial()
			c = &Client{Conn: conn}
			return err
		}),
		runtime.Invariant("at most one refund of p1", func(*runtime.Trace) error {
			if n := srv.L.Snapshot().(map[string]int)["p1"]; n > 1 {
				return fmt.Errorf("p1 refunded %d times", n)
			}
			return nil
		}),
	}
	if state {
		all = append(all, runtime.State(func() any { return srv.L.Snapshot() }))
	}
	rep, err := runtime.Run(context.Background(), t.Name(), func(ctx context.Context) error { return Agent(ctx, c, keyed) }, append(all, opts...)...)
	t.Cleanup(func() {
		if srv != nil {
			c.Conn.Close()
			srv.Stop()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func dump(t *testing.T, rep *runtime.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		t.Logf("%s %s: %s", f.Severity, f.Code, f.Message)
	}
	for _, r := range rep.Results {
		t.Logf("%s safe=%v inconclusive=%v", r.Scenario, r.Safe, r.Inconclusive)
	}
}

// concurrent returns the report's duplicate_delivery/concurrent scenario.
func concurrent(t *testing.T, rep *runtime.Report) *runtime.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Scenario == runtime.ScenarioDuplicateConcurrent {
			return r
		}
	}
	t.Fatalf("no %s scenario", runtime.ScenarioDuplicateConcurrent)
	return nil
}

// The red team's correct agent (rtN F1): the tool sends an idempotency key
// in the call's metadata, the service's handler books once per key, its
// ledger write traced. google.golang.org/grpc runs the handler on a
// goroutine of its own, over its own HTTP/2, and only net/http's handlers
// were told: the handler's write was a sibling of the tool's call, not
// made inside it, and with State the agent was UNSAFE (duplicate_write of
// refund_rpc and ledger_book_keyed, and the handler's call refused in the
// concurrent delivery), ten runs in ten, though the ledger never booked
// twice. As over net/http, the handler's call is now the tool's call's,
// judged by State: no error; the concurrent delivery, where the call
// cannot be told to be either delivery's, is inconclusive with a warning
// that says so (F2).
func TestKeyedAgentWithStateIsSafe(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		t.Run(map[bool]string{false: "bufconn", true: "tcp"}[tcp], func(t *testing.T) {
			rep := suite(t, true, true, tcp)
			if errs := rep.Errors(); len(errs) > 0 || rep.UnsafeCount > 0 {
				dump(t, rep)
				t.Fatalf("the correct agent is unsafe: %d unsafe scenarios, errors %v", rep.UnsafeCount, errs)
			}
			cc := concurrent(t, rep)
			if !cc.Inconclusive {
				t.Errorf("%s is not inconclusive, though the handler's call went unjudged", cc.Scenario)
			}
			warned := false
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeContextDetached && f.Severity == runtime.SeverityWarning && strings.Contains(f.Message, "made by an HTTP or gRPC handler of this process while 2 deliveries") {
					warned = true
				}
				if strings.Contains(f.Message, "pass the agent's ctx") {
					t.Errorf("advice no agent can follow across gRPC: %s", f.Message)
				}
			}
			if !warned {
				dump(t, rep)
				t.Error("no warning that the handler's call in the concurrent delivery went unjudged")
			}
		})
	}
}

// TestNaiveAgentIsUnsafe: the twin that sends no key; the handler books
// each call. Caught where the handler's write is done twice (ledger_book,
// the handler-side duplicate) and through the tool's, with State and
// without; the invariant that counts the ledger's refunds fails too.
func TestNaiveAgentIsUnsafe(t *testing.T) {
	for _, state := range []bool{true, false} {
		t.Run(map[bool]string{true: "state", false: "count"}[state], func(t *testing.T) {
			rep := suite(t, false, state, false)
			if rep.Safe || rep.UnsafeCount == 0 {
				dump(t, rep)
				t.Fatal("the naive agent passed")
			}
			dups := map[string]bool{}
			for _, f := range rep.Findings {
				if f.Code == runtime.CodeDuplicateWrite {
					for _, op := range f.Ops {
						dups[op] = true
					}
				}
			}
			if !dups["ledger_book"] || !dups["refund_rpc"] {
				dump(t, rep)
				t.Errorf("duplicate_write of %v, want ledger_book (the handler's) and refund_rpc", dups)
			}
			if !rep.Has(runtime.CodeInvariantFailed) {
				t.Error("the invariant (at most one refund) did not fail")
			}
		})
	}
}

// TestKeyedAgentWithoutStateTellsTheHandler: without State, the handler's
// call in the concurrent delivery is refused (an error: nothing judges the
// world there), saying that it serves a gRPC call to this process, not
// asking for the agent's ctx, which cannot cross the network (rtN F2);
// the baseline's warning on the handler's context says that a handler of
// this process made the call (F8).
func TestKeyedAgentWithoutStateTellsTheHandler(t *testing.T) {
	rep := suite(t, true, false, false)
	refused, handler := false, false
	for _, f := range rep.Findings {
		if f.Code != runtime.CodeContextDetached {
			continue
		}
		if strings.Contains(f.Message, "pass the agent's ctx") {
			t.Errorf("advice no agent can follow across gRPC: %s", f.Message)
		}
		if f.Severity == runtime.SeverityError && strings.Contains(f.Message, "call of ledger_book_keyed refused") && strings.Contains(f.Message, "or a gRPC call: the agent's ctx cannot cross the network") {
			refused = true
		}
		if f.Severity == runtime.SeverityWarning && strings.Contains(f.Message, "by a handler of this process (an HTTP or gRPC server) serving the agent's request") {
			handler = true
		}
	}
	if !refused || !handler {
		dump(t, rep)
		t.Errorf("refusal told as a gRPC call's: %v; baseline's warning told as a handler's: %v", refused, handler)
	}
}
