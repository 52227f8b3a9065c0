package runtime

import (
	"fmt"
	"slices"
	"strings"
)

// A repeat that overlapped other executions of its call is judged by what
// their cluster left, against what one execution left in the baseline
// (comparesOne). A call made inside one of them (a tool's own call: a
// notification it sends from a goroutine it does not wait for) whose own
// window opened while only the calls it was made inside of were in flight
// adds its effect to the cluster's window without being one of its calls.
// Whether that effect falls inside the window of one execution of the
// outer call is a matter of timing: in the baseline the notification may
// begin after the call returned and be seen in a window of its own, and in
// the scenario begin before it, inside the cluster. The cluster then left
// one execution's change and the notification's, and the notification's
// was counted against the repeat (a duplicate_write of a correct agent,
// "notes: null → [ord-ada placed]", 7 runs of 300 under -race with
// another process at work: TestNotificationSentFromAToolsGoroutineIsTheScenarios).
// Or the other way round: begun inside the one execution in the baseline,
// and after the cluster here, which then left less than one execution's
// change ("notes: [ord-ada placed] → null").
//
// The rule: a change the trace attributes to another traced write is not
// evidence against the repeat. A call made inside a call of the cluster
// (Parent or served, at any depth) whose window of its own lies in the
// cluster is such a write: while its window was open no write ran but it
// and the calls it was made inside of, and its change is its own op's,
// judged as that op's (a second notification is a duplicate_write of
// notify). It is cut out whichever of the cluster's executions made it:
// which of two overlapped executions is the repeat is the order in which
// they began, not which one found the order placed (the one that began
// second may place it, and notify). So is, from one execution's window in
// the baseline, the window of a call made inside it. What is left of the
// cluster's window is compared with what is left of one execution's:
//
//   - left as one stretch that made one execution's change, with the run
//     ending as the baseline did: the repeat is absorbed, and the trace's
//     notes name the calls whose change was left out (cutOne). The end
//     must agree: a second effect made through a nested call (the
//     replay's own notification, under an identity of its own) leaves
//     one more there;
//   - where the cut cannot be made (a cut call's window is not known, or
//     the cluster changed the state in more than one stretch outside the
//     cut windows, whose changes cannot be added up) and every place the
//     cluster changed beyond one execution is a place a cut call changed
//     in its window, with the run ending as the baseline did: the
//     snapshots cannot tell the repeat's share from that call's, and the
//     repeat is not judged, the scenario inconclusive with a note naming
//     the call (cutUnknown). An end with more than one delivery leaves is
//     evidence of its own, and the repeat is judged as before;
//   - else the repeat is judged as before: a stretch that did other than
//     one execution did, or a place beyond it that no cut call changed,
//     is an effect of the calls themselves, still seen.

// cutVerdict is what cutting the windows of calls made inside others out
// of an overlapped repeat's cluster, and of one execution's window, says
// (nestedOthers).
type cutVerdict int

const (
	// cutNone: no window to cut, or what is left is judged as before.
	cutNone cutVerdict = iota
	// cutOne: what is left is one execution's change.
	cutOne
	// cutUnknown: the cut cannot be made, and what the cluster did
	// beyond one execution is at places the cut calls changed.
	cutUnknown
)

// nestedOthers cuts out of overlapped repeat o's cluster the windows of
// the calls made inside its calls that lie in it, and out of one
// execution's window w (before, after) in the baseline (baseTr, which may
// be nil) those of the calls made inside that execution, and compares what
// is left of the two. It returns the verdict and the calls cut in the
// scenario and in the baseline (for the note), by start; cutNone with no
// call where neither side had one.
func nestedOthers(tr, baseTr *Trace, o *Operation, w [2]string, views *stateViews) (cutVerdict, []*Operation, []*Operation) {
	v := o.effect()
	if v == nil || !v.inCluster || v.cluster == 0 || v.before == "" || v.after == "" {
		return cutNone, nil, nil
	}
	cut, stretches, known := cutWindows(tr, o, v.cluster, v.before, v.after)
	// One execution, cut alike: in the baseline the notification may
	// have begun inside it, and here after the calls (a window of its
	// own, outside theirs).
	one, baseCut := [][2]string{w}, []*Operation(nil)
	if b := oneExecution(baseTr, o, w); b != nil {
		if bcut, bs, bknown := cutWindows(baseTr, b, b.effect().cluster, w[0], w[1]); len(bcut) > 0 && bknown {
			one, baseCut = bs, bcut
		}
	}
	if len(cut) == 0 && len(baseCut) == 0 {
		return cutNone, nil, nil
	}
	if known && len(stretches) == 1 && len(one) == 1 && describeChange(stretches[0][0], stretches[0][1], -1) == describeChange(one[0][0], one[0][1], -1) {
		return cutOne, cut, baseCut
	}
	if len(cut) == 0 || known && len(stretches) < 2 || w[0] != v.before {
		// One stretch, which did something else than one execution
		// did, or none: the repeat's own doing, judged as before. Nor
		// is a cluster that began elsewhere than one execution parted
		// here.
		return cutNone, nil, nil
	}
	beyond := partsOf(w[1], v.after, views)
	if beyond.empty() || beyond.whole {
		return cutNone, nil, nil
	}
	var theirs []place
	for _, x := range cut {
		xv := x.effect()
		if xv.clErr != "" || xv.before == "" || xv.after == "" {
			continue
		}
		ps, ok := changedPlaces(views.of(xv.before), views.of(xv.after))
		if !ok {
			return cutNone, nil, nil
		}
		theirs = append(theirs, ps...)
	}
	for _, p := range beyond.places {
		if !slices.ContainsFunc(theirs, func(q place) bool { return placesMeet(p, q) }) {
			return cutNone, nil, nil // a place only the cluster's calls changed: the repeat's
		}
	}
	return cutUnknown, cut, nil
}

