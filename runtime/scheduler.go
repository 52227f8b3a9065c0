package runtime

import (
	"fmt"
	goruntime "runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// scheduler is the Gate of interleaving scenarios. Every traced call stops
// at its start and finish gates; the scheduler waits for quiescence (every
// goroutine of the agent blocked), takes the calls waiting at their start
// gates as a round, and releases their gates one at a time in the order
// the schedule chooses, waiting for quiescence after each release. Time is
// counted in ticks, one per release: a call is in flight from the tick of
// its start release to the tick of its finish release.
type scheduler struct {
	rec *recorder
	// quiesce returns once the agent's goroutines are all parked at gates
	// or blocked, or false when the scenario stalled.
	quiesce func() bool
	// choose returns the order of a round of two or more calls; round
	// counts such rounds from 0.
	choose func(round int, shape roundShape) ([]Step, error)
	// realtime says quiesce reads the goroutines of the process (no
	// bubble): see goroutines.go.
	realtime bool
	// twins is set for concurrent duplicate delivery: a call's start
	// and the starts of the same call (op and arguments) of the other
	// deliveries that follow it in the round's order are released
	// together (play).
	twins bool
	// crashFirst is set for crash_restart: in the round of the call the
	// crash follows, that call runs first and alone (crashFirstOrder).
	crashFirst bool

	mu       sync.Mutex
	waiting  []*gateWait
	signal   chan struct{}
	tick     int
	arrivals int
	// transit counts the calls handed to a server in the process that
	// have not reached it (Sending); sent counts each hand-off and each
	// arrival, so that a look at the goroutines that one straddled is
	// not taken for quiet (realtimeQuiesce, knownQuiet).
	transit int
	sent    int
	sentAt  time.Time // when sent last grew
	bypass  bool
	stalled bool
	// busy is what the last look for quiet found still going (a
	// goroutine, and why it counts as busy), or "" when it was quiet: a
	// stall names what the gates wait for (held).
	busy string

	schedule Schedule
	shapes   []roundShape
	err      error  // the schedule did not fit the agent
	hazard   string // why scheduling stopped

	// In a bubble (not realtime), wait is the bubble's own quiescence
	// (synctest.Wait), and bodies are the calls released at their start
	// gates that have not reached their finish gates, with when their
	// tool bodies began on the bubble's clock (bubbleQuiesce). bodyBound
	// bounds how long the clock runs for a body that stays asleep. apart
	// says the twins of a concurrent delivery were released one after the
	// other, the first one's body having slept (play), and apartWhy says
	// where.
	wait      func()
	bodies    map[*Call]time.Time
	bodyBound time.Duration
	apart     bool
	apartWhy  string

	// rounds are each round's calls, numbered as in schedule (legend.go);
	// met holds, for each, the calls that had answered before it was
	// played that meet an after= of one of its calls (prerequisitesMet),
	// nil for most: the rounds are shaped again from both (Suite.Baseline).
	rounds [][]*Call
	met    [][]*Call
	// playing holds the calls of the rounds being played (play nests),
	// so that a call at its start gate that none of them holds, nor was
	// made inside one of them, is known to have become ready while the
	// round ran (newcomers).
	playing []*Call
	// eager is set for the eager twin of a schedule (Schedule.Eager): at
	// a step of a round after which steps remain, the calls that became
	// ready meanwhile play a round of their own there (playNewcomers),
	// before the round's next release, instead of waiting for the round's
	// end. sawReady says such calls came in a run that was not eager, and
	// readyAt how many rounds that run had recorded then (the eager twin's
	// rounds are the same up to there: followed); eagerPlays counts the
	// newcomer rounds an eager run played.
	eager      bool
	sawReady   bool
	readyAt    int
	eagerPlays int
	// outer names the ops the baseline saw make calls inside their own
	// (Suite.outerOps): no order of them is left out (shapeWith).
	outer map[string]bool
}

type gateWait struct {
	c   *Call
	p   Point
	ch  chan struct{}
	gid uint64    // the waiting goroutine, on real time
	at  time.Time // when it reached the gate, on real time
}

func newScheduler(quiesce func() bool, realtime bool, choose func(int, roundShape) ([]Step, error)) *scheduler {
	return &scheduler{quiesce: quiesce, realtime: realtime, choose: choose, signal: make(chan struct{}, 1)}
}

func (s *scheduler) notify() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// Wait implements Gate.
func (s *scheduler) Wait(c *Call, p Point) {
	var gid uint64
	if s.realtime && s.rec.world != nil {
		// Begin read the goroutine when the run keeps it; the wrapper
		// calls Start and Finish from the goroutine that called Begin.
		if gid = c.gid; gid == 0 {
			gid = goroutineID()
		}
		s.rec.world.visit(gid)
		if p == PointFinish {
			s.rec.world.body(gid, false)
		}
	}
	s.mu.Lock()
	if s.bypass {
		if p == PointStart {
			s.rec.number(c)
		}
		s.mu.Unlock()
		return
	}
	if p == PointStart && c.schedLabel() == "" {
		// Joined, the same bytes fmt.Sprintf("%s %s %d") made: the
		// ten-write suite under TestAgent 3,335 to 3,302 allocations
		// (runtime.MemStats over 200 suites, two runs of each build).
		args, _ := c.args().MarshalJSON()
		c.schedPart().label = c.op.Name + " " + string(args) + " " + strconv.Itoa(c.inv.n)
	}
	if gid != 0 && p == PointStart && c.gid != gid {
		c.gid = gid // read by release, under s.mu (Begin set it already)
	}
	if p == PointFinish {
		delete(s.bodies, c) // its tool body returned
	}
	w := &gateWait{c: c, p: p, ch: make(chan struct{}), gid: gid}
	if s.realtime {
		w.at = time.Now()
	}
	s.waiting = append(s.waiting, w)
	s.arrivals++
	s.mu.Unlock()
	s.rec.progress.Add(1)
	s.notify()
	<-w.ch
}

// release opens one gate, stamping the tick.
func (s *scheduler) release(w *gateWait) {
	s.mu.Lock()
	for i, x := range s.waiting {
		if x == w {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	s.tick++
	if w.p == PointStart {
		s.rec.number(w.c)
		w.c.mu.Lock()
		w.c.rec.StartTick = int32(s.tick)
		w.c.mu.Unlock()
		if s.realtime && s.rec.world != nil {
			s.rec.world.body(w.c.gid, true)
		}
		if !s.realtime {
			if s.bodies == nil {
				s.bodies = map[*Call]time.Time{}
			}
			s.bodies[w.c] = time.Now() // the bubble's clock
		}
	} else {
		w.c.mu.Lock()
		w.c.rec.EndTick = int32(s.tick)
		w.c.mu.Unlock()
	}
	s.mu.Unlock()
	s.rec.progress.Add(1)
	close(w.ch)
}

// stop lets every waiting and future call through, in label order.
func (s *scheduler) stop() {
	s.mu.Lock()
	s.bypass = true
	ws := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].c.schedLabel() < ws[j].c.schedLabel() })
	for _, w := range ws {
		if w.p == PointStart {
			s.mu.Lock()
			s.rec.number(w.c)
			s.mu.Unlock()
		}
		close(w.ch)
	}
}

