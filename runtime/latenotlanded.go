package runtime

import "fmt"

// A write whose effect lands after its call, read before it landed. A tool
// that answers and sends its mail from a goroutine of its own a moment
// later changes the state in no window of its own: in the baseline, which
// waits at each call's end for the world to go quiet, the mail landed
// after the call's window, outside every traced write (a gap). Where a
// run repeats the call and its end is read before any mail landed, the
// end holds less than the baseline's, and State has seen no execution
// change anything: counted by executions, the repeat was a duplicate_write
// of a correct agent whose mail service keeps one mail per order (red
// team rtY #10: go-sdk MCP over streamable HTTP, 2 to 4 scenarios of 14 on
// every run). Such an end says nothing of how many effects stay: one mail
// or two may land after it. The repeat is left unjudged, and the scenario
// inconclusive, with a note that says so. The run's end is read once it
// held still where the baseline's state changed outside every traced
// write and this run repeated a write (judge.lateBase), so the effect has
// most often landed by then, and the end, compared with the baseline's,
// judges the repeat; this rule is for an effect slower than that wait.

// lateGaps returns the changes the baseline's state made outside every
// traced write (its gaps) after an execution of op for identity id began,
// where no execution of op for id changed the state in its own window
// there (its effect, if any, is late); nil where one did, or none ran (a
// write seen to change the state in its window is judged by its windows).
// Executions of op for another identity stand in where none had id (the
// sink named it otherwise in the baseline).
func lateGaps(base *Trace, op, id string) [][2]string {
	if base == nil || base.end == "" || len(base.gaps) == 0 || len(base.odd().gapsAt) != len(base.gaps) {
		return nil
	}
	first := 0
	for _, byID := range [2]bool{true, false} {
		for i := range base.Ops {
			o := &base.Ops[i]
			if o.Kind != KindWrite || o.Name != op || byID && o.Identity != id || o.Replayed || o.Status != StatusSuccess {
				continue
			}
			if !o.stateSeen() || o.StateChange != "" || o.execOrder() == 0 {
				return nil
			}
			if first == 0 || o.execOrder() < first {
				first = o.execOrder()
			}
		}
		if first != 0 {
			break
		}
	}
	if first == 0 {
		return nil
	}
	var out [][2]string
	for g, gap := range base.gaps {
		if base.odd().gapsAt[g] > first && gap[0] != gap[1] {
			out = append(out, gap) // begun after op's first execution began
		}
	}
	return out
}

// lateNotLanded reports whether the run's end (end) is the baseline's end
// but for one of op's late gaps (lateGaps), which has not landed in it: at
// every place the gap changed, the end holds what the gap began with, and
// with the gap's change put in, the end is alike the baseline's.
func lateNotLanded(end string, base *Trace, op, id string, views *stateViews, alike func(e, b string) bool) bool {
	if base == nil || end == "" || end == base.end {
		return false
	}
	gaps := lateGaps(base, op, id)
	if len(gaps) == 0 {
		return false
	}
	run, last := views.of(end), views.of(base.end)
	if run == nil || last == nil {
		return false
	}
	for _, gap := range gaps {
		g0, g1 := views.of(gap[0]), views.of(gap[1])
		if g0 != nil && g1 != nil && noneLanded(run.v, g0.v, g1.v) && alikeEncoded(overwriteWorld(run.v, g0.v, g1.v), last.v, alike) {
			return true
		}
	}
	return false
}

// lateCopied reports whether the run's end holds, beside all the
// baseline's end holds, one more copy of what one of op's late gaps
// (lateGaps) added, and nothing else (oneMoreCopy): a second mail the
// repeat sent once it answered.
func lateCopied(end string, base *Trace, op, id string, views *stateViews) bool {
	if base == nil || end == "" || end == base.end {
		return false
	}
	for _, gap := range lateGaps(base, op, id) {
		if oneMoreCopy(base.end, end, gap, views) {
			return true
		}
	}
	return false
}

// lateCopiedNote is why a repeat whose window changed nothing counts where
// the end holds one more copy of the op's late change (lateCopied).
const lateCopiedNote = "its calls changed the state in no window of their own, here or in the baseline, where the state changed after them, outside every traced write; the run's end, read once it held still, holds one more copy of that change than the baseline's end: the effect lands after the call (a mail sent once the tool answered), and the repeat's landed too"

// lateNotLandedNote says why repeat id of op was not judged
// (lateNotLanded): change is what the end lacks of the baseline's.
func lateNotLandedNote(op, id, change string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, here or in the baseline, where the state changed after it, outside every traced write, and this run's end was read before that change landed in it (it lacks %s): an effect that lands after its call (a mail sent once the tool answered) had not landed, and the end cannot say whether one effect or two will stay; give a Settle that waits for that work (testkit.SettleUntil)", id, op, op, change)
}
