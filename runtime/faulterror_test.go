package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// statusError is the error an HTTP client of the agent's returns for an
// answer that is not a 2xx.
type statusError struct{ code int }

func (e *statusError) Error() string {
	return fmt.Sprintf("%d Gateway Timeout: upstream timed out", e.code)
}

// A FaultError's error is what the agent sees: its text, what errors.Is
// and errors.As find in it, its Timeout; the harness's own matches still
// hold. Without one the injected error is as it was.
func TestInjectedErrorWrapsFaultErrorsError(t *testing.T) {
	lost := Fault{Kind: FaultLostAck, Op: "book", Occurrence: 1}
	ue := &url.Error{Op: "Post", URL: "http://127.0.0.1:1/bookings", Err: context.DeadlineExceeded}
	var err error = &InjectedError{Fault: lost, Err: fmt.Errorf("book: %w", ue)}
	var gotURL *url.Error
	if !errors.As(err, &gotURL) || gotURL != ue {
		t.Errorf("errors.As does not find the *url.Error FaultError gave")
	}
	var inj *InjectedError
	if !errors.As(err, &inj) || !errors.Is(err, ErrInjected) {
		t.Errorf("errors.As(*InjectedError) %v, errors.Is(ErrInjected) %v: want both", errors.As(err, &inj), errors.Is(err, ErrInjected))
	}
	if want := "book: " + ue.Error(); err.Error() != want {
		t.Errorf("Error() = %q, want FaultError's text %q", err.Error(), want)
	}
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a *url.Error timeout: want context.DeadlineExceeded and a net.Error with Timeout(), through the wrapping")
	}

	gw := &InjectedError{Fault: lost, Err: &statusError{code: 504}}
	if errors.Is(gw, context.DeadlineExceeded) || errors.Is(gw, context.Canceled) || gw.Timeout() || gw.Temporary() {
		t.Errorf("a 504 FaultError gave is no timeout and no context error: Is(DeadlineExceeded) %v, Timeout %v, Temporary %v",
			errors.Is(gw, context.DeadlineExceeded), gw.Timeout(), gw.Temporary())
	}
	var se *statusError
	if !errors.As(gw, &se) || se.code != 504 || !strings.HasPrefix(gw.Error(), "504") || !errors.Is(gw, ErrInjected) {
		t.Errorf("the 504: As %v, Error %q, Is(ErrInjected) %v", errors.As(gw, &se), gw.Error(), errors.Is(gw, ErrInjected))
	}

	own := &InjectedError{Fault: lost}
	if !errors.Is(own, context.DeadlineExceeded) || !own.Timeout() || !own.Temporary() || own.Unwrap() != nil ||
		own.Error() != "book: timeout waiting for the result (injected lost acknowledgement)" {
		t.Errorf("the runtime's own error changed: %q, Timeout %v", own.Error(), own.Timeout())
	}
	if errors.As(own, &gotURL) {
		t.Errorf("the runtime's own error is no *url.Error")
	}
}

// FaultError given more than once: the first error one gives is the
// fault's; nil keeps asking, and a nil function is no option.
func TestFaultErrorFirstGivenWins(t *testing.T) {
	forPut := errors.New("put refused")
	all := errors.New("anything else")
	cfg := newConfig([]Option{
		FaultError(nil),
		FaultError(func(op string, kind FaultKind) error {
			if op == "put" {
				return forPut
			}
			return nil
		}),
		FaultError(func(op string, kind FaultKind) error {
			if kind == FaultCrash {
				return nil
			}
			return all
		}),
	})
	for _, c := range []struct {
		op   string
		kind FaultKind
		want error
	}{{"put", FaultLostAck, forPut}, {"put", FaultCrash, forPut}, {"send", FaultBefore, all}, {"send", FaultCrash, nil}} {
		if got := cfg.faultErr(c.op, c.kind); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.op, c.kind, got, c.want)
		}
	}
	if newConfig([]Option{FaultError(nil)}).faultErr != nil {
		t.Errorf("FaultError(nil) set a function")
	}
}

// putRetrying puts k unless a get finds it, and retries up to twice when
// retry(err) says so. Its deliveries take a lock around the check and the
// put, so that only a retry can put twice.
func putRetrying(s **store, retry func(error) bool) func(context.Context) error {
	var deliveries sync.Mutex
	return func(ctx context.Context) error {
		deliveries.Lock()
		defer deliveries.Unlock()
		if _, err := (*s).getTraced(ctx, "k"); err == nil {
			return nil
		}
		var err error
		for range 3 {
			if err = (*s).putTraced(ctx, "k", 1); err == nil || !retry(err) {
				return err
			}
		}
		return err
	}
}

