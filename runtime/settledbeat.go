package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A heartbeat in State beside a Settle. A world whose goroutines change a
// place by themselves (a lease renewed, a poller's last-seen mark, a phase
// flipped every 20 ms) never holds still. Without a Settle the baseline's
// end is read again and again, and the places that change there twice or
// more are learned (untraced.restless). With a Settle the end is read once,
// after the Settle said quiet, so nothing was learned, and a beat inside a
// repeat's window was taken for the repeat's change: a correct agent was a
// duplicate_write in 7 suites of 20 (TestAHeartbeatInStateBesideASettle;
// red team rU's probe, 81 runs of 90 before the sixteenth sitting).
//
// So where a Settle is given, the baseline reads the state again and again
// after Setup, before its agent runs (restlessBefore): no call has been
// made, and what changes then is the world's own, whoever started the
// goroutines that change it (Setup, or the test before the suite: a
// service it runs for all its suites, which Setup only empties). A place
// that changes twice or more is restless, and every snapshot of the suite
// from then on, the baseline's included, reads it as null
// (judge.leaveOut): the windows, the ends and the Settle's second look
// (settlelook.go) compare what the calls did. The baseline's trace says
// which places were left out. The look ends once the state, with those
// places left out, held still for restlessHold (100 ms, as the baseline's
// end without a Settle, endCalibrate), within restlessMax (400 ms), both
// on the polls' clock, as judge.finish's: a poll's sleep that a loaded
// machine overran does not count its overrun, and a State that takes
// 30 ms (a query over the network) counts its time; counted in polls,
// such a State made the look 0.7 s at least. That is 100 ms once per
// suite for a world that holds still, about 150 ms for one with a 20 ms
// heartbeat. A heartbeat slower than the hold is not learned, as without
// a Settle: with a hold of 50 ms, one every 80 ms was not, and a correct
// agent whose queue took 40 ms was a duplicate_write in 15 runs of 15
// (red team rV).
//
// What is learned must hide nothing the calls change:
//   - The Settle runs first, so that what Setup set going (two fixture
//     charges booked by the worker it started) has landed: learned as a
//     heartbeat, the balance it changed twice was read as null, and the
//     buggy agent's second charge to it passed in 30 runs of 30 (red team
//     rV, "backlog").
//   - Only a value is learned, never a list or an object that holds it: a
//     heartbeat in the one row of a table (a running job's heartbeat_at,
//     an account's last_seen beside its balance) made the whole list a
//     place, read as null, and the buggy agent's second job or charge in
//     that table passed in every run (red team rV, "jobs", "acct1"). A row
//     of a list is found by a column that names it (its id, or a column
//     whose values are one per row and stay: a lease's name), or as the
//     list's only row; a field of it is nulled in that row alone, in every
//     snapshot that has it.
//   - An entry of a list that is no row (a log a heartbeat appends to)
//     holds no value to null, and is not left out; but a line of a list
//     of strings that became another line beginning the same, up to a
//     separator ("worker=w1 ticks=6" then "worker=w1 ticks=7", a State
//     that formats each row as a line), is that line's value: every line
//     that begins so is read as its beginning alone (changedLine). Before,
//     such a heartbeat was never learned, and a correct agent beside it
//     was a duplicate_write in 8 to 9 runs of 10 (red team rW).

// restlessHold is how long the state must hold still for restlessBefore
// (its polls endPoll apart), restlessMax how long it looks at most.
const (
	restlessHold = endCalibrate
	restlessMax  = 4 * endCalibrate
)

// restlessBefore runs the Settle, then reads the state every endPoll
// until it held still, with the places that changed twice or more left
// out, for restlessHold, or for restlessMax in all. It returns
// those places (restlessPlaces) and their names; none where the Settle or
// a snapshot failed, or a snapshot did not decode.
//
// The Settle is given bound (the stall bound): one that waits for what
// only the agent does (a charge, an outbox's sent row) never says quiet
// before the agent ran, and waited for good, the baseline with it
// (TestAControlRunGoesOnPastASettleThatWaitsForTheAgent hung). Nothing is
// learned then, as where it failed; why says so, for the baseline's
// trace.
func (j *judge) restlessBefore(bound time.Duration) (places [][]string, names []string, why string) {
	ctx, stop := context.WithTimeout(j.halt.ctx, bound)
	defer stop()
	settle := j.settle
	if settle != nil {
		j.settle = func(context.Context) error { return settle(ctx) }
		defer func() { j.settle = settle }()
	}
	if err := j.quiet(); err != nil {
		if ctx.Err() != nil {
			why = fmt.Sprintf("the Settle did not say the world was quiet within %v after Setup, before the baseline's agent ran (does it wait for what only the agent does?), so nothing the world changes by itself was learned there: %v", bound, err)
		}
		return nil, nil, why
	}
	places, names = j.restlessLook()
	return places, names, ""
}

