package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// billingSvc is a billing service behind an httptest server: PUT
// /invoices/{n} opens an invoice (a replay of an open one changes nothing),
// POST /invoices/{n}/lines?order= attaches an order to it, and answers 404
// where the invoice does not exist. How it treats an attach is its mode:
//
//   - "": replay-safe: an order attached already is not attached again;
//   - "unkeyed": every attach adds a line, a replay too;
//   - "drafts": an attach to a missing invoice keeps the line in a draft
//     invoice and still answers 404: the order is billed there and again
//     once attached to the real invoice (the first call changed the world
//     and answered an error);
//   - "late": the first attach to a missing invoice answers 503 and books
//     the line when the test lets it land (land), into the invoice once it
//     is open: a service that answered an error yet did the work later.
type billingSvc struct {
	mode string
	// meet, when set, holds an attach to a missing invoice until another
	// is in flight too (or a while passed), so that two deliveries at
	// once are both told 404 together.
	meet     *rendezvous
	mu       sync.Mutex
	invoices map[string]bool
	lines    []string // "invoice:order", in the order attached
	drafts   []string
	held     string // the order of the held attach ("late")
	srv      *httptest.Server
}

func newBillingSvc(mode string) *billingSvc {
	b := &billingSvc{mode: mode, invoices: map[string]bool{}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	return b
}

func (b *billingSvc) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if b.meet != nil && r.Method == http.MethodPost {
		b.mu.Lock()
		missing := !b.invoices[parts[1]]
		b.mu.Unlock()
		if missing {
			b.meet.wait()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case r.Method == http.MethodPut && len(parts) == 2:
		b.invoices[parts[1]] = true
		fmt.Fprintf(w, `{"number":%q,"status":"open"}`, parts[1])
	case r.Method == http.MethodPost && len(parts) == 3:
		inv, order := parts[1], r.URL.Query().Get("order")
		line := inv + ":" + order
		if !b.invoices[inv] {
			switch b.mode {
			case "drafts":
				b.drafts = append(b.drafts, line)
			case "late":
				if b.held == "" {
					b.held = line
					http.Error(w, "billing busy", http.StatusServiceUnavailable)
					return
				}
			}
			http.Error(w, "no such invoice "+inv, http.StatusNotFound)
			return
		}
		if b.mode == "" && slices.Contains(b.lines, line) {
			io.WriteString(w, `{"attached":true}`)
			return
		}
		b.lines = append(b.lines, line)
		io.WriteString(w, `{"attached":true}`)
	default:
		http.NotFound(w, r)
	}
}

// land books the held attach ("late").
func (b *billingSvc) land() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != "" {
		b.lines = append(b.lines, b.held)
		b.held = "-"
	}
}

func (b *billingSvc) snapshot() any {
	b.mu.Lock()
	defer b.mu.Unlock()
	inv := make([]string, 0, len(b.invoices))
	for n := range b.invoices {
		inv = append(inv, n)
	}
	slices.Sort(inv)
	return map[string]any{"invoices": inv, "lines": slices.Clone(b.lines), "drafts": slices.Clone(b.drafts)}
}

