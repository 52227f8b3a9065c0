package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A to-do list: add appends (a repeat adds a second item), setDone sets a
// flag (a repeat with equal arguments changes nothing).
type todoItem struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Done  bool   `json:"done"`
}

type todoList struct {
	mu    sync.Mutex
	items []todoItem
	// skip makes add skip a title that exists (a create that skips
	// existing names).
	skip bool
	// meet, when set, holds each call until another call is in flight
	// too (or a while passed), so that two deliveries overlap.
	meet *rendezvous
}

type rendezvous struct {
	mu      sync.Mutex
	in      int
	both    chan struct{}
	timeout time.Duration // how long a call waits for another (100 ms by default)
}

func (r *rendezvous) wait() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.both == nil {
		r.both = make(chan struct{})
	}
	r.in++
	ch := r.both
	if r.in == 2 {
		close(ch)
		r.in, r.both = 0, nil
	}
	r.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(cmp.Or(r.timeout, 100*time.Millisecond)):
		r.mu.Lock()
		if r.both == ch {
			r.in--
		}
		r.mu.Unlock()
	}
}

func (l *todoList) add(title string) error {
	l.meet.wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.skip {
		for _, it := range l.items {
			if it.Title == title {
				return nil
			}
		}
	}
	l.items = append(l.items, todoItem{ID: len(l.items) + 1, Title: title})
	return nil
}

func (l *todoList) setDone(id int, done bool) error {
	l.meet.wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.items {
		if l.items[i].ID == id {
			l.items[i].Done = done
			return nil
		}
	}
	return fmt.Errorf("no todo %d", id)
}

func (l *todoList) snapshot() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return map[string]any{"todos": append([]todoItem{}, l.items...)}
}