// restlessLook is restlessBefore's look, once the Settle said quiet.
func (j *judge) restlessLook() ([][]string, []string) {
	prev, err := j.snapshot()
	if err != nil {
		return nil, nil
	}
	pv, err := decodeState(prev)
	if err != nil {
		return nil, nil
	}
	var (
		places [][]string
		names  []string
		times  = map[string]int{}
		still  = prev // prev with places left out: what must hold still
	)
	var on, stillSince time.Duration
	for clock := newPollClock(); on < restlessMax && on-stillSince < restlessHold; {
		on, _ = clock.sleep()
		s, err := j.snapshot()
		if err != nil {
			return nil, nil
		}
		if s != prev {
			v, err := decodeState(s)
			if err != nil {
				return nil, nil
			}
			var changed [][]string
			restlessPlaces(nil, pv, v, &changed)
			prev, pv = s, v
			for _, p := range changed {
				k := strings.Join(p, "\x01")
				if times[k]++; times[k] == 2 {
					places = append(places, p)
					names = append(names, restlessName(p))
				}
			}
		}
		if s = nullRestless(s, places); s != still {
			still, stillSince = s, on
		}
	}
	slices.Sort(names)
	return places, names
}

// rowSelect starts a path segment of restlessPlaces that names a row of a
// list: by the column that names it and its value there (as JSON), or,
// with no column, the list's only row.
const rowSelect = "\x00select\x00"

// restlessPlaces adds to out the paths of the values that differ between
// a and b: a field of an object by its key, a row of a list of objects by
// rowSelect, never a list or an object as a whole, nor an entry of a list
// that is no row.
func restlessPlaces(path []string, a, b any, out *[][]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return
		}
		for k, xv := range x {
			restlessPlaces(append(slices.Clip(path), k), xv, y[k], out)
		}
		for k, yv := range y {
			if _, ok := x[k]; !ok {
				restlessPlaces(append(slices.Clip(path), k), nil, yv, out)
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok {
			return
		}
		if p, ok := changedLine(x, y); ok {
			*out = append(*out, append(slices.Clip(path), linePrefix+p))
			return
		}
		if !allObjects(x) || !allObjects(y) {
			return
		}
		col, ok := namingColumn(x, y)
		if !ok {
			if len(x) == 1 && len(y) == 1 {
				restlessPlaces(append(slices.Clip(path), rowSelect), x[0], y[0], out)
			}
			return
		}
		rows := map[string]any{}
		for _, r := range x {
			rows[encode(r.(map[string]any)[col])] = r
		}
		for _, r := range y {
			key := encode(r.(map[string]any)[col])
			if xr, ok := rows[key]; ok {
				restlessPlaces(append(slices.Clip(path), rowSelect+col+"\x00"+key), xr, r, out)
			}
		}
		return
	}
	if _, ok := b.(map[string]any); ok {
		return
	}
	if _, ok := b.([]any); ok {
		return
	}
	if !equalValues(a, b) {
		*out = append(*out, path)
	}
}

// linePrefix starts a path segment of restlessPlaces that names a line of
// a list of strings by how it begins: "worker=w1 ticks=" of the line
// "worker=w1 ticks=7", a State that formats each row as a line.
const linePrefix = "\x00line\x00"

// changedLine returns, where lists x and y are strings and one line of x
// became another in y (one taken out, one put in, the others the same),
// how both begin, up to a separator (a space, '=', ':', ',', ';', '|'),
// as a row formatted as a line keeps its name and changes a value:
// "worker=w1 ticks=" of "worker=w1 ticks=6" and "worker=w1 ticks=7". Not
// where nothing before a separator is shared: "1" and "2" name no line.
func changedLine(x, y []any) (string, bool) {
	if len(x) != len(y) || len(x) == 0 {
		return "", false
	}
	count := map[string]int{}
	for _, e := range x {
		s, ok := e.(string)
		if !ok {
			return "", false
		}
		count[s]++
	}
	var added []string
	for _, e := range y {
		s, ok := e.(string)
		if !ok {
			return "", false
		}
		if count[s] > 0 {
			count[s]--
			continue
		}
		added = append(added, s)
	}
	var removed []string
	for s, n := range count {
		for range n {
			removed = append(removed, s)
		}
	}
	if len(added) != 1 || len(removed) != 1 {
		return "", false
	}
	a, r := added[0], removed[0]
	n := 0
	for n < len(a) && n < len(r) && a[n] == r[n] {
		n++
	}
	for n > 0 && !strings.ContainsRune(" =:,;|", rune(a[n-1])) {
		n--
	}
	if n < 2 {
		return "", false
	}
	return a[:n], true
}

func allObjects(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return len(l) > 0
}

