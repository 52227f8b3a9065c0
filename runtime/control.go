package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// A control run: the world with no agent. A heartbeat in State slower than
// the looks that learn restless places (the baseline's end read again for
// 100 ms, settledbeat.go's look before a Settle's agent) is never learned:
// a worker's last_seen bumped every 130 ms in a row of its own, beside an
// HTTP service that answers in 40 ms, beat inside the window of a correct
// charge's repeat, and the repeat was a duplicate_write ("the repeat
// changed the state: workers[0].last_seen: 5 → 6") in crash_restart and
// duplicate_delivery/sequential on every run (red team rQ, both builds).
//
// So where a repeat is about to be counted on its window (or an
// overlapped cluster against one execution's, or the end at the places its
// window changed), and that window changed no value that a window of the
// baseline's writes changed, the suite asks the world which of the values
// it changed it changes by itself: it runs Setup (and the Settle, for
// what Setup set going to land first), reads State every 5 ms with no
// agent running, for up to twice the time from the scenario's start to
// the end of the repeat's window (at least controlMin, at most
// controlMax; less once every value asked about changed twice), and runs
// Teardown. A value that changed twice or more there, after the first
// 100 ms, changes by itself (Setup's fixture charges, booked by its
// worker once it returned, changed a balance twice: not a heartbeat;
// TestTheLookForAHeartbeatHidesNothingTheCallsChange). With the values that changed there left out, where the
// repeat's window changed nothing, or went as a gap of the baseline did
// (the world's own work: a worker of Setup's mailing what the first call
// queued, landing inside the window), or the cluster made one execution's
// change, and, judged by the end, the end is the baseline's, the repeat
// is unjudged and the scenario inconclusive, with a note naming the
// values: whether the repeat changed them too cannot be told. Never
// absorbed. A second mail, a second charge, a count of the tool's calls
// bumped again change nothing with no agent running, and stay duplicates
// (TestAControlRunLeavesACountOnlyTheAgentChangesJudged); a value the
// baseline's own windows changed (a row's updated_at that the write sets)
// is the write's, and the control is not asked.
//
// The control runs only when such a finding is made, after the scenario's
// Teardown, and what it saw is kept for the suite: Setup runs once more
// than the scenarios (once more again where a later finding asks about a
// value the first never saw change, for longer). Not for a scenario run
// in a testing/synctest bubble, nor after a hook stalled; where the
// control's Setup or State fails, the findings stand.

// controlMin and controlMax bound how long a control run reads State.
// A value changes by itself there where it changed twice or more, both
// after controlSettleIn: what Setup set going that lands once, or twice
// at once (two fixture charges its worker books), is not a heartbeat.
const (
	controlMin      = 500 * time.Millisecond
	controlMax      = 5 * time.Second
	controlSettleIn = endCalibrate
	// controlSettleMax bounds the Settle a control run begins with.
	controlSettleMax = time.Second
)

// controlSeen is what the suite's control runs saw.
type controlSeen struct {
	// changed holds the places (pathKey) that changed with no agent.
	changed map[string]bool
	// watched is the longest a control run read State for, to its bound;
	// at is when, after its first read, each of changed first changed.
	watched time.Duration
	at      map[string]time.Duration
	// failed says why a control run could not be made (Setup or State
	// failed): the findings stand.
	failed string
	// writes are the places the baseline's writes changed in their
	// windows (writesOf).
	writes map[string]bool
}