// traced runs fn as a traced call of op, with the shape of generated code.
func traced(ctx context.Context, op *Op, args, identity []any, fn func(context.Context) error) (err error) {
	if !Enabled() {
		return fn(ctx)
	}
	c, cctx := Begin(ctx, op, args, identity, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = fn(cctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

func addOp(idempotent bool) *Op {
	return &Op{Name: "add_todo", Kind: KindWrite, Params: []string{"title"}, Idempotent: idempotent}
}

func setOp(idempotent bool) *Op {
	return &Op{Name: "update_todo", Kind: KindWrite, Params: []string{"id", "done"}, Idempotent: idempotent}
}

// todoAgent adds a to-do and marks it done, retrying each call once on an
// error, as agents do.
type todoAgent struct {
	list     *todoList
	add, set *Op
	done     []bool // the values update_todo sets, in turn (default true)
}

func (a *todoAgent) run(ctx context.Context) error {
	retry := func(f func() error) error {
		if err := f(); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			return f()
		}
		return nil
	}
	if err := retry(func() error {
		return traced(ctx, a.add, []any{"buy milk"}, []any{"buy milk"}, func(context.Context) error { return a.list.add("buy milk") })
	}); err != nil {
		return err
	}
	done := a.done
	if len(done) == 0 {
		done = []bool{true}
	}
	for _, d := range done {
		if err := retry(func() error {
			return traced(ctx, a.set, []any{1, d}, []any{1}, func(context.Context) error { return a.list.setDone(1, d) })
		}); err != nil {
			return err
		}
	}
	return nil
}

func runTodo(t *testing.T, a *todoAgent, opts ...Option) *Report {
	t.Helper()
	opts = append([]Option{Setup(func(context.Context) error {
		old := a.list
		a.list = &todoList{}
		if old != nil {
			a.list.skip, a.list.meet = old.skip, old.meet
		}
		return nil
	})}, opts...)
	rep, err := Run(context.Background(), t.Name(), a.run, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// findings returns the codes of the findings of a scenario ("" for all),
// with their op.
func findings(rep *Report, scenario string) []string {
	var out []string
	for _, f := range rep.Findings {
		if scenario == "" || f.Scenario == scenario {
			out = append(out, f.Code+" "+strings.Join(f.Ops, ","))
		}
	}
	return out
}

func falseAlarms(rep *Report, op string) int {
	n := 0
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite && f.Ops[0] == op {
			n++
		}
	}
	return n
}

func opByID(t *testing.T, rep *Report, scenario, id string) Operation {
	t.Helper()
	for _, r := range append([]*Result{rep.Baseline}, rep.Results...) {
		if r.Scenario != scenario {
			continue
		}
		for _, o := range r.Trace.Ops {
			if o.ID == id {
				return o
			}
		}
	}
	t.Fatalf("no call %s in %s", id, scenario)
	return Operation{}
}

func TestIdempotentDeclarationAbsorbsEqualRepeats(t *testing.T) {
	// Undeclared: update_todo after a lost acknowledgement is retried, and
	// the retry counts as a second effect although it set what was set.
	buggy := runTodo(t, &todoAgent{add: addOp(false), set: setOp(false)})
	if n := falseAlarms(buggy, "update_todo"); n == 0 {
		t.Fatalf("without the declaration the retry of update_todo is counted as a duplicate; findings: %v", findings(buggy, ""))
	}
	// Declared idempotent: the retry is absorbed, visibly.
	fixed := runTodo(t, &todoAgent{add: addOp(false), set: setOp(true)})
	if n := falseAlarms(fixed, "update_todo"); n != 0 {
		t.Fatalf("declared idempotent, update_todo must not be a duplicate: %v", findings(fixed, ""))
	}
	o := opByID(t, fixed, "lost_acknowledgement/update_todo#1", "1:update_todo#2")
	if o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByDeclaration || !o.Idempotent || o.Effective() {
		t.Fatalf("retry: repeat=%q judged_by=%q idempotent=%v effective=%v", o.Repeat, o.JudgedBy, o.Idempotent, o.Effective())
	}
	// add_todo really appends: still caught wherever it repeats.
	if got := findings(fixed, "crash_restart/add_todo#1"); len(got) != 1 || got[0] != "duplicate_write add_todo" {
		t.Fatalf("crash_restart/add_todo#1: %v", got)
	}
}

func TestIdempotentRepeatWithOtherArgumentsIsAnUpdate(t *testing.T) {
	// One identity (todo 1), two values: done, then not done. Declared
	// idempotent, the second call is a change of the first effect (the
	// last value set wins), not a second effect.
	rep := runTodo(t, &todoAgent{add: addOp(false), set: setOp(true), done: []bool{true, false}})
	if !rep.BaselineSucceeded || len(findings(rep, "baseline")) != 0 {
		t.Fatalf("baseline: %v", findings(rep, "baseline"))
	}
	o := opByID(t, rep, "baseline", "1:update_todo#2")
	if o.Repeat != RepeatUpdate || !o.Effective() {
		t.Fatalf("second update: repeat=%q effective=%v, want an effective update", o.Repeat, o.Effective())
	}
	// The other side: a repeat with the arguments of an earlier call is
	// absorbed even after an update (the crash repeats done=true).
	o = opByID(t, rep, "crash_restart/update_todo#2", "2:update_todo#3")
	if o.Repeat != RepeatAbsorbed {
		t.Fatalf("redelivered update_todo(1, true): repeat=%q, want absorbed", o.Repeat)
	}
	// Undeclared, the two values are a duplicate by count.
	buggy := runTodo(t, &todoAgent{add: addOp(false), set: setOp(false), done: []bool{true, false}})
	if got := findings(buggy, "baseline"); len(got) != 1 || got[0] != "duplicate_write update_todo" {
		t.Fatalf("undeclared baseline: %v", got)
	}
}

func TestStateAbsorbsRepeatsThatChangedNothing(t *testing.T) {
	a := &todoAgent{add: addOp(false), set: setOp(false)}
	rep := runTodo(t, a, State(func() any { return a.list.snapshot() }))
	if n := falseAlarms(rep, "update_todo"); n != 0 {
		t.Fatalf("with State, update_todo's repeats changed nothing: %v", findings(rep, ""))
	}
	o := opByID(t, rep, "lost_acknowledgement/update_todo#1", "1:update_todo#2")
	if o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByState {
		t.Fatalf("retry: repeat=%q judged_by=%q", o.Repeat, o.JudgedBy)
	}
	// The real duplicate is caught, with what it changed in words.
	var msg string
	for _, f := range rep.Findings {
		if f.Scenario == "crash_restart/add_todo#1" && f.Code == CodeDuplicateWrite {
			msg = f.Message
		}
	}
	want := `the repeat changed the state: todos: 1 → 2 entries, added {"done":false,"id":2,"title":"buy milk"}`
	if !strings.Contains(msg, want) {
		t.Fatalf("crash_restart/add_todo#1 message %q lacks %q", msg, want)
	}
}

func TestStateCatchesAWrongIdempotentDeclaration(t *testing.T) {
	// add_todo appends but is declared idempotent. Without State the
	// declaration is trusted...
	a := &todoAgent{add: addOp(true), set: setOp(true)}
	trusted := runTodo(t, a)
	if got := findings(trusted, "crash_restart/add_todo#1"); len(got) != 0 {
		t.Fatalf("without State the declaration decides: %v", got)
	}
	// ...with State the world shows it wrong.
	rep := runTodo(t, a, State(func() any { return a.list.snapshot() }))
	got := findings(rep, "crash_restart/add_todo#1")
	if len(got) != 1 || got[0] != "not_idempotent add_todo" {
		t.Fatalf("crash_restart/add_todo#1: %v", got)
	}
	if rep.Safe {
		t.Fatal("a wrong declaration must fail the suite")
	}
	// A create that skips what exists is idempotent: nothing to report.
	ok := &todoAgent{list: &todoList{skip: true}, add: addOp(true), set: setOp(true)}
	rep = runTodo(t, ok, State(func() any { return ok.list.snapshot() }))
	if !rep.Safe {
		t.Fatalf("a create that skips existing names: %v", findings(rep, ""))
	}
}

func TestOverlappingRepeatsAreJudgedAgainstOneExecution(t *testing.T) {
	// Each call waits until the other delivery's is in flight too.
	a := &todoAgent{list: &todoList{skip: true, meet: &rendezvous{}}, add: addOp(false), set: setOp(false)}
	only := OnlyScenario(ScenarioDuplicateConcurrent)
	rep := runTodo(t, a, State(func() any { return a.list.snapshot() }), only)
	if got := findings(rep, ScenarioDuplicateConcurrent); len(got) != 0 {
		t.Fatalf("two deliveries at once did what one does: %v", got)
	}
	repeatOf := func(rep *Report, op string) Operation {
		for _, x := range rep.Results[0].Trace.Ops {
			if x.Name == op && x.Repeat != "" {
				return x
			}
		}
		t.Fatalf("no repeat of %s", op)
		return Operation{}
	}
	for _, op := range []string{"add_todo", "update_todo"} {
		o := repeatOf(rep, op)
		if !o.Overlapped || o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByOneExecution {
			t.Fatalf("concurrent %s: overlapped=%v repeat=%q judged_by=%q", op, o.Overlapped, o.Repeat, o.JudgedBy)
		}
	}
	// An appending add_todo under two deliveries at once: two items where
	// one execution adds one. update_todo after it still did what one
	// execution does, though the list it worked on differs.
	b := &todoAgent{list: &todoList{meet: &rendezvous{}}, add: addOp(false), set: setOp(false)}
	rep = runTodo(t, b, State(func() any { return b.list.snapshot() }), only)
	got := findings(rep, ScenarioDuplicateConcurrent)
	if len(got) != 1 || got[0] != "duplicate_write add_todo" {
		t.Fatalf("concurrent appending add_todo: %v", got)
	}
	msg := rep.Findings[0].Message
	if !strings.Contains(msg, "compares what they left with what one execution left in the baseline") || !strings.Contains(msg, `todos: 1 → 2 entries, added {"done":false,"id":2,"title":"buy milk"}`) {
		t.Fatalf("concurrent add_todo: %q", msg)
	}
	if o := repeatOf(rep, "update_todo"); o.Repeat != RepeatAbsorbed {
		t.Fatalf("update_todo after the duplicate add: %q by %q", o.Repeat, o.JudgedBy)
	}
}

// A crash after update_todo repeats both writes, each unkeyed: each is a
// duplicate with its own fix, and each has its finding, named in the
// problems. They used to fold into the first, whose message said "their
// duplicates follow from this one" (red team rtV #9): keying add_todo
// leaves update_todo's.
func TestRedeliveryReportsEveryDuplicate(t *testing.T) {
	a := &todoAgent{add: addOp(false), set: setOp(false)}
	rep := runTodo(t, a)
	got := findings(rep, "crash_restart/update_todo#1")
	if !slices.Equal(got, []string{"duplicate_write add_todo", "duplicate_write update_todo"}) {
		t.Fatalf("crash after update_todo repeats both writes; want a finding on each: %v", got)
	}
	for _, f := range rep.Findings {
		if f.Scenario == "crash_restart/update_todo#1" && (len(f.Follows) != 0 || strings.Contains(f.Message, "follow from this one") || f.Message == "") {
			t.Fatalf("follows=%v message=%q", f.Follows, f.Message)
		}
	}
	var problems []string
	for _, p := range rep.Problems {
		problems = append(problems, p.Code+" "+p.Ops[0])
	}
	if !slices.Contains(problems, "duplicate_write update_todo") {
		t.Fatalf("the problems do not name update_todo: %v", problems)
	}
	for _, r := range rep.Results {
		if r.Scenario == "crash_restart/update_todo#1" && len(r.Duplicates) != 2 {
			t.Fatalf("duplicates: %+v", r.Duplicates)
		}
	}
}

func TestProblemsGroupFindingsAcrossScenarios(t *testing.T) {
	a := &todoAgent{add: addOp(false), set: setOp(true)}
	rep := runTodo(t, a)
	var scenarios []string
	n := 0
	for _, p := range rep.Problems {
		if p.Code == CodeDuplicateWrite && p.Ops[0] == "add_todo" {
			n++
			for _, in := range p.SeenIn {
				if !strings.Contains(in.Replay, in.Scenario) {
					t.Errorf("replay %q of %s", in.Replay, in.Scenario)
				}
				scenarios = append(scenarios, in.Scenario)
			}
		}
	}
	want := "lost_acknowledgement/add_todo#1 crash_restart/add_todo#1 crash_restart/update_todo#1 duplicate_delivery/sequential duplicate_delivery/concurrent"
	if n != 1 || strings.Join(scenarios, " ") != want {
		t.Fatalf("%d problems for add_todo, seen in %v; want one, seen in %s", n, scenarios, want)
	}
}

// An asynchronous sink: submit queues the title and answers at once; a
// worker appends it later, skipping a title it has (keyed) or not.
type asyncList struct {
	todoList
	keyed   bool
	mu2     sync.Mutex
	pending int
	wg      sync.WaitGroup
}

func (l *asyncList) submit(title string) error {
	l.mu2.Lock()
	l.pending++
	l.mu2.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		time.Sleep(2 * time.Millisecond)
		l.skip = l.keyed
		_ = l.add(title)
		l.mu2.Lock()
		l.pending--
		l.mu2.Unlock()
	}()
	return nil
}

func TestSettleJudgesEffectsThatLandLater(t *testing.T) {
	op := &Op{Name: "submit", Kind: KindWrite, Params: []string{"title"}}
	for _, keyed := range []bool{false, true} {
		var l *asyncList
		agent := func(ctx context.Context) error {
			// Submits twice, as an impatient agent does.
			for range 2 {
				if err := traced(ctx, op, []any{"x"}, []any{"x"}, func(context.Context) error { return l.submit("x") }); err != nil {
					return err
				}
			}
			return nil
		}
		rep, err := Run(context.Background(), "async", agent,
			Setup(func(context.Context) error { l = &asyncList{keyed: keyed}; return nil }),
			State(func() any { return l.snapshot() }),
			Settle(func(context.Context) error { l.wg.Wait(); return nil }),
			OnlyScenario(ScenarioDuplicateSeq))
		if err != nil {
			t.Fatal(err)
		}
		base := findings(rep, "baseline")
		if keyed && len(base) != 0 {
			t.Fatalf("keyed: the repeat opened nothing: %v", base)
		}
		if !keyed {
			if len(base) != 1 || base[0] != "duplicate_write submit" {
				t.Fatalf("unkeyed: %v", base)
			}
			if msg := rep.Findings[0].Message; !strings.Contains(msg, `todos: 1 → 2 entries, added {"done":false,"id":2,"title":"x"}`) {
				t.Fatalf("unkeyed: %q", msg)
			}
		}
	}
}

func TestDescribeChange(t *testing.T) {
	for _, c := range []struct{ before, after, want string }{
		{`{"notes":["a"]}`, `{"notes":["a","o9:called customer"]}`, `notes: 1 → 2 entries, added "o9:called customer"`},
		{`{"todos":[{"done":false,"id":1}]}`, `{"todos":[{"done":true,"id":1}]}`, `todos[0].done: false → true`},
		{`{"entities":{"alice":{}}}`, `{"entities":{"alice":{},"bob":{}}}`, `entities: added key "bob"`},
		{`{"n":1,"m":{"a b":2}}`, `{"n":2,"m":{"a b":3}}`, `m["a b"]: 2 → 3; n: 1 → 2`},
		{`[1,2,2]`, `[2]`, `state: 3 → 1 entry, removed 1, 2`},
		{`{"a":1}`, `{"a":1}`, ``},
		{`"x"`, `{"a":1}`, `state: "x" → {"a":1}`},
	} {
		if got := DescribeChange(c.before, c.after); got != c.want {
			t.Errorf("DescribeChange(%s, %s) = %q, want %q", c.before, c.after, got, c.want)
		}
	}
}

func TestDescribeChangeWholeForComparison(t *testing.T) {
	long := strings.Repeat("x", 100)
	a := describeChange(`{"l":[]}`, `{"l":["`+long+`1"]}`, -1)
	b := describeChange(`{"l":[]}`, `{"l":["`+long+`2"]}`, -1)
	if a == b {
		t.Fatal("two different long entries compare equal: the comparison of changes must see them whole")
	}
	if short := DescribeChange(`{"l":[]}`, `{"l":["`+long+`1"]}`); !strings.HasSuffix(short, "…") {
		t.Fatalf("for reading, long values are cut: %q", short)
	}
}

// judgeRepeats finds the repeats of a run with more distinct writes than it
// scans for (it then looks them up in a map) as of one with few.
func TestJudgeRepeatsManyIdentities(t *testing.T) {
	for _, distinct := range []int{3, 16, 17, 40} {
		tr := &Trace{}
		add := func(k int) {
			tr.Ops = append(tr.Ops, Operation{
				ID: fmt.Sprintf("1:post#%d", len(tr.Ops)+1), Name: "post", Kind: KindWrite,
				Status: StatusSuccess, Identity: strconv.Quote(fmt.Sprint("entry-", k)),
			})
		}
		for k := range distinct {
			add(k)
		}
		add(1)            // a repeat of the second write
		add(distinct - 1) // and of the last
		add(1)            // and the second again
		fs := judgeRepeats(tr, "", "", nil, false, false)
		var got []string
		for _, f := range fs {
			got = append(got, fmt.Sprintf("%s %v %v", f.Code, f.Identities, f.Calls))
		}
		want := []string{
			fmt.Sprintf(`duplicate_write ["entry-1"] [1:post#2 1:post#%d 1:post#%d]`, distinct+1, distinct+3),
			fmt.Sprintf(`duplicate_write ["entry-%d"] [1:post#%d 1:post#%d]`, distinct-1, distinct, distinct+2),
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%d distinct writes: findings\n%s\nwant\n%s", distinct, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// What one execution changes is compared without what other calls left
// beside it: adding a row to an empty table (a snapshot of null or [])
// and adding the same row beside a sibling's row are one change, while
// adding it twice, or adding another row, is not.
func TestChangeComparisonIgnoresTheRest(t *testing.T) {
	row := `["t1","open",0]`
	one := describeChange(`{"Tickets":null}`, `{"Tickets":[`+row+`]}`, -1)
	for _, c := range []struct {
		before, after string
		same          bool
	}{
		{`{"Tickets":[]}`, `{"Tickets":[` + row + `]}`, true},
		{`{"Tickets":[["t2","open",0]]}`, `{"Tickets":[` + row + `,["t2","open",0]]}`, true},
		{`{"Tickets":[["t2","open",0]]}`, `{"Tickets":[` + row + `,` + row + `,["t2","open",0]]}`, false},
		{`{"Tickets":[["t2","open",0]]}`, `{"Tickets":[["t2","open",0],["t3","open",0]]}`, false},
	} {
		if got := describeChange(c.before, c.after, -1) == one; got != c.same {
			t.Errorf("%s → %s compared with %s: same=%v, want %v", c.before, c.after, one, got, c.same)
		}
	}
	// Maps too: a key added to an absent map or beside another key.
	if describeChange(`{"m":null}`, `{"m":{"a":1}}`, -1) != describeChange(`{"m":{"b":2}}`, `{"m":{"a":1,"b":2}}`, -1) {
		t.Errorf("adding key a to null and beside b compare differently")
	}
	// What the reader sees keeps the sizes.
	if s := DescribeChange(`{"Tickets":[["t2","open",0]]}`, `{"Tickets":[`+row+`,["t2","open",0]]}`); !strings.Contains(s, "1 → 2 entries") {
		t.Errorf("DescribeChange = %q, want the sizes", s)
	}
}

// Two deliveries at once may leave a table's rows in another order than
// one delivery did: the end states are the same, no repeat's doing.
func TestEndStatesSameUpToOrder(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{`{"T":[["t1","open"],["t2","open"]],"R":null}`, `{"R":null,"T":[["t2","open"],["t1","open"]]}`, true},
		{`{"T":[{"id":"a","n":[2,1]},{"id":"b"}]}`, `{"T":[{"id":"b"},{"id":"a","n":[1,2]}]}`, true},
		{`{"T":[["t1","open"],["t2","open"]]}`, `{"T":[["t2","open"],["t1","open"],["t1","open"]]}`, false},
		{`{"T":[["t1","open"],["t2","open"]]}`, `{"T":[["t2","open"],["t1","closed"]]}`, false},
		{`{"n":1}`, `{"n":2}`, false},
	} {
		if got := sameUpToOrder(c.a, c.b); got != c.same {
			t.Errorf("sameUpToOrder(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

// Setup and Teardown given twice (from two helpers) both run: Setups in
// order, Teardowns in reverse, each once per scenario.
func TestHooksGivenTwiceBothRun(t *testing.T) {
	var log []string
	hook := func(name string) func(context.Context) error {
		return func(context.Context) error { log = append(log, name); return nil }
	}
	op := &Op{Name: "note", Kind: KindWrite, Params: []string{"n"}}
	agent := func(ctx context.Context) error {
		return traced(ctx, op, []any{1}, []any{1}, func(context.Context) error { return nil })
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(hook("reset db")), Setup(hook("start worker")),
		Teardown(hook("close db")), Teardown(hook("stop worker")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"reset db", "start worker", "stop worker", "close db"}
	if len(log) != 4*(len(rep.Results)+1) {
		t.Fatalf("%d hook calls for %d scenarios: %v", len(log), len(rep.Results)+1, log)
	}
	for i := 0; i < len(log); i += 4 {
		if !slices.Equal(log[i:i+4], want) {
			t.Fatalf("hooks ran %v, want %v each scenario", log[i:i+4], want)
		}
	}
}