func (s *scheduler) find(c *Call, p Point) *gateWait {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.waiting {
		if w.c == c && w.p == p {
			return w
		}
	}
	return nil
}

// drive schedules until done is closed, or until the scenario stalls
// (then it returns true, with every gate open). It runs in the goroutine
// that owns the run (the root of the bubble, if any).
func (s *scheduler) drive(done <-chan struct{}) (stalled bool) {
	var poll <-chan time.Time
	round := 0
	graced := false // this round's calls waited parkedGrace for others (a bubble)
	for {
		if !s.quiesce() {
			return s.stall()
		}
		select {
		case <-done:
			s.stop()
			return false
		default:
		}
		s.mu.Lock()
		var starts, finishes []*gateWait
		for _, w := range s.waiting {
			if w.p == PointStart {
				starts = append(starts, w)
			} else {
				finishes = append(finishes, w)
			}
		}
		s.mu.Unlock()
		if len(starts)+len(finishes) == 0 {
			// Nothing at a gate and the agent still runs: it waits on
			// something else (a timer, a worker, the network). Block
			// until a gate or the end is reached, watching for a stall
			// on real time; in a bubble, time moves meanwhile.
			var t *time.Timer
			if s.realtime {
				t = time.NewTimer(5 * time.Millisecond)
				poll = t.C
			}
			select {
			case <-s.signal:
			case <-done:
			case <-poll:
				if s.rec.stalled() {
					return s.stall()
				}
			}
			if t != nil {
				t.Stop()
			}
			continue
		}
		// Late finishes (a call that finished after its round) go first.
		if len(finishes) > 0 {
			sort.SliceStable(finishes, func(i, j int) bool { return finishes[i].c.schedLabel() < finishes[j].c.schedLabel() })
			for _, w := range finishes {
				s.release(w)
			}
			continue
		}
		if !s.realtime && !graced {
			// In a bubble, a goroutine parked on a timer of the agent's
			// own (a stagger before a dependent call) is durably blocked,
			// and quiet: when one is parked so, let virtual time run for
			// parkedGrace, as on real time it counts as busy that long
			// (world.quiet), and take the round once the bubble is still
			// again. Virtual time runs only then: a deadline the agent
			// sets around its calls runs out at the gates otherwise.
			graced = true
			if s.rec.world.parkedAgent() {
				time.Sleep(parkedGrace)
				continue
			}
		}
		graced = false
		calls := make([]*Call, len(starts))
		for i, w := range starts {
			calls[i] = w.c
		}
		if stalled, stop := s.play(calls, &round); stop {
			return stalled
		}
	}
}