// byItselfAsk returns the values a duplicate or not_idempotent finding f
// rests on that no window of the baseline's writes changed, to ask a
// control run about, where its every repeat was judged by its own window
// (or, overlapped, against one execution's, or by the end at the places
// its window changed) and changed no value a baseline's window changed;
// and the longest time from the run's start to the end of those windows.
// nil where f rests on anything else.
func (s *Suite) byItselfAsk(f *Finding, tr *Trace) ([][]string, time.Duration) {
	if s.base == nil || f.Severity != SeverityError || f.Code != CodeDuplicateWrite && f.Code != CodeNotIdempotent || len(f.Calls) < 2 || len(f.Follows) > 0 {
		return nil, 0
	}
	writes := s.control.writesOf(s.base)
	var places [][]string
	seen := map[string]bool{}
	// ask adds the values in which x and y differ to places, and says
	// whether none of them is a write's.
	ask := func(x, y string) bool {
		for _, p := range valuePlaces(x, y) {
			k := pathKey(p)
			if writes[k] {
				return false
			}
			if !seen[k] {
				seen[k] = true
				places = append(places, p)
			}
		}
		return true
	}
	var at time.Duration
	for _, id := range f.Calls[1:] {
		o := traceOp(tr, id)
		if o == nil || !o.Overlapped && !o.stateSeen() {
			return nil, 0
		}
		before, after := o.stateWindow()
		if before == "" || after == "" || before == after {
			return nil, 0
		}
		switch {
		case o.Overlapped && o.JudgedBy == JudgedByOneExecution:
			// Places the cluster changed beyond one execution's.
			one := s.baseWindowOf(o)
			if one == nil {
				return nil, 0
			}
			for _, p := range slices.Concat(valuePlaces(before, after), valuePlaces(one[0], before), valuePlaces(one[1], after)) {
				if k := pathKey(p); !writes[k] && !seen[k] {
					seen[k] = true
					places = append(places, p)
				}
			}
		case o.Overlapped:
			return nil, 0
		case o.JudgedBy == JudgedByState:
			if !ask(before, after) {
				return nil, 0
			}
		case o.JudgedBy == JudgedByEndState:
			if !ask(before, after) || tr.end == "" || s.base.end == "" || !ask(s.base.end, tr.end) {
				return nil, 0
			}
		default:
			return nil, 0
		}
		if !o.CompletedAt.IsZero() && !tr.StartedAt.IsZero() {
			at = max(at, o.CompletedAt.Sub(tr.StartedAt))
		}
	}
	return places, at
}