// cutWindows returns the calls of tr made inside the calls of window n
// (before, after), other than o, each with a window of its own in it, the
// outermost, by start; the stretches of the window outside theirs that
// changed the state, in order; and whether every one of their windows is
// known (else stretches stop at the first that is not).
func cutWindows(tr *Trace, o *Operation, n int, before, after string) (cut []*Operation, stretches [][2]string, known bool) {
	for i := range tr.Ops {
		x := &tr.Ops[i]
		if xv := x.effect(); x != o && xv != nil && xv.in == n {
			cut = append(cut, x)
		}
	}
	// Only the outermost: a window inside a cut window is cut with it.
	cut = slices.DeleteFunc(cut, func(x *Operation) bool {
		return slices.ContainsFunc(cut, func(y *Operation) bool { return y != x && madeWithin(tr, x, y.ID) })
	})
	slices.SortFunc(cut, func(x, y *Operation) int { return x.execOrder() - y.execOrder() })
	from := before
	for _, x := range cut {
		xv := x.effect()
		if xv.clErr != "" || xv.before == "" || xv.after == "" {
			return cut, stretches, false
		}
		if from != xv.before {
			stretches = append(stretches, [2]string{from, xv.before})
		}
		from = xv.after
	}
	if from != after {
		stretches = append(stretches, [2]string{from, after})
	}
	return cut, stretches, true
}

// oneExecution returns the call of baseTr whose window of its own is w,
// of o's op, identity and arguments, or nil.
func oneExecution(baseTr *Trace, o *Operation, w [2]string) *Operation {
	if baseTr == nil {
		return nil
	}
	for i := range baseTr.Ops {
		b := &baseTr.Ops[i]
		if b.Name != o.Name || b.Identity != o.Identity || !b.stateSeen() || b.effect().cluster == 0 {
			continue
		}
		if before, after := b.stateWindow(); before == w[0] && after == w[1] {
			return b
		}
	}
	return nil
}

// madeWithin reports whether x was made inside the call with ID id (its
// Parent), or serves its HTTP request, at any depth.
func madeWithin(tr *Trace, x *Operation, id string) bool {
	for p, n := x, 0; p != nil && n < len(tr.Ops); n++ {
		up := p.Parent
		if up == "" {
			up = p.served()
		}
		if up == "" {
			return false
		}
		if up == id {
			return true
		}
		p = traceOp(tr, up)
	}
	return false
}

// cutNote says that repeat o was absorbed once the windows of calls made
// inside the calls of its cluster (cut), or inside one execution in the
// baseline (baseCut), were cut out (cutOne).
func cutNote(o *Operation, first string, cut, baseCut []*Operation) string {
	var held []string
	if len(cut) > 0 {
		held = append(held, "their window also held "+cutNames(cut))
	}
	if len(baseCut) > 0 {
		held = append(held, "one execution's window in the baseline held "+cutNames(baseCut))
	}
	return fmt.Sprintf("%s (a repeat of %s) overlapped other executions of %s; %s, each in a window of its own while no write but the calls it was made inside of was in flight: what changed there is that call's doing, judged as its op's; outside it the calls made one execution's change, and the run ended as the baseline did, so the repeat was absorbed",
		o.ID, first, o.Name, strings.Join(held, ", and "))
}

// cutUnknownNote says why repeat o was not judged (cutUnknown).
func cutUnknownNote(o *Operation, first string, cut []*Operation) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: its calls overlapped, and what they changed beyond one execution in the baseline is at places that %s changed too, each in a window of its own inside theirs, in a way the snapshots cannot part from the repeat's (a window not known, or changes on both sides of it); that change is no evidence of a second effect, nor of none: the scenario is inconclusive",
		o.ID, first, cutNames(cut))
}

// cutNames names the calls cut, each with the call it was made inside of.
func cutNames(cut []*Operation) string {
	names := make([]string, len(cut))
	for i, x := range cut {
		in := x.Parent
		if in == "" {
			in = x.served()
		}
		names[i] = fmt.Sprintf("%s (made inside %s)", x.ID, in)
	}
	return strings.Join(names, ", ")
}