// play runs one round: the calls waiting at their start gates, released in
// the order the schedule chooses (when there are two or more). At a call's
// finish step, the calls made inside it that wait at their start gates (a
// tool calling a tool, whether it waits for them or leaves them running)
// play a round of their own there, before the step: the calls made inside
// a call of the round are in flight with the calls of the round that the
// order has started and not finished. stop is true when drive must return
// (with stalled).
func (s *scheduler) play(calls []*Call, round *int) (stalled, stop bool) {
	met := prerequisitesMet(s.rec, calls)
	shape := shapeWith(calls, s.outer, met) // sorts calls by label
	var order []Step
	if len(calls) == 1 {
		order = []Step{{Call: 0}, {Call: 0, Finish: true}}
	} else {
		var err error
		order, err = s.choose(*round, shape)
		if err != nil {
			s.err = err
			s.stop()
			return false, true
		}
		if s.crashFirst {
			order = s.crashFirstOrder(calls, order)
		}
		s.schedule.Rounds = append(s.schedule.Rounds, order)
		s.shapes = append(s.shapes, shape)
		s.rounds = append(s.rounds, calls)
		s.met = append(s.met, met)
		*round++
	}
	s.playing = append(s.playing, calls...)
	defer func(n int) { s.playing = s.playing[:n] }(len(s.playing) - len(calls))
	var missed []string    // steps whose call had not reached its gate
	var early map[int]bool // steps played with an earlier one (twins)
	for i := 0; i < len(order); i++ {
		if early[i] {
			continue
		}
		st := order[i]
		c := calls[st.Call]
		p := PointStart
		if st.Finish {
			p = PointFinish
		}
		w := s.find(c, p)
		// The calls made inside c play here whether or not c waits for
		// them: a tool that returns and leaves a call it made running
		// (a goroutine it does not wait for) has that call in flight
		// with the round as much as one that waits.
		for p == PointFinish {
			inner := s.madeInside(c)
			if len(inner) == 0 {
				break
			}
			if stalled, stop := s.play(inner, round); stop {
				return stalled, true
			}
			w = s.find(c, p)
		}
		if w == nil {
			// The call never reached this gate (it panicked, or
			// it still runs): it is released when it arrives.
			c.mu.Lock()
			ended := c.rec.ended // it failed at its start gate, or panicked
			c.mu.Unlock()
			if len(calls) > 1 && !ended {
				missed = append(missed, st.String()+" ("+c.op.Name+")")
			}
			continue
		}
		// Concurrent duplicate delivery: the same call of each delivery
		// starts at once, as the lockstep starts them, so that their
		// tools' bodies overlap and a race inside one tool (a check,
		// then an insert, with no unique constraint) can show. Released
		// one by one, each body ran to its finish gate before the next
		// began, and such a race was never found. Each twin reaches the
		// judge after the one before it (judgeAfter), so that which is
		// the repeat is the same every run.
		var twins []*gateWait
		for j := i + 1; s.twins && !st.Finish && j < len(order); j++ {
			t := calls[order[j].Call]
			if order[j].Finish || early[j] || !twin(c, t) {
				continue
			}
			if early == nil {
				early = map[int]bool{}
			}
			early[j] = true
			if tw := s.find(t, PointStart); tw != nil {
				twins = append(twins, tw)
				continue
			}
			t.mu.Lock()
			ended := t.rec.ended
			t.mu.Unlock()
			if !ended {
				missed = append(missed, order[j].String()+" ("+t.op.Name+")")
			}
		}
		prev := c
		for _, tw := range twins {
			judgeAfter(tw.c, prev)
			prev = tw.c
		}
		s.release(w)
		for _, tw := range twins {
			if !s.realtime && s.wait != nil {
				// In a bubble, a twin starts beside a body that sleeps
				// only at the risk of a stall no one can end (a lock
				// held across the sleep: see bubbleQuiesce). So the
				// first body runs until it blocks; if it sleeps, the
				// clock runs until it is done, and the twins do not
				// overlap: the scenario is run again on real time
				// (Suite.runListed), where they do.
				s.wait()
				if asleep := s.asleepBodies(); len(asleep) > 0 {
					if !s.apart {
						s.apart, s.apartWhy = true, asleep[0]
					}
					if !s.quiesce() {
						return s.stall(), true
					}
				}
			}
			s.release(tw)
		}
		if !s.quiesce() {
			return s.stall(), true
		}
		if i < len(order)-1 {
			if stalled, stop := s.playNewcomers(round); stop {
				return stalled, true
			}
		}
	}
	if len(missed) > 0 {
		// The tool of a call waited for something only a later step
		// lets happen (a reservation that waits for the charge of
		// the same turn): the calls ran in another order than the
		// schedule's, which the trace's ticks show.
		s.rec.addNote(fmt.Sprintf("interleaving: the schedule %s could not be followed: at step %s the call was still running, not at its gate (its tool waits for something: another call of the round, a call of its own, a worker; or it is slow: a timer, I/O), so that step came later than the schedule says", Schedule{Rounds: [][]Step{order}}.String(), strings.Join(missed, ", ")))
	}
	// A call that failed at its start gate never reaches its finish
	// gate; it belonged to the batch the agent dispatched, so it is in
	// flight until the round's last release.
	s.mu.Lock()
	for _, c := range calls {
		c.mu.Lock()
		if c.rec.StartTick > 0 && c.rec.EndTick == 0 && s.find0(c) == nil {
			c.rec.EndTick = int32(s.tick)
		}
		c.mu.Unlock()
	}
	s.mu.Unlock()
	return false, false
}