// selfCorrecting is an agent whose tools answer a service's failure as
// data ({"error": "..."}, no Go error), as LLM tools do so that the model
// reads it, and whose scripted model does what a model does with it: an
// attach to a missing invoice answered 404, so it opens the invoice and
// attaches again; a 503, so it waits and tries again; another error, so
// it tries again. It returns the
// model's loop and the service of the current world.
//
// With goErrors the tools return the service's failure as a Go error
// instead, which the loop hands the model as its text, as a framework's
// errors-as-results middleware outside the harness's does.
func selfCorrecting(mode string, goErrors bool, meet *rendezvous) (agent func(context.Context) error, setup func(context.Context) error, state func() any, svc func() *billingSvc) {
	var b *billingSvc
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"number"}}
	attach := &Op{Name: "attach_order", Kind: KindWrite, Params: []string{"number", "order_id"}}
	// call runs one tool: its answer is the service's body, or the error
	// as data.
	call := func(ctx context.Context, op *Op, method, path string, args ...any) (string, error) {
		var answer string
		err := traced(ctx, op, args, args, func(ctx context.Context) error {
			req, err := http.NewRequestWithContext(ctx, method, b.srv.URL+path, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			if resp.StatusCode >= 300 && goErrors {
				return fmt.Errorf("billing: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))
			}
			if resp.StatusCode >= 300 {
				e, _ := json.Marshal(map[string]string{"error": fmt.Sprintf("billing: %d %s", resp.StatusCode, strings.TrimSpace(string(body)))})
				answer = string(e)
				return nil
			}
			answer = string(body)
			return nil
		})
		return answer, err
	}
	agent = func(ctx context.Context) error {
		attachIt := func() (string, error) {
			return call(ctx, attach, http.MethodPost, "/invoices/INV-9/lines?order=ORD-9", "INV-9", "ORD-9")
		}
		read := func(answer string, err error) (string, error) {
			if err != nil && ctx.Err() == nil && goErrors {
				return err.Error(), nil // the error, as the model reads it
			}
			return answer, err
		}
		answer, err := read(attachIt())
		for range 3 {
			switch {
			case err != nil && ctx.Err() != nil:
				return err
			case err != nil:
				// The tool's error, read by the model: it tries again.
			case strings.Contains(answer, "no such invoice"):
				if _, err := call(ctx, create, http.MethodPut, "/invoices/INV-9", "INV-9"); err != nil {
					return err
				}
			case strings.Contains(answer, "busy"):
				b.land() // time passes: what the service held lands
			case strings.Contains(answer, `"attached":true`):
				return nil
			default:
				// Another error, read by the model: it tries again.
			}
			answer, err = read(attachIt())
		}
		return errors.New("attach_order: gave up")
	}
	setup = func(context.Context) error {
		if b != nil {
			b.srv.Close()
		}
		b = newBillingSvc(mode)
		b.meet = meet
		return nil
	}
	return agent, setup, func() any { return b.snapshot() }, func() *billingSvc { return b }
}

func runSelfCorrecting(t *testing.T, mode string, goErrors bool, opts ...Option) *Report {
	t.Helper()
	return runSelfCorrectingMeeting(t, mode, goErrors, nil, opts...)
}

func runSelfCorrectingMeeting(t *testing.T, mode string, goErrors bool, meet *rendezvous, opts ...Option) *Report {
	t.Helper()
	agent, setup, state, svc := selfCorrecting(mode, goErrors, meet)
	rep, err := Run(context.Background(), t.Name(), agent, append([]Option{Setup(setup), State(state)}, opts...)...)
	if b := svc(); b != nil {
		b.srv.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// An attach to a missing invoice answered 404 as data and changed nothing
// (State shows it); the model opened the invoice and attached again, which
// made the one line. One effect, not a duplicate (red team rtS #7: the
// correct agent's baseline read "duplicate_write attach_order ... one
// effect done 2 times; the repeat changed the state", 3 runs of 3).
func TestErrorAnsweredAsDataThatChangedNothingIsNoExecution(t *testing.T) {
	rep := runSelfCorrecting(t, "", false)
	for _, f := range rep.Findings {
		if f.Severity == SeverityError {
			t.Errorf("%s: %s %s", f.Scenario, f.Code, f.Message)
		}
	}
	if !rep.Safe || rep.InconclusiveCount != 0 {
		t.Errorf("safe %v, %d inconclusive: want safe", rep.Safe, rep.InconclusiveCount)
	}
}

// The same agent on a service that adds a line for every attach: the
// first, failed, attach changed nothing, but a retry of the attach that
// made the line (after its answer was lost, after a crash, a second
// delivery) adds a second: still caught.
func TestErrorAsDataFirstLeavesLaterDuplicatesCaught(t *testing.T) {
	rep := runSelfCorrecting(t, "unkeyed", false)
	if got := findings(rep, ScenarioBaseline); len(got) != 0 {
		t.Errorf("baseline findings %v", got)
	}
	caught := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite && f.Ops[0] == "attach_order" {
			caught[strings.SplitN(f.Scenario, "/", 2)[0]] = true
		}
	}
	for _, kind := range []string{"lost_acknowledgement", "crash_restart", "duplicate_delivery"} {
		if !caught[kind] {
			t.Errorf("no duplicate_write of attach_order in %s (caught in %v)", kind, caught)
		}
	}
}

// Two deliveries at once of the correct agent, whose first attaches were
// told 404 together: they overlapped, and their cluster changed nothing.
// One delivery's corrected attach then ran alone and made the line, the
// other's found it (replay-safe): one effect. Before, the calls of the
// unchanged cluster stayed executions, and the concurrent delivery was a
// duplicate_write now and then, where the lockstep let one delivery's
// attach run alone (red team rtS #7,
// TestEinoSelfCorrectingFixedAgentidemOutside, 1 run of 6). The trace is
// made by hand: which delivery runs alone is the lockstep's choice.
func TestErrorAsDataTogetherThatChangedNothingIsNoExecution(t *testing.T) {
	s0 := `{"invoices":[],"lines":[]}`
	s1 := `{"invoices":["INV-9"],"lines":[]}`
	s2 := `{"invoices":["INV-9"],"lines":["INV-9:ORD-9"]}`
	s3 := `{"invoices":["INV-9"],"lines":["INV-9:ORD-9","INV-9:ORD-9"]}`
	op := func(id, name string, inv, order int, ev effectView) Operation {
		ev.order = order
		o := Operation{ID: id, Name: name, Kind: KindWrite, Status: StatusSuccess, Invocation: inv, Identity: `["INV-9","ORD-9"]`,
			Overlapped: ev.inCluster && !ev.seen, more: judgedMore(&ev), Args: Args{Names: []string{"number", "order_id"}, Values: []any{"INV-9", "ORD-9"}}}
		if name == "create_invoice" {
			o.Identity, o.Args = `"INV-9"`, Args{Names: []string{"number"}, Values: []any{"INV-9"}}
		}
		if ev.seen && ev.before != ev.after {
			o.StateChange = DescribeChange(ev.before, ev.after)
		}
		return o
	}
	told404 := effectView{inCluster: true, clusterKeys: 1, before: s0, after: s0}
	alone := func(b, a string) effectView {
		return effectView{seen: true, inCluster: true, clusterKeys: 1, before: b, after: a}
	}
	base := &Trace{} // the baseline: no change outside a traced write
	attachKey := func() string {
		o := op("", "attach_order", 1, 1, told404)
		return o.Name + "\x00" + o.Identity + "\x00" + argsKey(&o)
	}()
	createKey := func() string {
		o := op("", "create_invoice", 1, 1, told404)
		return o.Name + "\x00" + o.Identity + "\x00" + argsKey(&o)
	}()
	baseWin := map[string][2]string{createKey: {s0, s1}, attachKey: {s0, s0}, windowKey(attachKey, 2): {s1, s2}}
	for _, buggy := range []bool{false, true} {
		last := alone(s2, s2) // the other delivery's attach, answered from the line that stands
		end := s2
		if buggy {
			last, end = alone(s2, s3), s3 // a service that adds a line for every attach
		}
		tr := &Trace{Ops: []Operation{
			op("1:attach_order#1", "attach_order", 1, 1, told404),
			op("2:attach_order#2", "attach_order", 2, 2, told404),
			op("1:create_invoice#1", "create_invoice", 1, 3, alone(s0, s1)),
			op("2:create_invoice#2", "create_invoice", 2, 4, alone(s1, s1)),
			op("1:attach_order#3", "attach_order", 1, 5, alone(s1, s2)),
			op("2:attach_order#4", "attach_order", 2, 6, last),
		}}
		fs := judgeRepeatsIn(nil, tr, end, s2, baseWin, nil, false, true, base)
		dup := slices.ContainsFunc(fs, func(f Finding) bool { return f.Code == CodeDuplicateWrite })
		if dup != buggy {
			t.Errorf("buggy %v: findings %v", buggy, fs)
		}
	}
}

// A first attach that changed the world (the service kept the line in a
// draft invoice) and answered its 404 as data is an execution: the
// corrected attach bills the order a second time.
func TestErrorAsDataThatChangedTheStateIsAnExecution(t *testing.T) {
	rep := runSelfCorrecting(t, "drafts", false)
	if got := findings(rep, ScenarioBaseline); !slices.Contains(got, CodeDuplicateWrite+" attach_order") {
		t.Errorf("baseline findings %v, want duplicate_write attach_order", got)
	}
}

// A first attach whose window changed nothing, but whose line the service
// booked after it answered (a 503 as data, the work done all the same):
// the line lands between calls, and the retry books a second. The change
// outside every call after the first attach keeps it an execution.
func TestErrorAsDataWhoseEffectLandedLaterIsAnExecution(t *testing.T) {
	rep := runSelfCorrecting(t, "late", false)
	if got := findings(rep, ScenarioBaseline); !slices.Contains(got, CodeDuplicateWrite+" attach_order") {
		t.Errorf("baseline findings %v, want duplicate_write attach_order", got)
	}
}

// The tool returns the 404 as a Go error (a framework's errors-as-results
// middleware outside the harness's hands it to the model), so the first
// attach failed by itself in the baseline. A lost acknowledgement or a
// crash after it could never fire: they are not planned there (red team
// rtS #8: the correct agent was INCONCLUSIVE on every run, and
// testkit.FailInconclusive failed it); the attach that succeeded has
// them, and the report's notes say what was left out.
func TestNoFaultThatFollowsSuccessOnACallThatFailedInTheBaseline(t *testing.T) {
	rep := runSelfCorrecting(t, "", true)
	if !rep.Safe || rep.InconclusiveCount != 0 {
		for _, r := range rep.Results {
			if r.Inconclusive {
				t.Errorf("%s inconclusive: %v %v", r.Scenario, r.Trace.Notes, findings(rep, r.Scenario))
			}
		}
		t.Fatalf("safe %v, %d inconclusive: want safe", rep.Safe, rep.InconclusiveCount)
	}
	planned := map[string]bool{}
	for _, r := range rep.Results {
		planned[r.Scenario] = true
	}
	for _, sc := range []string{"lost_acknowledgement/attach_order#1", "crash_restart/attach_order#1"} {
		if planned[sc] {
			t.Errorf("%s was planned on the attach that failed in the baseline", sc)
		}
	}
	for _, sc := range []string{"lost_acknowledgement/attach_order#2", "crash_restart/attach_order#2", "lost_request/attach_order#1", "before_operation_failure/attach_order#1"} {
		if !planned[sc] {
			t.Errorf("%s was not planned", sc)
		}
	}
	want := "lost_acknowledgement and crash_restart were not planned on attach_order#1: it failed by itself in the baseline (billing: 404 no such invoice INV-9), and these faults follow a call's success, so they could not fire; the calls of attach_order that succeeded there have theirs"
	if !slices.Contains(rep.Notes, want) {
		t.Errorf("notes %q\nwant one: %s", rep.Notes, want)
	}

	// Its replay line names no scenario now: the error says why.
	agent, setup, state, svc := selfCorrecting("", true, nil)
	_, err := Run(context.Background(), t.Name(), agent, Setup(setup), State(state), OnlyScenario("lost_acknowledgement/attach_order#1"))
	svc().srv.Close()
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "names no scenario of this suite: lost_acknowledgement and crash_restart were not planned on attach_order#1: it failed by itself in the baseline") {
		t.Errorf("replay of the scenario no longer planned: %v", err)
	}
}

// The same agent on a service that adds a line for every attach: the
// lost acknowledgement of the attach that succeeded, still planned, is
// caught.
func TestFaultsOnTheCallThatSucceededStillCatchTheDuplicate(t *testing.T) {
	rep := runSelfCorrecting(t, "unkeyed", true)
	if !slices.Contains(findings(rep, "lost_acknowledgement/attach_order#2"), CodeDuplicateWrite+" attach_order") {
		t.Errorf("lost_acknowledgement/attach_order#2 findings %v, want duplicate_write attach_order", findings(rep, "lost_acknowledgement/attach_order#2"))
	}
}
