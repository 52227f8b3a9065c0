package runtime

import "fmt"

// Two executions that undid each other. Two deliveries at once of an
// agent that reads whether an account is flagged and flags it where it is
// not both read "not flagged" and both call the flag, and where the
// service's flag flips (a toggle), the account ends as it began: the
// cluster of the two calls changed nothing, where one execution flagged
// it in the baseline. In a world whose goroutines Setup left running (an
// HTTP service's, which every agent that calls one has) and with no
// Settle, "nothing" may also be a call whose effect had not landed when
// the end was read (a consumer holding the work in its receive), and the
// rule for that (notLandedYet, effects.go) left the repeat unjudged: the
// check-then-toggle was inconclusive on every run, and go test passed
// (red team rQ; its variant that retries the whole step shows the bug in
// no other scenario).
//
// The suite's other scenarios tell the two apart: where, in at least two
// of them in which the call took effect once and ran alone between
// snapshots, and in the baseline, its change was there when it returned,
// and in none of them otherwise (loneWindows.landsInWindow), the call's
// effect does not wait for a worker. Nothing of the two calls was still
// to land: they undid each other, a second effect. Judged so only where
// every call of the cluster returned without an error and one of them
// answered as the baseline's execution did: a service that refused both
// (a "busy" answer, nothing changed) changed nothing because it did
// nothing, and stays unjudged, as does a call whose change landed after
// its window in any of the other scenarios, and a suite run one scenario
// at a time (TestTwoFlipsThatUndidEachOtherOverHTTPAreCaught).

// undoneTwice reports whether overlapped repeat o of the write k, whose
// cluster changed nothing where one execution made the change of the
// baseline's window oneWin, is two executions that undid each other: the
// evidence above.
func undoneTwice(tr, baseTr *Trace, o *Operation, op, id string, oneWin [2]string) bool {
	e := o.effect()
	if e == nil || !e.inCluster || e.clErr != "" || baseTr == nil || !tr.odd().lone.landsInWindow(op, id, oneWin) {
		return false
	}
	var want string
	for i := range baseTr.Ops {
		if b := &baseTr.Ops[i]; b.Name == op && b.Identity == id && b.Kind == KindWrite && b.Status == StatusSuccess {
			want = answerText(b.Result)
			break
		}
	}
	if want == "" {
		return false
	}
	answered := false
	for i := range tr.Ops {
		c := &tr.Ops[i]
		if c.Kind != KindWrite || c.effect() == nil || !c.effect().inCluster || c.effect().cluster != e.cluster {
			continue
		}
		if c.Status != StatusSuccess || c.Replayed {
			return false
		}
		if c.Name == op && c.Identity == id && answerText(c.Result) == want {
			answered = true
		}
	}
	return answered
}

// answerText is a call's result as canonical JSON, without the moments a
// clock stamped in it; "" where it does not encode.
func answerText(v any) string {
	b, err := appendCanonical(nil, v)
	if err != nil {
		return ""
	}
	s := string(b)
	if holdsClock(s) {
		s = withoutClocks(s, nil)
	}
	return s
}

// undoneTwiceNote is the finding's note for repeat o of first, which
// undid first's change (undoneTwice).
func undoneTwiceNote(first string) string {
	return fmt.Sprintf("the calls overlapped in time and together changed nothing, where one execution changed the state in the baseline; in the baseline and in every other scenario in which the call ran once, its change was there when it returned, so nothing of them was still to land, and the second undid what %s did, as a toggle flipped twice does", first)
}