// eagerGenerations bounds how many times, at one step of a round, the
// calls that became ready play (playNewcomers): each play may make others
// ready (a branch's next call), and a goroutine that calls a tool in a
// loop until a held call answers would make them forever.
const eagerGenerations = 4

// playNewcomers is called at a step of a round after which steps remain,
// once the scenario is quiet. The calls waiting at their start gates then
// that no round being played holds, nor was made inside one of its calls,
// became ready while the round ran: a worker of a pool freed by a finish,
// a branch's next call after its first returned. The agent made them
// without waiting for the answers still held, so in production they may
// reach their servers before those answers come back. Without eager they
// wait for the round's end, as the next round, and only the scheduler's
// choice kept them from being in flight with the calls still held at
// their finish gates (a dependent call beside its prerequisite, a second
// write of one entity): a run that sees them says so (sawReady), and the
// exploration runs its eager twin, where they play a round of their own
// here, as the calls made inside a call do at its finish.
func (s *scheduler) playNewcomers(round *int) (stalled, stop bool) {
	for g := 0; g < eagerGenerations; g++ {
		ready := s.newcomers()
		if len(ready) == 0 {
			return false, false
		}
		if !s.eager {
			if !s.sawReady {
				s.sawReady, s.readyAt = true, len(s.rounds)
			}
			return false, false
		}
		s.eagerPlays++
		if stalled, stop := s.play(ready, round); stop {
			return stalled, true
		}
	}
	return false, false
}

// newcomers returns the calls waiting at their start gates that no round
// being played holds, and that were not made inside a call of one (those
// play at that call's finish step), in label order.
func (s *scheduler) newcomers() []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Call
	for _, w := range s.waiting {
		if w.p != PointStart || slices.Contains(s.playing, w.c) {
			continue
		}
		if slices.ContainsFunc(s.playing, func(o *Call) bool { return w.c.madeInside(o) }) {
			continue
		}
		out = append(out, w.c)
	}
	return out
}

// madeInside returns the calls waiting at their start gates that were made
// inside c, at any depth.
func (s *scheduler) madeInside(c *Call) []*Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var inner []*Call
	for _, w := range s.waiting {
		if w.p == PointStart && w.c.madeInside(c) {
			inner = append(inner, w.c)
		}
	}
	return inner
}

// stall names what is blocked, then opens every gate.
func (s *scheduler) stall() bool {
	s.mu.Lock()
	stopped := s.bypass
	s.mu.Unlock()
	if !stopped {
		s.hazard = s.rec.describeStall()
	}
	s.stalled = true
	s.stop()
	return true
}

