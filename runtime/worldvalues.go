package runtime

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Values only the world changed. A worker of Setup's mails what a call
// queued and bumps a value of its own as it works (a heartbeat, a count of
// its polls, a last-run mark); a correct agent's repeat (a redelivery that
// finds the order placed and answers once its mail went out) holds the
// world's mail in its window, as the baseline's world did by itself after
// its call, in a gap: worldAfter absorbs that. But the value beat 3 times
// in the baseline's gap and twice in the repeat's window, and where it
// never beat while an end was read it was never learned as restless
// (untraced.restless, ownRestless): the states did not match, and the
// correct agent was a duplicate_write in crash_restart and both
// deliveries (a world that makes it on every run:
// TestAWorldsOwnValueBesideItsMailLeavesTheRepeatUnjudged; the rare
// heartbeat failure of CI239 under -race and load was of this kind).
//
// A value (restlessPlaces: a field, a row's field, a line) that the
// baseline changed between its calls, outside every traced write, and in
// no window of a traced write, is the world's alone there. Where a
// repeat's window, or an overlapped cluster's end against one execution's,
// went from a state to another as a gap of the baseline did, once those
// values are left out, and changed more than those values, the repeat is
// unjudged, the scenario inconclusive: whether the world alone made that
// value change cannot be told from a second effect that made it. Never
// absorbed, and not where the window changed only such values (a counter
// of mails sent, bumped a second time by a second mail, with nothing else
// in State, is judged as before).

// worldValues returns the places of the values that the baseline base
// changed in its gaps (untraced writes and the world's work, between
// calls) and in no window of a traced write; nil where there are none.
func (u *untraced) worldValues() [][]string {
	u.worldOnce.Do(func() {
		inGaps := map[string][]string{}
		for _, g := range u.base.gaps {
			for _, p := range valuePlaces(g[0], g[1]) {
				inGaps[pathKey(p)] = p
			}
		}
		if len(inGaps) == 0 {
			return
		}
		for i := range u.base.Ops {
			if e := u.base.Ops[i].effect(); e != nil && e.before != "" && e.after != "" && e.before != e.after {
				for _, p := range valuePlaces(e.before, e.after) {
					delete(inGaps, pathKey(p))
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(inGaps)) {
			u.worldVals = append(u.worldVals, inGaps[k])
		}
	})
	return u.worldVals
}

// valuePlaces returns the paths of the values in which snapshot y differs
// from x (restlessPlaces), rows and entries that came or went aside.
func valuePlaces(x, y string) [][]string {
	u, errU := decodeState(x)
	v, errV := decodeState(y)
	if errU != nil || errV != nil {
		return nil
	}
	var out [][]string
	restlessPlaces(nil, u, v, &out)
	return out
}

// worldAfterButValues is worldAfter's test with the world's own values
// (worldValues) left out of every state compared, where from and to
// differ in more than those, and the plain test fails for them alone: the
// world took the baseline's state so by itself, but for values only it
// changed there. As worldAfter asks the run to end as the baseline did,
// so this asks the ends (end, baseEnd) to be alike once those values are
// left out: a second mail the repeat set going, landing after its window,
// is in the end, and the repeat is judged as before.
func (u *untraced) worldAfterButValues(from, to, end, baseEnd string, wentThrough func(from, to string, norm func(string) string) bool, alike func(e, b string) bool) bool {
	vals := u.worldValues()
	if len(vals) == 0 || from == "" || to == "" || end == "" || baseEnd == "" {
		return false
	}
	norm := func(s string) string { return nullRestless(s, vals) }
	f, t := norm(from), norm(to)
	if f == t {
		return false // only the world's values changed: judged as before
	}
	if wentThrough(from, to, func(s string) string { return s }) {
		return false // the values are not what kept worldAfter from it
	}
	return alike(norm(end), norm(baseEnd)) && wentThrough(f, t, norm)
}

// worldValuesNote says why repeat id of op was not judged.
func (u *untraced) worldValuesNote(op, id string) string {
	names := make([]string, 0, len(u.worldVals))
	for _, p := range u.worldVals {
		names = append(names, restlessName(p))
	}
	return fmt.Sprintf("%s (a repeat of %s) was not judged: what changed in its window is what the world did by itself in the baseline, between calls, but for %s, which only the world changed there and which changed otherwise here (a heartbeat, a count of the worker's polls, a last-run mark); whether the world alone made that change cannot be told from a second effect that made it; leave such values out of State, or give a Settle that waits for the world's work (testkit.SettleUntil), for the suite to judge the repeat", id, op, clip(strings.Join(names, ", "), maxChange/2))
}

// worldValuesState is the part of untraced that worldValues keeps.
type worldValuesState struct {
	worldOnce sync.Once
	worldVals [][]string
}