// byItselfShown reports whether, with the values self (pathKey) that the
// world changes by itself left out, every repeat of f rests on nothing:
// its window changed nothing else, or went as a gap of the baseline did
// (the world's own work, a mail a worker of Setup's sent); overlapped, it
// made one execution's change; judged by the end, the end differs from
// the baseline's in nothing else. It returns those values.
func (s *Suite) byItselfShown(f *Finding, tr *Trace, asked [][]string, self map[string]bool) ([][]string, bool) {
	var ps [][]string
	for _, p := range asked {
		if self[pathKey(p)] {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil, false
	}
	out := func(x string) string { return nullRestless(x, ps) }
	// wentAsGap says whether the baseline went from x to y, read through
	// out, between its calls.
	wentAsGap := func(x, y string) bool {
		return slices.ContainsFunc(s.base.gaps, func(g [2]string) bool { return out(g[0]) == x && out(g[1]) == y })
	}
	for _, id := range f.Calls[1:] {
		o := traceOp(tr, id)
		before, after := o.stateWindow()
		b, a := out(before), out(after)
		switch {
		case o.Overlapped:
			one := s.baseWindowOf(o)
			b0, a0 := out(one[0]), out(one[1])
			switch {
			case b == b0 && (a == a0 || wentAsGap(a0, a)):
				// One execution's change, and the rest the world's.
			case b != b0 && describeChange(b, a, -1) == describeChange(b0, a0, -1):
				// One execution's change, from elsewhere.
			default:
				return nil, false
			}
		case b != a && !wentAsGap(b, a):
			return nil, false
		}
		if o.JudgedBy == JudgedByEndState && out(tr.end) != out(s.base.end) {
			return nil, false
		}
	}
	return ps, true
}

// byItselfEndAsk returns, for a duplicate or not_idempotent finding f
// whose every repeat was judged by a window (its own, or, overlapped, a
// cluster's against one execution's, or the end at the places its window
// changed), in a run with no Settle, the values in which the run's end
// differs from the baseline's, to ask a control run about, where none of
// them is a value a window of the baseline's writes changed; and the
// longest time from the run's start to the end of those windows. Where the
// world changes every one of them by itself, the run ended as one
// delivery did, and the window's change may be the first execution's
// effect landing late (a mail a worker of Setup's sent what the first
// call queued, inside the retry's window, beside a heartbeat in a row of
// its own: a duplicate_write of the correct agent in lost_acknowledgement
// and duplicate_delivery/concurrent, red team rQ's welcome worker;
// TestAHeartbeatBesideALateMailIsAskedOfAControlRun). nil otherwise.
func (s *Suite) byItselfEndAsk(f *Finding, tr *Trace) ([][]string, time.Duration) {
	if s.base == nil || s.cfg.settle != nil || f.Severity != SeverityError || f.Code != CodeDuplicateWrite && f.Code != CodeNotIdempotent || len(f.Calls) < 2 || len(f.Follows) > 0 {
		return nil, 0
	}
	if tr.end == "" || s.base.end == "" || tr.end == s.base.end {
		return nil, 0
	}
	var at time.Duration
	for _, id := range f.Calls[1:] {
		o := traceOp(tr, id)
		if o == nil || !o.Overlapped && !o.stateSeen() {
			return nil, 0
		}
		switch o.JudgedBy {
		case JudgedByState, JudgedByOneExecution, JudgedByEndState:
		default:
			return nil, 0
		}
		if !o.CompletedAt.IsZero() && !tr.StartedAt.IsZero() {
			at = max(at, o.CompletedAt.Sub(tr.StartedAt))
		}
	}
	writes := s.control.writesOf(s.base)
	places := valuePlaces(s.base.end, tr.end)
	for _, p := range places {
		if writes[pathKey(p)] {
			return nil, 0
		}
	}
	if len(places) == 0 || nullRestless(tr.end, places) != nullRestless(s.base.end, places) {
		// The ends differ in more than values: a row or an entry one
		// has and the other lacks (a second mail), which no value of a
		// heartbeat explains.
		return nil, 0
	}
	return places, at
}

// byItselfEndShown reports whether the world changes by itself (self,
// pathKey) every one of the values asked, in which the run's end differs
// from the baseline's (byItselfEndAsk), and returns them.
func (s *Suite) byItselfEndShown(asked [][]string, self map[string]bool) ([][]string, bool) {
	if len(asked) == 0 || slices.ContainsFunc(asked, func(p []string) bool { return !self[pathKey(p)] }) {
		return nil, false
	}
	return asked, true
}

// baseWindowOf returns the window of the baseline's first execution of
// o's op and identity; nil where it has none.
func (s *Suite) baseWindowOf(o *Operation) *[2]string {
	for i := range s.base.Ops {
		b := &s.base.Ops[i]
		if b.Name == o.Name && b.Identity == o.Identity && b.stateSeen() {
			before, after := b.stateWindow()
			if before == "" || after == "" {
				return nil
			}
			return &[2]string{before, after}
		}
	}
	return nil
}

// writesOf returns the places (pathKey) that the writes of baseline base
// changed in their own windows, decoded once a suite.
func (c *controlSeen) writesOf(base *Trace) map[string]bool {
	if c.writes != nil {
		return c.writes
	}
	c.writes = map[string]bool{}
	for i := range base.Ops {
		if e := base.Ops[i].effect(); e != nil && e.before != "" && e.after != "" && e.before != e.after {
			for _, p := range valuePlaces(e.before, e.after) {
				c.writes[pathKey(p)] = true
			}
		}
	}
	return c.writes
}

// byItself leaves unjudged the repeats of res's findings that rest only on
// values the world changes with no agent running (a control run), after
// the scenario's Teardown.
func (s *Suite) byItself(ctx context.Context, res *Result, tr *Trace) {
	if res.Clock == ClockVirtual || s.hookStall != "" || s.cfg.state == nil || tr == nil {
		return
	}
	kept := res.Findings[:0:0]
	changed := false
	for i := range res.Findings {
		f := &res.Findings[i]
		asked, at := s.byItselfAsk(f, tr)
		var ps [][]string
		shown := false
		if len(asked) > 0 {
			s.askControl(ctx, asked, min(max(2*at, controlMin), controlMax))
			ps, shown = s.byItselfShown(f, tr, asked, s.control.changed)
		}
		byEnd := false
		if !shown {
			if asked, at := s.byItselfEndAsk(f, tr); len(asked) > 0 {
				s.askControl(ctx, asked, min(max(2*at, controlMin), controlMax))
				ps, shown = s.byItselfEndShown(asked, s.control.changed)
				byEnd = shown
			}
		}
		if !shown {
			kept = append(kept, *f)
			continue
		}
		changed = true
		for _, id := range f.Calls[1:] {
			if o := traceOp(tr, id); o != nil {
				o.Repeat, o.JudgedBy = "", ""
			}
		}
		res.Duplicates = slices.DeleteFunc(res.Duplicates, func(d Duplicate) bool { return slices.Equal(d.Calls, f.Calls) })
		names := make([]string, len(ps))
		var by time.Duration
		for j, p := range ps {
			names[j] = restlessName(p)
			by = max(by, s.control.at[pathKey(p)])
		}
		slices.Sort(names)
		if byEnd {
			tr.Notes = append(tr.Notes, fmt.Sprintf("%s (a repeat of %s) was not judged: what its window changed, one execution changes, but the run ended as one delivery did in the baseline except for %s, which no write of the baseline changed in its window and which the world changes by itself (a control run, Setup and then State read with no agent running, saw it change twice within %v: a heartbeat, a worker's last-seen mark); what the window held may be the first execution's effect landing late (a worker's), and whether the repeat did it again cannot be told; give a Settle that waits for that work (testkit.SettleUntil), or leave such values out of State, for the suite to judge the repeat",
				strings.Join(f.Calls[1:], ", "), f.Ops[0], clip(strings.Join(names, ", "), maxChange/2), by.Round(time.Millisecond)))
			continue
		}
		tr.Notes = append(tr.Notes, fmt.Sprintf("%s (a repeat of %s) was not judged: but for %s, which no write of the baseline changed in its window and which the world changes by itself (a control run, Setup and then State read with no agent running, saw it change twice within %v: a heartbeat, a worker's last-seen mark), its window changed nothing, or what the world did by itself in the baseline; whether the repeat changed it too cannot be told; leave such values out of State for the suite to judge the repeat",
			strings.Join(f.Calls[1:], ", "), f.Ops[0], clip(strings.Join(names, ", "), maxChange/2), by.Round(time.Millisecond)))
	}
	if changed {
		res.Findings = kept
		res.Inconclusive = true
	}
}

// askControl runs a control run, where the ones before did not see every
// one of places change and did not watch for bound.
func (s *Suite) askControl(ctx context.Context, places [][]string, bound time.Duration) {
	if !slices.ContainsFunc(places, func(p []string) bool { return !s.control.changed[pathKey(p)] }) {
		return
	}
	if s.control.failed != "" || s.control.watched >= bound {
		return
	}
	s.controlRun(ctx, places, bound)
}

// controlRun runs Setup, reads State every endPoll until every one of want
// changed or bound passed, and runs Teardown; what changed is kept in
// s.control.
func (s *Suite) controlRun(ctx context.Context, want [][]string, bound time.Duration) {
	c := &s.control
	if c.changed == nil {
		c.changed, c.at = map[string]bool{}, map[string]time.Duration{}
	}
	var setupsDone atomic.Int32
	if setup := s.cfg.setup(&setupsDone); setup != nil {
		returned := false
		defer func() {
			if !returned {
				// Setup ended its goroutine (t.FailNow): the Teardowns
				// of the Setups before it still run, as in a scenario.
				_ = s.teardownAfterSetup(ctx, int(setupsDone.Load()))
			}
		}()
		err := s.callHookIn(newWorld(false), "Setup", setup, ctx, false)
		returned = true
		if err != nil {
			c.failed = "setup: " + errorText(err)
			_ = s.teardownAfterSetup(ctx, int(setupsDone.Load()))
			return
		}
	}
	defer func() {
		if teardown := s.cfg.teardown(-1); teardown != nil {
			if err := s.callHook(nil, "Teardown", teardown, ctx); err != nil && c.failed == "" {
				c.failed = "teardown: " + errorText(err)
			}
		}
	}()
	// A State that reads with StateContext is given a context that ends
	// after the stall bound and the watch: the control waits for no
	// agent.
	cctx, cancel := context.WithTimeout(ctx, s.cfg.stallTimeout()+bound)
	defer cancel()
	j := newJudge(cctx, &s.cfg)
	defer j.halt.stop()
	j.leaveOut = s.restless
	if j.settle != nil {
		// What Setup set going (fixture orders its worker books) lands
		// first, as before the look of settledbeat.go. A Settle that
		// waits for what only the agent does (an outbox with a sent
		// row) never says quiet here: it is given controlSettleMax, and
		// the watch goes on without it.
		sctx, stop := context.WithTimeout(cctx, controlSettleMax)
		settle := j.settle
		j.settle = func(context.Context) error { return settle(sctx) }
		_ = j.quiet()
		stop()
	}
	prev, err := j.snapshot()
	if err != nil {
		c.failed = "state: " + errorText(err)
		return
	}
	left := map[string]bool{}
	for _, p := range want {
		if k := pathKey(p); !c.changed[k] {
			left[k] = true
		}
	}
	times := map[string]int{}
	var on time.Duration
	for clock := newPollClock(); on < bound && len(left) > 0; {
		if cctx.Err() != nil {
			break
		}
		on, _ = clock.sleep()
		cur, err := j.snapshot()
		if err != nil {
			c.failed = "state: " + errorText(err)
			return
		}
		if cur == prev {
			continue
		}
		for _, p := range valuePlaces(prev, cur) {
			if k := pathKey(p); !c.changed[k] && on >= controlSettleIn {
				if times[k]++; times[k] == 2 {
					c.changed[k], c.at[k] = true, on
					delete(left, k)
				}
			}
		}
		prev = cur
	}
	if len(left) > 0 {
		c.watched = max(c.watched, on)
	}
}