// held describes the calls waiting at gates.
func (s *scheduler) held() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, w := range s.waiting {
		where := "start"
		if w.p == PointFinish {
			where = "finish"
		}
		out = append(out, fmt.Sprintf("%s of delivery %d waits at its %s gate", w.c.op.Name, w.c.inv.n, where))
	}
	if t := s.inTransitLocked(); t != "" {
		out = append(out, t)
	}
	sort.Strings(out)
	if len(out) > 0 && s.busy != "" {
		// What the gates wait for: the scenario to go quiet, which
		// the goroutine named here kept it from. Without it, a stall
		// listed the idle timer loops of a job queue's client, and
		// the call that waited, but not why (rtN F9).
		out[len(out)-1] += " for the scenario to go quiet (each of its goroutines blocked or at a gate), and it never was: at the last look " + s.busy + " was still busy"
	}
	return out
}

// schedSamples are the scheduler's goroutine counts of runtime/metrics.
var schedSamples = sync.Pool{New: func() any {
	return &[]metrics.Sample{{Name: "/sched/goroutines/runnable:goroutines"}, {Name: "/sched/goroutines/running:goroutines"}}
}}

// othersRunning reports whether any goroutine but the caller is running or
// runnable in the process: a hint, read in ~100ns, that a snapshot would
// find the agent busy.
func othersRunning() bool {
	sp := schedSamples.Get().(*[]metrics.Sample)
	defer schedSamples.Put(sp)
	s := *sp
	metrics.Read(s)
	n := uint64(0)
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			n += x.Value.Uint64()
		}
	}
	return n > 1
}

// find0 is find with s.mu held, for a finish wait.
func (s *scheduler) find0(c *Call) *gateWait {
	for _, w := range s.waiting {
		if w.c == c && w.p == PointFinish {
			return w
		}
	}
	return nil
}

// realtimeQuiesce waits until every goroutine of the scenario is parked at
// a gate or blocked, no call is in transit through goroutines older than
// the scenario (Sending), and no gate was reached or released, nor a call
// handed off or arrived, while it looked (see goroutines.go). It returns
// false when the scenario stalled or the scheduler was stopped.
func (s *scheduler) realtimeQuiesce() bool {
	sleep := 2 * time.Microsecond
	yields := 64
	for {
		// While goroutines are running or runnable (a cheap count), the
		// agent may not be quiet: yield to them before paying for a
		// snapshot, and stop as soon as the quiet is known without one
		// (quietgates.go). The count sees every goroutine of the process,
		// the GC's workers too, so it can stay up long after the agent
		// parked: with GOMAXPROCS=2, the 64 yields were a seventh of a
		// serial agent's suite.
		for i := 0; ; i++ {
			quiet, stopped := s.knownQuiet()
			if stopped {
				return false
			}
			if quiet {
				return true
			}
			if i >= yields || !othersRunning() {
				break
			}
			goruntime.Gosched()
		}
		yields = 64
		// The count is read after yielding: a call that reached its gate
		// meanwhile is seen by the snapshot, not by a second one.
		s.mu.Lock()
		before, stopped := s.arrivals+s.tick+s.sent, s.bypass
		transit, lapsed := s.transitHeldLocked()
		held := heldAtGates(func(yield func(*Call) bool) {
			for _, w := range s.waiting {
				if !yield(w.c) {
					return
				}
			}
		})
		var atGates []uint64
		for _, w := range s.waiting {
			held.arrivals = append(held.arrivals, w.at)
			atGates = append(atGates, w.gid)
		}
		s.mu.Unlock()
		slices.SortFunc(held.arrivals, time.Time.Compare)
		if stopped {
			return false
		}
		if transit > 0 {
			// A call of the agent is on its way to a server in the
			// process, carried by a goroutine older than the scenario
			// (Sending): the agent is not quiet, whatever its own
			// goroutines do. Its arrival, or the end of the wait for
			// it, ends the pause.
			s.mu.Lock()
			s.busy = "a call handed to a server in the process that had not reached it"
			s.mu.Unlock()
			if s.rec.stalled() {
				return false
			}
			s.pause(time.Millisecond)
			yields = 0
			continue
		}
		if left := s.rec.world.bodyLeft(bodyFresh, atGates); left > 0 && len(held.handlers) == 0 {
			// A call released at its start gate began its tool body a
			// moment ago: its goroutine is busy whatever it does
			// (gInfo.busy), and nothing can excuse it yet (a call that
			// reached its gate since, which must have waited there for
			// arrivalSettle; an HTTP handler of the process, none of
			// which has a call parked, owing its answer: one blocked on
			// a lock is read after bodyFresh). The scenario is not quiet,
			// and a snapshot (a stop of the world: a few hundred
			// microseconds, milliseconds on a loaded machine) would
			// only say so. Wait for a call to reach a gate instead:
			// with an agent whose tools call HTTP services, most of a
			// scenario's snapshots were taken while an answer was on
			// its way.
			s.mu.Lock()
			s.busy = "a tool body that had just begun"
			s.mu.Unlock()
			if s.rec.stalled() {
				return false
			}
			s.pause(left)
			yields = 0 // the pause let the others run
			continue
		}
		var buf [16]uint64
		quiet := s.rec.world.quietAtGates(s.parked(buf[:0]))
		onIO := false
		if !quiet {
			var why string
			quiet, why, onIO = s.rec.world.quiet(0, held)
			s.mu.Lock()
			s.busy = why
			s.mu.Unlock()
		}
		s.mu.Lock()
		after := s.arrivals + s.tick + s.sent
		transit, lapsed = s.transitHeldLocked()
		s.mu.Unlock()
		if quiet && before == after && transit == 0 {
			s.noteLapsed(lapsed)
			return true
		}
		if s.rec.stalled() {
			return false
		}
		if onIO {
			// The network will end the wait, most often with the call
			// at its finish gate, which ends the pause: looking again
			// sooner only stops the world meanwhile (a snapshot).
			sleep = time.Millisecond
		}
		s.pause(sleep)
		sleep = min(2*sleep, time.Millisecond)
	}
}