// namingColumn returns the column that names the rows of lists x and y:
// one every row has, with a string, number or bool, no two rows of a list
// sharing it, and the most values in both lists: an id, a lease's name,
// not the timestamp a heartbeat renews. Of those, the row's id (idKey)
// first, then a column of strings, then the first by name: a balance the
// calls change names no row.
func namingColumn(x, y []any) (string, bool) {
	id := idKey(x[0].(map[string]any))
	rank := func(col string) int {
		switch {
		case col == id:
			return 2
		case isString(x[0].(map[string]any)[col]):
			return 1
		}
		return 0
	}
	var best string
	shared := 0
	for col := range x[0].(map[string]any) {
		kx, okx := columnValues(x, col)
		ky, oky := columnValues(y, col)
		if !okx || !oky {
			continue
		}
		n := 0
		for k := range kx {
			if ky[k] {
				n++
			}
		}
		if n == 0 {
			continue
		}
		if n > shared || n == shared && (rank(col) > rank(best) || rank(col) == rank(best) && col < best) {
			best, shared = col, n
		}
	}
	return best, shared > 0
}

func isString(v any) bool { _, ok := v.(string); return ok }

func columnValues(l []any, col string) (map[string]bool, bool) {
	vals := make(map[string]bool, len(l))
	for _, r := range l {
		v := r.(map[string]any)[col]
		switch v.(type) {
		case string, bool, json.Number:
		default:
			return nil, false // missing (nil), or no value a row is named by
		}
		k := encode(v)
		if vals[k] {
			return nil, false
		}
		vals[k] = true
	}
	return vals, true
}

// nullRestless returns snapshot s with the values at places (restlessPlaces)
// set to null; s when there are none or it does not decode.
func nullRestless(s string, places [][]string) string {
	if len(places) == 0 {
		return s
	}
	v, err := decodeState(s)
	if err != nil {
		return s
	}
	for _, p := range places {
		nullAt(v, p)
	}
	return encode(v)
}

// nullAt sets the value at path in v to null: a field of an object,
// where the object is there (a key that comes and goes is there as null),
// in each row a rowSelect segment names.
func nullAt(v any, path []string) {
	if len(path) == 0 {
		return
	}
	seg := path[0]
	if pre, ok := strings.CutPrefix(seg, linePrefix); ok {
		// Each line that begins so is read as its beginning alone, in
		// place (the list shares its array with its parent's value).
		if l, ok := v.([]any); ok {
			for i, e := range l {
				if s, ok := e.(string); ok && strings.HasPrefix(s, pre) {
					l[i] = pre
				}
			}
		}
		return
	}
	if sel, ok := strings.CutPrefix(seg, rowSelect); ok {
		l, ok := v.([]any)
		if !ok {
			return
		}
		if sel == "" {
			if len(l) == 1 {
				nullAt(l[0], path[1:])
			}
			return
		}
		col, key, _ := strings.Cut(sel, "\x00")
		for _, r := range l {
			if m, ok := r.(map[string]any); ok && encode(m[col]) == key {
				nullAt(m, path[1:])
			}
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if len(path) == 1 {
		m[seg] = nil
		return
	}
	nullAt(m[seg], path[1:])
}

// restlessName is place p in words: accounts[id=acme].last_seen.
func restlessName(p []string) string {
	var b strings.Builder
	for _, seg := range p {
		if pre, ok := strings.CutPrefix(seg, linePrefix); ok {
			fmt.Fprintf(&b, "[the line %q…]", clip(pre, 40))
			continue
		}
		if sel, ok := strings.CutPrefix(seg, rowSelect); ok {
			if sel == "" {
				b.WriteString("[its only row]")
				continue
			}
			col, key, _ := strings.Cut(sel, "\x00")
			fmt.Fprintf(&b, "[%s=%s]", col, clip(key, 40))
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// restlessNote is the baseline trace's note for places names, left out of
// every state (restlessBefore), learned in d.
func restlessNote(names []string, d time.Duration) string {
	return fmt.Sprintf("State's %s changed by itself twice or more in the %d ms after Setup and the Settle, before the agent ran: taken for what the world changes on its own (a heartbeat, a lease renewed), it is read as null in every state this suite compares, so a write whose only effect is there is not seen; keep such places out of State for the suite to judge them",
		strings.Join(names, ", "), d.Milliseconds())
}

// blindAbsorbed is the note of a scenario whose repeats the state
// compared found to change nothing, in a suite that reads some of State's
// places as null (restlessBefore): the repeats' own changes there, if
// any, were not seen, and the scenario says so beside the verdict, as
// the baseline says why. "" when no repeat was judged by the state or
// nothing is left out.
func (s *Suite) blindAbsorbed(tr *Trace) string {
	if len(s.restless) == 0 {
		return ""
	}
	var ids []string
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Repeat == RepeatAbsorbed && (o.JudgedBy == JudgedByState || o.JudgedBy == JudgedByEndState) {
			ids = append(ids, o.ID)
		}
	}
	if len(ids) == 0 {
		return ""
	}
	names := make([]string, len(s.restless))
	for i, p := range s.restless {
		names[i] = restlessName(p)
	}
	what := "repeat " + ids[0] + " was"
	if len(ids) > 1 {
		what = "repeats " + strings.Join(ids, ", ") + " were"
	}
	return fmt.Sprintf("%s judged to change nothing by a state that leaves out %s, which changed by itself after Setup (the baseline's note): a second effect there alone would not be seen",
		what, strings.Join(names, ", "))
}
