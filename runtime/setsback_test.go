package runtime

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
)

// A help desk whose tickets have a status. set_status sets it (a repeat
// with equal arguments changes nothing by itself); archive is idempotent
// at the sink: archiving an archived ticket does nothing.
type desk struct {
	mu     sync.Mutex
	status map[string]string
}

func (d *desk) set(id, status string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.status[id] = status
	return nil
}

func (d *desk) archive(id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.status[id] != "archived" && d.status[id] != "" {
		// once archived, a ticket stays so on the books of this sink
		if _, done := d.status[id+"#archived"]; !done {
			d.status[id] = "archived"
			d.status[id+"#archived"] = "yes"
		}
	}
	return nil
}

func (d *desk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.status)
}

// deskAgent opens ticket t1 and then closes it (close_ticket) or archives
// it (archive_ticket), each call retried once on an error.
type deskAgent struct {
	d          *desk
	archive    bool
	idempotent bool
}

func (a *deskAgent) run(ctx context.Context) error {
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"id", "status"}, Idempotent: a.idempotent}
	end := &Op{Name: "close_ticket", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	if a.archive {
		end = &Op{Name: "archive_ticket", Kind: KindWrite, Params: []string{"id"}, Idempotent: true}
	}
	once := func(op *Op, args []any, fn func() error) error {
		call := func() error {
			return traced(ctx, op, args, args, func(context.Context) error { return fn() })
		}
		if err := call(); err != nil && ctx.Err() == nil {
			return call()
		}
		return nil
	}
	if err := once(set, []any{"t1", "open"}, func() error { return a.d.set("t1", "open") }); err != nil {
		return err
	}
	if a.archive {
		return once(end, []any{"t1"}, func() error { return a.d.archive("t1") })
	}
	return once(end, []any{"t1"}, func() error { return a.d.set("t1", "closed") })
}