// bubbleQuiesce is the scheduler's quiescence in a bubble: the bubble's
// own (wait, synctest.Wait), and then, while the tool body of a call
// released at its start gate is asleep (asleepBodies), the bubble's clock
// runs until it is not, as on real time, where a goroutine asleep is busy
// (gInfo.busy). A sleep is a durable block, so the bubble alone took the
// agent for quiet and let the next call start beside the sleeping body:
// when that body holds a lock across its sleep (a store locked while a
// slow write sleeps) the next call waits on the lock, which is no durable
// block, so that the bubble's clock stops, the sleep never ends, and
// nothing but the end of the process ends the run (the testkit's
// watchdog: a red team's agent, /tmp/rt24/vt). The tool bodies of a
// round's calls so run one after another in a bubble too, as the listed
// schedule runs them on real time; which calls are in flight together is
// still the schedule's (their gates' ticks).
//
// The clock runs by the scheduler's own wait, which ends when a call
// reaches a gate (notify) or after step, doubled each time up to a
// second: most sleeps end with the call at its finish gate, at the
// sleep's end on the clock. A body asleep after bodyBound of the clock
// (one that polls for what a held call would do) is left asleep, and the
// trace says so.
func (s *scheduler) bubbleQuiesce() bool {
	s.wait()
	var began time.Time
	step := time.Millisecond
	for {
		asleep := s.asleepBodies()
		if len(asleep) == 0 {
			return true
		}
		if began.IsZero() {
			began = time.Now()
		} else if time.Since(began) >= s.bodyBound {
			s.rec.addNote(fmt.Sprintf("virtual time: a tool body was still asleep after %s on the bubble's clock (%s), and the schedule went on beside it", s.bodyBound, strings.Join(asleep, "; ")))
			return true
		}
		t := time.NewTimer(step)
		select {
		case <-s.signal:
		case <-t.C:
		}
		t.Stop()
		step = min(2*step, time.Second)
		s.wait()
	}
}

// asleepBodies describes the tool bodies, in a bubble, whose goroutine is
// asleep (time.Sleep, or a timed wait of a library that retries:
// timedWaits), or waits in a select or a channel receive of the agent's
// own code (gInfo.parked: a select on time.After, a sleep that heeds its
// context) less than bodyGrace after the body began on the bubble's
// clock, as on real time such a body counts as busy that long (gInfo.busy).
// It takes a snapshot only when a released call has not reached its
// finish gate.
func (s *scheduler) asleepBodies() []string {
	s.mu.Lock()
	var ids map[uint64]*Call
	var since map[uint64]time.Time
	for c, at := range s.bodies {
		c.mu.Lock()
		ended := c.rec.ended
		c.mu.Unlock()
		if ended || c.gid == 0 {
			delete(s.bodies, c) // it failed at its start gate, or panicked
			continue
		}
		if ids == nil {
			ids, since = map[uint64]*Call{}, map[uint64]time.Time{}
		}
		ids[c.gid], since[c.gid] = c, at
	}
	s.mu.Unlock()
	if ids == nil {
		return nil
	}
	var out []string
	for _, g := range snapshotSome(func(id, _ uint64) bool { return ids[id] != nil }) {
		c := ids[g.id]
		if c == nil || len(g.funcs) == 0 {
			continue
		}
		st := strings.TrimSuffix(g.state, " (durable)")
		switch {
		case st == "sleep":
		case (st == "select" || st == "chan receive") && timedWait(g.funcs[0]):
		case g.parked() && time.Since(since[g.id]) < bodyGrace:
		default:
			continue
		}
		out = append(out, fmt.Sprintf("%s of delivery %d, %s at %s", c.op.Name, c.inv.n, describeState(st), g.where()))
	}
	sort.Strings(out)
	return out
}