func isURLError(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// urlFaults gives every fault a *url.Error, as net/http returns for a
// timeout.
func urlFaults(op string, kind FaultKind) error {
	return &url.Error{Op: "Post", URL: "http://store/" + op, Err: context.DeadlineExceeded}
}

// An agent that retries only on a *url.Error never retried the runtime's
// own faults, and passed: it still does, with a note that names
// FaultError. With FaultError giving a *url.Error it retries a lost
// acknowledgement and puts twice: caught, and no note.
func TestFaultErrorCatchesAnAgentThatRetriesOnlyOnURLErrors(t *testing.T) {
	var s *store
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	once := Invariant("one put", func(*Trace) error {
		if s.puts > 1 {
			return fmt.Errorf("%d puts", s.puts)
		}
		return nil
	})

	rep := mustRun(t, "url-only", putRetrying(&s, isURLError), setup, once)
	if !rep.Safe {
		t.Fatalf("without FaultError the agent never retries, and is safe: %v", rep.Findings)
	}
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "no injected fault was retried") || !strings.Contains(rep.Notes[0], "give those with testkit.FaultError") {
		t.Fatalf("notes %q: want the one that names FaultError", rep.Notes)
	}

	rep = mustRun(t, "url-only", putRetrying(&s, isURLError), setup, once, FaultError(urlFaults))
	if rep.Safe || !hasFinding(rep, "lost_acknowledgement/put#1", CodeDuplicateWrite) || !hasFinding(rep, "lost_acknowledgement/put#1", CodeInvariantFailed) {
		t.Fatalf("with FaultError the lost acknowledgement is retried and puts twice: want duplicate_write and invariant_failed there, got %v", rep.Findings)
	}
	if len(rep.Notes) != 0 {
		t.Errorf("the agent retried, yet notes %q", rep.Notes)
	}
	// The trace of a failure before the operation records FaultError's
	// text, and that it was injected.
	for _, res := range rep.Results {
		if res.Scenario != "before_operation_failure/put#1" {
			continue
		}
		op := res.Trace.Ops[1] // after the get
		if op.Name != "put" || op.Fault != FaultBefore || op.Error != urlFaults("put", FaultBefore).Error() {
			t.Errorf("the faulted call: fault %q, error %q", op.Fault, op.Error)
		}
	}

	// The same agent, made idempotent: it retries, nothing doubles.
	rep = mustRun(t, "url-only keyed", func(ctx context.Context) error {
		return putRetrying(&s, isURLError)(ctx)
	}, setup, FaultError(urlFaults), State(func() any { return map[string]int{"k": s.rows["k"]} }))
	if !rep.Safe || len(rep.Notes) != 0 {
		t.Errorf("a put that sets a value is absorbed when retried: safe %v, findings %v, notes %q", rep.Safe, rep.Findings, rep.Notes)
	}
}

func hasFinding(rep *Report, scenario, code string) bool {
	for _, f := range rep.Findings {
		if f.Scenario == scenario && f.Code == code {
			return true
		}
	}
	return false
}

// The note is given when no fault the agent saw as an error was retried
// anywhere, and only then: not for an agent that retries in one scenario,
// nor for one with nothing to retry.
func TestNotRetriedNote(t *testing.T) {
	var s *store
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	never := func(error) bool { return false }
	always := func(error) bool { return true }
	// onlyBefore retries the runtime's failure before the operation, not
	// its timeouts.
	onlyBefore := func(err error) bool {
		var ie *InjectedError
		return errors.As(err, &ie) && ie.Fault.Kind == FaultBefore
	}
	for _, c := range []struct {
		name  string
		agent func(context.Context) error
		opts  []Option
		want  string // "" for no note
	}{
		{"gives up", putRetrying(&s, never), nil,
			"no injected fault was retried: after the injected error of each of its 3 fault scenarios (lost_acknowledgement, lost_request, before_operation_failure), no traced call of the failed op followed. Not tested, since no fault meets them: a retry inside a tool call (a retrying HTTP client or SDK, a helper that sends a request again: wrap an HTTP client with runtime.Transport, whose lost_response meets it; a gRPC client's retries need a fake server that applies a write, then answers UNAVAILABLE once); a retry through the raw tool (go tool agentidem-vet reports it); a retry only on particular errors, such as a *url.Error or a 503 (give those with testkit.FaultError). See docs/guide.md, section 5."},
		{"goes on to other work", func(ctx context.Context) error {
			if err := s.putTraced(ctx, "k", 1); err != nil {
				_, err = s.getTraced(ctx, "k")
				return err
			}
			return nil
		}, nil, "no injected fault was retried"},
		{"gives up on FaultError's errors", putRetrying(&s, never), []Option{FaultError(urlFaults)},
			"no injected fault was retried: after the injected error of each of its 3 fault scenarios (lost_acknowledgement, lost_request, before_operation_failure), the error FaultError gave where it gave one, no traced call of the failed op followed. Not tested, since no fault meets them: a retry inside a tool call (a retrying HTTP client or SDK, a helper that sends a request again: wrap an HTTP client with runtime.Transport, whose lost_response meets it; a gRPC client's retries need a fake server that applies a write, then answers UNAVAILABLE once); a retry through the raw tool (go tool agentidem-vet reports it); a retry on other errors than FaultError's (make FaultError return them). See docs/guide.md, section 5."},
		{"retries every error", putRetrying(&s, always), nil, ""},
		{"retries a failure before the operation only", putRetrying(&s, onlyBefore), nil, ""},
		{"reads only", func(ctx context.Context) error { _, err := s.getTraced(ctx, "k"); return err }, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := mustRun(t, c.name, c.agent, append([]Option{setup}, c.opts...)...)
			if !rep.BaselineSucceeded && c.name != "reads only" {
				t.Fatalf("baseline: %s", rep.BaselineFailure)
			}
			switch {
			case c.want == "" && len(rep.Notes) != 0:
				t.Errorf("notes %q, want none", rep.Notes)
			case c.want != "" && (len(rep.Notes) != 1 || !strings.HasPrefix(rep.Notes[0], c.want)):
				t.Errorf("notes %q, want one that starts %q", rep.Notes, c.want)
			}
		})
	}
}

