package runtime

import (
	"fmt"
	"strings"
)

// A tool may call another traced write inside a transaction of its own:
// a transfer opens a transaction, calls a traced helper that moves the
// balances in it, and commits when the helper returns. The helper's
// window shows no change (its writes are not committed yet), and the
// commit lands in the window of the call it was made inside of. A fault on
// the helper fails the transfer, whose transaction rolls back, and the
// agent's retry does the whole once more: the helper ran twice, and the
// world holds one transfer. Counted by its executions, a correct keyed
// transfer was a duplicate_write in every run (red team rW #5).
//
// carriedByCaller judges such a helper by the windows of the calls it was
// made inside of (its carriers): where each of its executions changed
// nothing in its own window, here and in the baseline, where the
// baseline's carrier changed the state, at most one execution here has a
// carrier that changed the state, and the run ended as the baseline did,
// the repeats left nothing of their own.

// carrier returns the call that carries o's effect: the nearest call o
// was made inside of (Operation.Parent, at any depth) whose window changed
// the state, or nil where none did. ok is false where a call on the way
// had no window of its own (it overlapped other writes, its State failed)
// or the chain is broken, so what it carried cannot be told.
func carrier(tr *Trace, o *Operation) (c *Operation, ok bool) {
	for p, n := o.Parent, 0; p != ""; n++ {
		x := traceOp(tr, p)
		if x == nil || n >= len(tr.Ops) || x.StateError != "" || !x.stateSeen() {
			return nil, false
		}
		if x.StateChange != "" {
			return x, true
		}
		p = x.Parent
	}
	return nil, true
}

// ownWindowStill reports whether o, made inside another call, ran alone
// and changed nothing in its own window.
func ownWindowStill(o *Operation) bool {
	return o.Parent != "" && o.StateError == "" && o.stateSeen() && o.StateChange == ""
}

// carriedByCaller reports whether the executions idx of op for identity id
// left at most one effect through the calls they were made inside of (see
// above): each execution nested, still in its own window, with a carrier
// known; at most one carrier that changed the state; and in the baseline,
// each execution of op for id nested and still in its own window, and at
// least one carried by a call whose window changed the state (its effect
// lands at its caller's commit). by is the carrier that changed the
// state, if any, for the note. The caller checks that the run ended as the
// baseline did.
func carriedByCaller(tr, base *Trace, idx []int, op, id string) (by *Operation, ok bool) {
	if base == nil || len(idx) < 2 {
		return nil, false
	}
	for _, i := range idx {
		o := &tr.Ops[i]
		if !ownWindowStill(o) {
			return nil, false
		}
		c, known := carrier(tr, o)
		switch {
		case !known:
			return nil, false
		case c != nil && by != nil:
			// Two executions carried into windows that changed the
			// state (or into one: a tool that called its helper twice
			// in one transaction): as many effects, for all the
			// snapshots say.
			return nil, false
		case c != nil:
			by = c
		}
	}
	carried := false
	for i := range base.Ops {
		o := &base.Ops[i]
		if o.Name != op || o.Identity != id || o.Kind != KindWrite {
			continue
		}
		if !ownWindowStill(o) {
			return nil, false
		}
		c, known := carrier(base, o)
		if !known {
			return nil, false
		}
		carried = carried || c != nil
	}
	return by, carried
}

// carriedByCallerNote says that the repeat rep of op was judged by the
// windows of the calls its executions were made inside of (by: the one
// that changed the state, or nil).
func carriedByCallerNote(op, rep string, by *Operation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s changed the state in none of its own calls, here or in the baseline, each made inside another traced call whose window held its effect (a transaction that call commits after it returns); ", op)
	if by != nil {
		fmt.Fprintf(&b, "here only %s's window changed the state, so its repeat %s was judged by the windows of the calls that made it, and the run ended as the baseline did: the repeats left nothing of their own (a failed attempt rolled back)", by.ID, rep)
	} else {
		fmt.Fprintf(&b, "here none of those windows changed the state, so its repeat %s was judged by the windows of the calls that made it, and the run ended as the baseline did: the repeats left nothing of their own", rep)
	}
	return b.String()
}