// pause waits for d, or until a call reaches a gate (notify), whichever
// comes first. Most waits for quiet end with that: a tool's call reaching
// its finish gate when its HTTP request was answered. The sleep alone
// noticed it up to a millisecond late, and a scenario of an agent whose
// tools call HTTP services took milliseconds per call. A signal taken
// here is not lost to drive, which reads the waiting calls before it
// waits for one.
func (s *scheduler) pause(d time.Duration) {
	t := time.NewTimer(d)
	select {
	case <-s.signal:
	case <-t.C:
	}
	t.Stop()
}

// knownQuiet reports whether the scenario is quiet by what is known
// without a snapshot (world.quietAtGates), with no call in transit
// (Sending) and no gate reached or released while it looked; stopped when
// the scheduler was.
func (s *scheduler) knownQuiet() (quiet, stopped bool) {
	s.mu.Lock()
	before, stopped := s.arrivals+s.tick+s.sent, s.bypass
	transit, lapsed := s.transitHeldLocked()
	s.mu.Unlock()
	var buf [16]uint64
	if stopped || transit > 0 || !s.rec.world.quietAtGates(s.parked(buf[:0])) {
		return false, stopped
	}
	s.mu.Lock()
	after := s.arrivals + s.tick + s.sent
	s.mu.Unlock()
	if before != after {
		return false, false
	}
	s.noteLapsed(lapsed)
	return true, false
}

// batches assigns batch numbers: connected components of calls in flight
// together, numbered from 1 in tick order; a call alone in flight has
// batch 0. Two calls are in flight together when their intervals
// [StartTick, EndTick] overlap and neither was made inside the other
// (nestingOf): a tool that calls a tool, or a handler of this process
// that serves a tool's HTTP request, is not a batch of two.
func batches(ops []Operation) {
	// A batch holds two calls at least, and only a gate gives calls
	// ticks: most scenarios run without one, and were paying the index
	// and its sort for nothing.
	ticked := 0
	for i := range ops {
		if ops[i].StartTick > 0 {
			ticked++
		}
	}
	if ticked < 2 {
		return
	}
	idx := make([]int, 0, ticked)
	for i := range ops {
		if ops[i].StartTick > 0 {
			idx = append(idx, i)
		}
	}
	// A call that never reached its finish gate (failed at its start gate,
	// or panicked) is in flight for an instant.
	end := func(i int) int {
		if ops[i].EndTick == 0 {
			return ops[i].StartTick
		}
		return ops[i].EndTick
	}
	sort.Slice(idx, func(a, b int) bool { return ops[idx[a]].StartTick < ops[idx[b]].StartTick })
	nest := nestingOf(ops)
	if nest == nil {
		batch := 0
		for i := 0; i < len(idx); {
			last := end(idx[i])
			j := i + 1
			for j < len(idx) && ops[idx[j]].StartTick < last {
				last = max(last, end(idx[j]))
				j++
			}
			if j-i > 1 {
				batch++
				for k := i; k < j; k++ {
					ops[idx[k]].Batch = batch
				}
			}
			i = j
		}
		return
	}
	// With nested calls, the components of the pairs in flight together
	// (union-find over positions in idx).
	root := make([]int, len(idx))
	for i := range root {
		root[i] = i
	}
	find := func(i int) int {
		for root[i] != i {
			root[i] = root[root[i]]
			i = root[i]
		}
		return i
	}
	size := make([]int, len(idx))
	for i := range idx {
		for j := i + 1; j < len(idx) && ops[idx[j]].StartTick < end(idx[i]); j++ {
			if !nest.related(&ops[idx[i]], &ops[idx[j]]) {
				root[find(j)] = find(i)
			}
		}
	}
	for i := range idx {
		size[find(i)]++
	}
	number := map[int]int{}
	for i := range idx {
		r := find(i)
		if size[r] < 2 {
			continue
		}
		if number[r] == 0 {
			number[r] = len(number) + 1
		}
		ops[idx[i]].Batch = number[r]
	}
}