// The notes are written as the report's other []string fields are, read
// back, and in the schema; a report without them has no "notes" key.
func TestReportNotesEncoded(t *testing.T) {
	var s *store
	rep := mustRun(t, "gives up", putRetrying(&s, func(error) bool { return false }),
		Setup(func(context.Context) error { s = newStore(); return nil }))
	if len(rep.Notes) != 1 {
		t.Fatalf("notes %q", rep.Notes)
	}
	checkEncoding(t, "notes", rep)
	b, err := rep.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	var notes []string
	if err := json.Unmarshal(top["notes"], &notes); err != nil || len(notes) != 1 || notes[0] != rep.Notes[0] {
		t.Errorf("notes in JSON: %s (%v)", top["notes"], err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	back, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Notes) != 1 || back.Notes[0] != rep.Notes[0] {
		t.Errorf("read back: %q", back.Notes)
	}
	if !strings.Contains(string(ReportSchema), `"notes"`) {
		t.Errorf("the schema has no notes")
	}

	rep.Notes = nil
	b, err = rep.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	clear(top)
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	if _, ok := top["notes"]; ok {
		t.Errorf("a report without notes writes the key")
	}
	checkEncoding(t, "no notes", rep)
}

// A fault scenario cut off by the stall bound while the agent waited in
// its back-off before the retry showed no retry because the retry had no
// time to come: it is no evidence that the agent does not retry, and the
// note said "no injected fault was retried" of an agent whose retry the
// bound cut off (red team rtW #10: a backoff.Retry of 12 s against the
// 10 s bound). The agent that gives up still gets the note.
func TestStalledBackOffIsNoEvidenceOfNoRetry(t *testing.T) {
	var s *store
	setup := Setup(func(context.Context) error { s = newStore(); return nil })
	backsOff := func(ctx context.Context) error {
		if _, err := s.getTraced(ctx, "k"); err == nil {
			return nil
		}
		err := s.putTraced(ctx, "k", 1)
		if err == nil {
			return nil
		}
		select { // the back-off before the retry, longer than the bound
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Minute):
		}
		return s.putTraced(ctx, "k", 1)
	}
	rep := mustRun(t, "stalled-backoff", backsOff, setup, StallTimeout(300*time.Millisecond))
	stalled := 0
	for _, res := range rep.Results {
		if res.Fault != nil && resultHas(res, CodeStalled) {
			stalled++
		}
	}
	if stalled == 0 {
		t.Fatalf("no fault scenario stalled in the back-off: %v", rep.Findings)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "no injected fault was retried") {
			t.Errorf("a note says no fault was retried, though %d fault scenarios were cut off in the back-off before the retry: %s", stalled, n)
		}
	}
	rep = mustRun(t, "gives-up", putRetrying(&s, func(error) bool { return false }), setup, StallTimeout(300*time.Millisecond))
	if len(rep.Notes) == 0 || !strings.Contains(strings.Join(rep.Notes, "\n"), "no injected fault was retried") {
		t.Errorf("the agent that gives up lost its note: %q", rep.Notes)
	}
}