func runDesk(t *testing.T, a *deskAgent) *Report {
	t.Helper()
	rep, err := Run(context.Background(), t.Name(), a.run,
		Setup(func(context.Context) error { a.d = &desk{status: map[string]string{}}; return nil }),
		State(func() any { return a.d.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A redelivered "open t1" after "close t1" opens the ticket again, and the
// redelivery closes it again: the repeat set back what its first execution
// had left, and the run ends as one delivery leaves it. That is neither a
// second effect nor a sign that set_status is not idempotent.
func TestRepeatThatSetsBackALaterWriteRedoneIsAbsorbed(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		rep := runDesk(t, &deskAgent{idempotent: idempotent})
		if !rep.Safe {
			t.Fatalf("idempotent=%v: %v", idempotent, findings(rep, ""))
		}
		o := opByID(t, rep, "duplicate_delivery/sequential", "2:set_status#2")
		if o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByEndState || o.StateChange == "" {
			t.Fatalf("idempotent=%v: redelivered set_status: repeat=%q judged_by=%q change=%q, want absorbed by the end state after a change",
				idempotent, o.Repeat, o.JudgedBy, o.StateChange)
		}
	}
}

// archive_ticket does nothing the second time, so the redelivery's "open
// t1" stays: the ticket ends open where one delivery archives it. The
// repeat of set_status is a duplicate (whether or not it is declared
// idempotent: the declaration is not what is wrong), and the finding says
// what it set back and how the run ended.
func TestRepeatThatSetsBackALaterWriteForGoodIsADuplicate(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		rep := runDesk(t, &deskAgent{archive: true, idempotent: idempotent})
		got := findings(rep, "duplicate_delivery/sequential")
		if len(got) != 1 || got[0] != "duplicate_write set_status" {
			t.Fatalf("idempotent=%v: duplicate_delivery/sequential: %v", idempotent, got)
		}
		for _, f := range rep.Findings {
			if f.Code == CodeNotIdempotent {
				t.Fatalf("idempotent=%v: set_status is idempotent: %s", idempotent, f.Message)
			}
			if f.Scenario == "duplicate_delivery/sequential" {
				for _, want := range []string{`t1: "archived" → "open"`, "setting back what 1:set_status#1 had left"} {
					if !strings.Contains(f.Message, want) {
						t.Fatalf("idempotent=%v: message %q lacks %q", idempotent, f.Message, want)
					}
				}
			}
		}
	}
}

// What the snapshots around a repeat and an earlier equal execution say
// (redone): the repeat sets back (it left what the earlier one left,
// starting from something else at every place it changed), or it started
// from what the earlier one left and changed it anyway (against: a second
// append), or neither (another write changed things in between).
func TestRedoneByPlaces(t *testing.T) {
	cases := []struct {
		name                    string
		before, after           string // around the repeat
		firstBefore, firstAfter string // around the earlier execution
		setBack, against        bool
	}{
		{"set back a scalar", `{"t1":"closed"}`, `{"t1":"open"}`, `{}`, `{"t1":"open"}`, true, false},
		{"set back among others", `{"t1":"closed","t2":"x"}`, `{"t1":"open","t2":"x"}`, `{}`, `{"t1":"open"}`, true, false},
		{"set back after a no-op first", `{"t1":"closed"}`, `{"t1":"open"}`, `{"t1":"open"}`, `{"t1":"open"}`, true, false},
		{"a second append", `{"notes":["a"]}`, `{"notes":["a","a"]}`, `{"notes":[]}`, `{"notes":["a"]}`, false, true},
		{"an append after a drain", `{"outbox":[]}`, `{"outbox":["m1"]}`, `{"outbox":[]}`, `{"outbox":["m1"]}`, false, false},
		{"a keyed mail queued after a send", `{"outbox":{}}`, `{"outbox":{"m1":"bob"}}`, `{}`, `{"outbox":{"m1":"bob"}}`, false, false},
		{"an entry added again after it was removed", `{"open":["t2"]}`, `{"open":["t2","t1"]}`, `{"open":[]}`, `{"open":["t1"]}`, false, false},
		{"a row added again under a new id", `{"cart":[]}`, `{"cart":[[2,"sku"]]}`, `{"cart":[]}`, `{"cart":[[1,"sku"]]}`, false, false},
		{"a row added next to the first's", `{"cart":[[1,"sku"]]}`, `{"cart":[[1,"sku"],[2,"sku"]]}`, `{"cart":[]}`, `{"cart":[[1,"sku"]]}`, false, true},
		{"a key removed again", `{"t1":"x"}`, `{}`, `{"t1":"y"}`, `{}`, true, false},
		{"a key removed that the first left", `{"t1":"x"}`, `{}`, `{}`, `{"t1":"x"}`, false, true},
		{"another value", `{"t1":"closed"}`, `{"t1":"reopened"}`, `{}`, `{"t1":"open"}`, false, false},
		{"another value from the first's", `{"t1":"open"}`, `{"t1":"reopened"}`, `{}`, `{"t1":"open"}`, false, true},
		{"a whole list reordered back", `{"q":[2,1]}`, `{"q":[1,2]}`, `{"q":[1]}`, `{"q":[1,2]}`, true, false},
		{"an increment after a decrement", `{"n":0}`, `{"n":1}`, `{"n":0}`, `{"n":1}`, false, false},
		{"a deposit after a payout to zero", `{"a1":0}`, `{"a1":100}`, `{}`, `{"a1":100}`, false, false},
		{"a second increment", `{"n":1}`, `{"n":2}`, `{"n":0}`, `{"n":1}`, false, true},
		{"null as an empty list", `{"q":null}`, `{"q":[1]}`, `{"q":[]}`, `{"q":[1]}`, false, false},
		{"a list of one entry set back (one value)", `{"q":[2]}`, `{"q":[1]}`, `{"q":[]}`, `{"q":[1]}`, true, false},
		{"a row set back (rows keyed by their first column)", `{"orders":[["o1","shipped"]]}`, `{"orders":[["o1","paid"]]}`, `{}`, `{"orders":[["o1","paid"]]}`, true, false},
		{"a row with an id set back", `{"t":[{"id":1,"s":"b"}]}`, `{"t":[{"id":1,"s":"a"}]}`, `{"t":[{"id":1,"s":"x"}]}`, `{"t":[{"id":1,"s":"a"}]}`, true, false},
		{"a count set back from another one", `{"q":{"a":[2]}}`, `{"q":{"a":1}}`, `{"q":{"a":0}}`, `{"q":{"a":1}}`, true, false},
	}
	seen := func(id, before, after string) Operation {
		return Operation{ID: id, StateChange: describeChange(before, after, maxChange), more: judgedMore(&effectView{seen: true, before: before, after: after})}
	}
	for _, c := range cases {
		tr := &Trace{Ops: []Operation{seen("1:op#1", c.firstBefore, c.firstAfter), seen("2:op#2", c.before, c.after)}}
		var views stateViews
		r := redone(tr, &tr.Ops[1], []int{0}, &views, nil)
		if (r.setBack != "") != c.setBack || (r.against != "") != c.against {
			t.Errorf("%s: set back %q, against %q; want %v, %v", c.name, r.setBack, r.against, c.setBack, c.against)
		}
	}
}

// An agent that opens t1, closes it and opens it again (it reopens what it
// closed) sets back, in its own run, what its first call left: the
// baseline has no finding, and set_status is not shown wrongly declared.
func TestBaselineThatReopensIsItsOwnDoing(t *testing.T) {
	var d *desk
	set := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"id", "status"}, Idempotent: true}
	agent := func(ctx context.Context) error {
		for _, status := range []string{"open", "closed", "open"} {
			args := []any{"t1", status}
			if err := traced(ctx, set, args, args, func(context.Context) error { return d.set("t1", status) }); err != nil {
				return err
			}
		}
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { d = &desk{status: map[string]string{}}; return nil }),
		State(func() any { return d.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(rep, "baseline"); len(got) != 0 {
		t.Fatalf("baseline: %v", got)
	}
	o := opByID(t, rep, "baseline", "1:set_status#3")
	if o.Repeat != RepeatAbsorbed || o.JudgedBy != JudgedByState {
		t.Fatalf("the reopen: repeat=%q judged_by=%q", o.Repeat, o.JudgedBy)
	}
	if !rep.Safe {
		t.Fatalf("findings: %v", findings(rep, ""))
	}
}