// nesting maps the ID of each call made inside another to that call's ID
// (Operation.Parent, or for a call an HTTP handler of this process made,
// the call whose request it serves: Operation.served); nil when no call of
// the trace was.
type nesting map[string]string

func nestingOf(ops []Operation) nesting {
	var n nesting
	for i := range ops {
		p := ops[i].Parent
		if p == "" {
			p = ops[i].served() // a handler's call inside the request it serves
		}
		if p != "" {
			if n == nil {
				n = nesting{}
			}
			n[ops[i].ID] = p
		}
	}
	return n
}

// related reports whether one of a and b was made inside the other, at any
// depth: they were never in flight together, however their intervals lie.
func (n nesting) related(a, b *Operation) bool {
	return n.inside(a.ID, b.ID) || n.inside(b.ID, a.ID)
}

// inside reports whether call id was made inside call outer, at any depth.
func (n nesting) inside(id, outer string) bool {
	for p, depth := n[id], 0; p != "" && depth < len(n); p, depth = n[p], depth+1 {
		if p == outer {
			return true
		}
	}
	return false
}

// together reports whether a and b were in flight together: in one batch,
// and neither made inside the other.
func (n nesting) together(a, b *Operation) bool {
	return a.Batch != 0 && a.Batch == b.Batch && !n.related(a, b)
}

// crashFirstOrder is order with the call the crash follows, if it is one
// of calls, run as soon as what it waits for has finished, and alone: its
// start, then its finish, after which the crash stops the calls not yet
// started at their start gates. In the listed order every call of a round
// starts, and its tool runs, before any finishes, so a crash after any of
// them left the whole round done, and a restart that checks one of them
// (done, so it skips the rest) was never seen to repeat another; a worker
// that dies right after one of its parallel writes never sends the others.
// The calls are numbered here, in the order order starts them, as order
// would number them: the call the scenario names (post#2) is the same.
func (s *scheduler) crashFirstOrder(calls []*Call, order []Step) []Step {
	target := -1
	for _, st := range order {
		if st.Finish {
			continue
		}
		c := calls[st.Call]
		s.rec.number(c)
		c.mu.Lock()
		if c.fault() == FaultCrash {
			target = st.Call
		}
		c.mu.Unlock()
	}
	if target < 0 {
		return order
	}
	// The calls that finish before the target starts (those it waits
	// for) keep their place; the others started before it now start
	// after its finish.
	at := slices.Index(order, Step{Call: target})
	done := map[int]bool{}
	for _, st := range order[:at] {
		if st.Finish {
			done[st.Call] = true
		}
	}
	moved := make([]Step, 0, len(order))
	for _, st := range order[:at] {
		if done[st.Call] {
			moved = append(moved, st)
		}
	}
	moved = append(moved, Step{Call: target}, Step{Call: target, Finish: true})
	for _, st := range order {
		if st.Call != target && !done[st.Call] { // a done call's steps are all before at
			moved = append(moved, st)
		}
	}
	return moved
}

// twin reports whether b is a's call (its op and arguments) made by another
// delivery: their labels differ only in the delivery (Wait).
func twin(a, b *Call) bool {
	if a.op != b.op || a.inv == b.inv {
		return false
	}
	la, lb := a.schedLabel(), b.schedLabel()
	i, j := strings.LastIndexByte(la, ' '), strings.LastIndexByte(lb, ' ')
	return i >= 0 && i == j && la[:i] == lb[:j]
}

// callSched is what a gate keeps of a call: its own struct, so that a call
// with no gate does not carry it (Call fits a smaller size class).
type callSched struct {
	// label is the call's canonical name under a scheduler: op,
	// arguments, invocation.
	label string
	// judgeAfter is the twin this write reaches the State judge after,
	// and judged is closed once this one has passed it (judgeAfter).
	judgeAfter *Call
	judged     chan struct{}
}

// schedPart returns c's callSched, making it. It is written by the call's
// goroutine as it reaches its gate, or by the gate while the call is held
// there, and read once the gate let it go.
func (c *Call) schedPart() *callSched {
	if c.sched == nil {
		c.sched = new(callSched)
	}
	return c.sched
}

// schedLabel returns the call's label, if any.
func (c *Call) schedLabel() string {
	if c.sched == nil {
		return ""
	}
	return c.sched.label
}
