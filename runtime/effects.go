package runtime

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Effects, not executions. A write executed twice for one identity is a
// duplicate only if the second execution had an effect. Three witnesses can
// say it had none, strongest first:
//
//   - the world (State): a snapshot of its observable state is taken around
//     every write execution; a repeat that left it as it was is absorbed,
//     whatever the op declares, and a repeat of an op declared idempotent
//     that changed it, starting from what an earlier equal execution left,
//     is a not_idempotent finding; a repeat that changed it only by setting
//     back what an earlier equal execution left, after a later write
//     changed it, is judged by the run's end (redone); where every earlier
//     equal execution overlapped other writes, what one execution did in
//     the baseline, where it ran alone, stands for them;
//   - the declaration (Op.Idempotent): a repeat with the same arguments as an
//     earlier execution is absorbed; a repeat with other arguments under the
//     same identity is taken as a change of the first effect (the identity
//     names one thing, the last value set wins), an update. The declaration
//     speaks of equal arguments only: where State shows such a repeat only
//     adding beside what the first execution made, which still stood,
//     restating none of it in its arguments, and the run ended with more
//     there than one delivery, it is a duplicate (addedBeside: a second
//     comment, its text reworded by the retry; set_tags(T-1, [a, b]) after
//     [a] restates a, and is the update);
//   - the sink (MarkReplayed, idem.Store): the call never executed again.
//
// Without any of them every execution counts as an effect. A write that
// failed by itself counts where State saw it change the world (landed),
// or, where it overlapped other writes and has no window of its own, where
// the run ended otherwise than one delivery where such a call changes the
// state (landedTogether). A write that succeeded but changed nothing, before
// a later execution that made the change, does not count where State shows
// that nothing of it landed later (noEffectFirst).

// Repeat values of Operation.Repeat.
const (
	// RepeatAbsorbed: the write repeated an earlier one and had no further effect.
	RepeatAbsorbed = "absorbed"
	// RepeatUpdate: an op declared idempotent was called again for the same
	// identity with other arguments: it changed the first effect, it did
	// not add a second one (by State, or on the declaration alone, as
	// JudgedBy says).
	RepeatUpdate = "update"
	// RepeatDuplicate: the write repeated an earlier one and had an effect
	// of its own.
	RepeatDuplicate = "duplicate"
)

// Judgement values of Operation.JudgedBy: what decided a repeat.
const (
	// JudgedByState: the State snapshots around the call.
	JudgedByState = "state"
	// JudgedByEndState: the calls overlapped in time, or no execution of
	// the op changed the state in its own call (its effect lands at an
	// untraced point: a transaction's commit), so the scenario's end state
	// was compared with what one delivery left (the baseline's).
	JudgedByEndState = "end_state"
	// JudgedByOneExecution: the calls overlapped in time, so what they
	// left together was compared with what one execution of the call left
	// in the baseline.
	JudgedByOneExecution = "one_execution"
	// JudgedByDeclaration: the op's idempotent declaration.
	JudgedByDeclaration = "declared"
	// JudgedByCount: nothing says otherwise, so every execution is an effect.
	JudgedByCount = "count"
)

// CodeNotIdempotent (error): an op declared idempotent changed the world
// when it was repeated with the same arguments: the declaration is wrong.
const CodeNotIdempotent = "not_idempotent"

// State makes the world the judge of every write execution: fn returns a
// snapshot of the world's observable state (the one Setup builds), which is
// compared by value in a deterministic encoding (canonical JSON: maps with
// sorted keys, structs by their exported fields). A repeat of a write that
// left the snapshot as it was is absorbed, not a duplicate, when the suite
// can tell that it changed nothing: the write's first execution was seen
// to change the snapshot, a Settle let the world settle around it, or the
// op is declared idempotent. (When State saw no execution change anything,
// here or in the baseline, in its window or after it, and no Settle was
// given, the repeat is absorbed where the run ended as the baseline did,
// or differs from it only at places that a counted repeat of another op
// changed in its window, as that op did in the baseline (nochangeothers.go),
// and nothing of the world could land an effect later: no goroutine Setup
// left running, or none running or asleep when the baseline's end was
// read; else it is not judged and the scenario is inconclusive, since a
// write whose effect lands later looks the same (nochange.go). Where the
// baseline saw the state change after the write's call, outside every
// traced write (a mail sent once the tool answered), the end of a run
// that repeats it is read once it held still, and judges the repeat; an
// end that held still before that change landed leaves the repeat
// unjudged, latenotlanded.go.) A
// duplicate_write finding says in words what the repeat changed
// ("notes: 1 → 2 entries, added "o9:called customer""); an op declared
// idempotent whose repeat changed the snapshot, starting from what its
// earlier equal call left, is a not_idempotent finding, so a wrong
// declaration never hides a real duplicate. A repeat that set back what
// its earlier call left after a later write changed it is judged by the
// run's end. Where
// write calls overlap in time, the scenario's end state is compared with
// the baseline's (what one delivery left) instead, leaving out the names
// that creates made and nothing else can have chosen (T-1 and T-2 handed
// out in the order two parallel opens ran). Under concurrent delivery, a
// change in a repeat's window that the other delivery's own code may have
// made untraced (an audit line appended once its call returned) is left
// out of the repeat's effect when the baseline made that same change
// between its traced writes, at a place none of them changes, and no
// Settle is given; the trace's notes say so (untraced.go).
//
// The snapshot must be deterministic for a given history: leave out clocks,
// random ids and other values that differ between two equal runs. The
// call being judged waits for fn, before and after the tool: fn must not
// wait for a lock that the caller of a traced tool holds across the call
// (a transaction's connection of a pool of one), which the tool would
// wait for too. fn takes no context and runs on the call's goroutine: where
// it waits so, the scenario stalls naming fn's wait, and the agent is left
// running in it (statebound.go; StateContext gives fn a context that ends
// at the stall). fn may read the world through the agent's own traced
// tools: calls made while fn (or Settle) runs are the harness looking, not
// the agent calling, and are not recorded. Without State no snapshot is
// ever taken.
//
// fn is called several times per agent run (before and after each write
// judged, at the run's end), and the agent waits for it: keep it cheap.
// Where it took more than half of the suite's time, a second at least,
// the report's notes say how often it was called and what it cost.
//
// A State that panics, or returns a value encoding/json cannot encode (a
// func, a chan, a cycle), in the baseline is a *ConfigError: the suite
// runs no scenario, and testkit fails the test, naming the value's type
// or the panic value and the line that panicked. One that fails only in
// a scenario's world leaves the repeats it could not judge unjudged, and
// the scenario inconclusive, with a note. A nil fn is a *ConfigError that
// stops the suite before its baseline: leave the option out for a suite
// without a State.
func State(fn func() any) Option {
	return optionFunc(func(c *config) {
		if fn == nil {
			c.nilOption("State", "a func that returns what the world holds now (the rows, the sink's records), encodable as JSON")
			return
		}
		c.state, c.stateCtx = fn, nil
	})
}

// StateContext is State for a fn that reads the world through what takes
// a context (a database pool, an HTTP client): its ctx ends with the
// scenario's run, and when the scenario stalls, as Settle's does. A State
// that waits for what the agent holds across a traced call (the one
// connection of a pool its transaction holds) then returns when the stall
// is reported, and the agent, cancelled, can return and let go of what
// it holds: with State, which takes no context, the agent was left
// running in it, and a test's own pool.Close() waited for that
// connection until go test's -timeout (red team rtW #4). Whatever fn
// returns once its ctx ended is not judged: the scenario has stalled.
// Everything else is as for State; the last of State and StateContext
// given is the one used.
func StateContext(fn func(ctx context.Context) any) Option {
	return optionFunc(func(c *config) {
		if fn == nil {
			c.nilOption("StateContext", "a func that returns what the world holds now (the rows, the sink's records), encodable as JSON")
			return
		}
		c.state = func() any { return fn(context.Background()) }
		c.stateCtx = fn
	})
}

// Settle waits, for the State judge, until effects that land later (a
// background worker that takes a submitted request up) have landed: fn
// returns once the world went quiet, or an error if it did not. It runs
// before and after a repeated write and at the end of every scenario, never
// around a first execution, so that the agent's own timing is left alone
// where it decides whether to repeat. testkit.SettleOn builds one from an
// event stream, testkit.SettleUntil from the world's own "nothing pending".
//
// fn runs on the goroutine of the repeated call, which waits for it: it
// must not wait for what the agent holds across the call. Its ctx ends
// with the run, and when the scenario stalls, so that a fn waiting on it
// lets the agent, cancelled, return.
//
// Where that goroutine is a server's of the world serving the delivery (a
// bus's consumer Setup started, or a handler given the run by Resolve),
// the world's pending work may be the held call's own (its message, not
// yet acknowledged), and a correct fn cannot return nil before its bound.
// An error of fn there does not leave the repeat unjudged where its
// window changed the state, or where the run ended as the baseline did
// (absorbed); a note says so, and fn does not run after it.
//
// A Settle tells when the calls' effects landed, not what the world does
// on its own: the baseline runs it after Setup and reads the state for 100
// to 400 ms before its agent runs, and the values that change by
// themselves twice or more then (a heartbeat) are read as null in every
// state of the suite, its trace naming them (settledbeat.go).
//
// A nil fn is a *ConfigError, as for State.
func Settle(fn func(ctx context.Context) error) Option {
	return optionFunc(func(c *config) {
		if fn == nil {
			c.nilOption("Settle", "a func that returns once the world went quiet")
			return
		}
		c.settle = fn
	})
}

// judge takes the State snapshots of one run.
type judge struct {
	state  func() any
	settle func(context.Context) error
	ctx    context.Context
	reads  *readCheck // the baseline's reads that changed the state (readwrites.go)
	// leaveOut are the places every snapshot reads as null: those the
	// world changed by itself before the baseline's agent ran, where a
	// Settle is given (settledbeat.go).
	leaveOut [][]string
	halt     *halter // stopped when the run is aborted (statebound.go)

	mu       sync.Mutex
	inflight map[*Call]bool
	open     *cluster        // the calls in flight together now
	started  map[string]bool // op and identity of writes started so far
	execs    int             // writes started so far
	windows  int             // windows opened so far: the last one's cluster.n
	end      string          // the snapshot at the end of the run
	endErr   string
	returned string // the snapshot when the last delivery returned (noteReturn)
	// repeated says a write of an op and identity started again;
	// lastAfter is the snapshot taken when the last write returned. Where
	// the end differs from it with no Settle given, late says how: what
	// changed once the traced writes had returned (lateNote).
	repeated  bool
	lastAfter string
	late      string
	// gaps are the changes the state went through outside every traced
	// write: from the snapshot taken when the last window closed with
	// nothing in flight (idle) to the one before the next window opened,
	// and from the last to the end (untraced.go).
	idle string
	gaps [][2]string
	// gapsAt holds, for each of gaps, the order (callEffect.order) of
	// the first write that began after it began: every write before
	// that one had returned when it began (lateLandings).
	gapsAt []int
	// still says the end was read again and had held still for
	// stillFor (finish); landedAfter is how long after the first end
	// snapshot the state last changed.
	still    bool
	stillFor time.Duration
	// worldMoves says the baseline's state changed outside every traced
	// write while a goroutine its Setup left ran, with no Settle given:
	// where a write was repeated, the end is read once it held still
	// (finish).
	worldMoves bool
	// redeliverStill is how long the state must hold still before a
	// later delivery of the run begins (redeliverlater.go), 0 for no
	// hold.
	redeliverStill time.Duration
	// baseEnd is the baseline's end, where an end of this run that
	// differs from it is read once it held still (unexplained.go), in a
	// run with no repeat: how the end was read is the repeats' judging's
	// (landedByReturn), which this leaves as it was.
	baseEnd string
	// lateBase is the baseline's end, where its state changed outside
	// every traced write with no Settle given: an end of a run that
	// differs from it is read once it held still, for an effect that
	// lands after its call (a mail sent once the tool answered) to be in
	// it (latenotlanded.go); in a run that repeated no write too, whose
	// retry's effect, read at once, landed in the next scenario's world
	// (TestALateBookingStaysInItsOwnScenario).
	lateBase string
	// lookLate says, in the baseline, to read the state once more,
	// lateLook after its end, where nothing had moved by then; lateLag
	// is, in the baseline, how long after the last write returned its
	// state changed outside every window, Setup having left no goroutine
	// running (worldLag is that one's), and, in a run of lateBase, the
	// baseline's: the run's end is read no sooner than lateWait(lateLag)
	// after its last write returned (latelook.go).
	lookLate bool
	lateLag  time.Duration
	// recheckSettle says, in a run after the baseline, that a Settle is
	// given and Setup left goroutines running in the baseline: where a
	// write was repeated, the end is read once it held still after the
	// Settle said quiet (settlelook.go).
	recheckSettle bool
	// worldLive says, in the baseline, that Setup left goroutines running
	// (a queue worker, a server): the end is read once it held still, as
	// where the state changed outside every traced write.
	worldLive   bool
	stillMax    time.Duration
	landedAfter time.Duration
	// idleAt is when the last window closed with nothing in flight (idle
	// was taken), returnedAt when returned was; worldLag is, in a
	// baseline whose Setup left goroutines running, how long after
	// idleAt the state was first seen as it ended (finish): how long the
	// world took to carry out by itself what the calls set going.
	idleAt, returnedAt time.Time
	worldLag           time.Duration
	// atWork, where the baseline's world changed the state by itself
	// with no Settle given (worldMoves), tells where a goroutine Setup
	// started is still at work (world.worldAtWork): the end is read once
	// none is, as well as held still. busyAt is where one was when the
	// wait for the end ran out ("" if none was): the end is then not
	// taken as held still.
	atWork func() string
	busyAt string
	// agentDone is, in the baseline, the snapshot taken as soon as its
	// deliveries returned, before the run waited for the world to go
	// quiet (noteAgentDone); worldAfterReturn says the state then was
	// still the one the last traced write left, and the end is not: the
	// world, not the agent's own code, made the change, after the agent
	// returned (a queue's worker).
	agentDone        string
	worldAfterReturn bool
	// changedAtGate says, in the baseline, that the state changed while
	// a write that had returned was held at its finish gate, nothing else
	// in flight (afterGate): the agent waited in the call, and the world
	// made the change.
	changedAtGate bool
	// passed holds the states the end went through while it was read
	// again, before the last (up to maxPassed), where keepPassed says so:
	// in the baseline, the only run whose passed states are read
	// (endBeforeTheWorld); another run's trace would keep them for nothing.
	passed     []string
	keepPassed bool
	// busy counts the writes of each invocation in flight; outside holds
	// the invocations whose last write returned and that have begun no
	// other since: they run the agent's own code, untraced, if they did
	// not return (cluster.others).
	busy    map[*invocation]int
	outside map[*invocation]bool
	// returns counts the writes returned so far (after): a repeat's
	// Settle is taken again when one returned while it ran (before).
	returns int
	// unansweredAt is when a write last failed for want of an answer (a
	// deadline, a dropped connection: noAnswer), zero if none did: its
	// request may land later, and the end waits for it (finish).
	unansweredAt time.Time
	// failed keeps State's first error (stateerror.go).
	failed stateFailure
	// lookWorld, in a baseline whose Setup left goroutines running with
	// no Settle given, says where one of them is at work
	// (world.worldAtWork); baseLooked says it was asked once the end
	// was read, baseBusy what it answered (worldAtRest, nochange.go).
	lookWorld  func() string
	baseLooked bool
	baseBusy   string
	// lookParked and baseParked are, in such a baseline, where a
	// goroutine of Setup's running the user's code was blocked once the
	// end was read (world.setupParked): a poller between two polls.
	lookParked func() string
	baseParked string
	// callLag is, in such a baseline, the longest time from the moment a
	// window opened to the moment it closed on a change (the State
	// snapshot after its last call): a worker of the world's may have
	// carried out what the call set going inside the window, and the
	// time after the call's start tells how long it may take. holdRepeats
	// says, in another run, that its end is read once it held still
	// where a write was repeated (stillFor, finish).
	callLag     time.Duration
	holdRepeats bool
	// carriedHold is, in a run with no Settle of a suite whose baseline's
	// calls carried with the run (Resolve) came after their delivery
	// returned, how long the state must hold still, with no call in
	// flight, before a delivery that carried the run is let go
	// (holdCarried); zero otherwise.
	carriedHold time.Duration
	// quietRepeat says a window that held a repeat closed on the state
	// it opened on: the repeat is absorbed on its window alone, unless
	// the end says otherwise, and the end is then read once it held
	// still (holdRepeats).
	quietRepeat bool
}

// cluster is a run of write calls that overlapped in time: from the moment
// one started with none in flight to the moment none was in flight again.
// A call alone is a cluster of one. Its snapshots, before its first call
// and after its last, hold the effects of its calls and of nothing else
// the harness traced, but for the calls made inside them (a tool calling a
// tool): their effects are their outer call's too. Such a call, started
// with only the calls it was made inside of in flight, has a window of its
// own (callEffect.inner), inside theirs.
type cluster struct {
	before, after string
	err           string
	keys          map[string]bool // op, identity and arguments of its calls
	// others says another invocation of the run (a concurrent delivery)
	// was running its own code outside its traced writes at some moment
	// of the window: what that code wrote untraced may be in the window
	// (untraced.go).
	others bool
	// alone holds its first call until a call not made inside it joins:
	// that call overlaps it, returned or not (a tool that left a call it
	// made running), since its window, the cluster's, holds the joiner's
	// effect.
	alone []*Call
	// openedAt is when its snapshot before was taken (judge.callLag);
	// repeat says a repeat ran in it (judge.quietRepeat).
	openedAt time.Time
	repeat   bool
	// n numbers the run's windows, from 1: it tells a call made inside
	// another, with a window of its own, which cluster that window lies
	// in (callEffect.in, nestedOthers).
	n int
}

// callEffect is what the judge saw of one write call.
type callEffect struct {
	cl         *cluster
	err        string // a settle problem: no judgement
	repeat     bool   // an earlier call had the same op and identity
	overlapped bool   // another write was in flight with it
	inner      bool   // cl is the call's own window, inside the calls it was made inside of
	in         int    // with inner, the n of the cluster its window lies in
	// served is the write in flight whose HTTP request the call serves,
	// when an HTTP handler of this process made it (judge.servedBy): its
	// effect is that write's too, as a call made inside it would be.
	served  *Call
	settled bool
	order   int  // 1 for the first write the run executed, ...
	nested  bool // made inside another call, or serving one's request: no Settle of its own (judge.before)
	// carried says the call was nested for its context alone, one Resolve
	// gave a server in the process, with no traced call around it (a tool
	// served over MCP): no window of its own was let settle, nor any
	// other call's (effectView.carriedAlone).
	carried bool
	// heldSettle is the error of the Settle that did not see the world
	// quiet before a repeat a server of the world made (Call.byServer),
	// while it held that call: the repeat is judged all the same, by its
	// window where that changed the state, else by the run's end, and no
	// Settle runs after it (judge.before, judge.after).
	heldSettle string
	// outer is the outermost call a nested call was made inside of (or
	// serves), when that call was still in flight as the nested one
	// returned: its window, which its Settles close, held the nested
	// call whole, and what the call set going after it returned.
	outer *Call
}

func newJudge(ctx context.Context, c *config) *judge {
	if c.state == nil {
		return nil
	}
	halt := newHalter(ctx)
	return &judge{state: c.guardedState(halt.ctx), settle: c.settle, ctx: ctx, halt: halt, inflight: map[*Call]bool{}, started: map[string]bool{},
		busy: map[*invocation]int{}, outside: map[*invocation]bool{}, stillFor: endStill, stillMax: endStillMax}
}

// hooks are the goroutines running State, Settle, Setup or Teardown now:
// a tool they call (State reading the world through the agent's own
// client, Setup seeding it) is the harness's, not the agent's, and runs
// as in production (Begin). roots are those running Setup or Teardown, in
// a goroutine of their own (callHook): a goroutine that descends from one
// was started by the hook, and its calls are the hook's too. Once the hook
// returned, the goroutines it left running are told as any other (lookup):
// a server Setup started may serve an agent, this suite's or another's;
// one that calls while no delivery waits for it (a queue's worker) is the
// world's (worldWorker).
var hooks struct {
	n     atomic.Int32 // how many are running, read first
	mu    sync.Mutex
	gids  map[uint64]int
	roots map[uint64]bool
}

// enterHook marks the calling goroutine as running a hook until the mark's
// leave, and with root, as the root of the goroutines the hook starts:
// defer enterHook(root).leave().
func enterHook(root bool) hookMark {
	gid := goroutineID()
	hooks.mu.Lock()
	if hooks.gids == nil {
		hooks.gids, hooks.roots = map[uint64]int{}, map[uint64]bool{}
	}
	hooks.gids[gid]++
	if root {
		hooks.roots[gid] = true
	}
	hooks.mu.Unlock()
	hooks.n.Add(1)
	return hookMark{gid, root}
}

// hookMark is what enterHook marked. A value, not the closure over gid and
// root that leave was: an allocation for each Setup, Teardown and State
// snapshot (43 of the ten-write suite's allocations).
type hookMark struct {
	gid  uint64
	root bool
}

// leave ends the mark.
func (m hookMark) leave() {
	hooks.n.Add(-1)
	hooks.mu.Lock()
	if hooks.gids[m.gid]--; hooks.gids[m.gid] == 0 {
		delete(hooks.gids, m.gid)
	}
	if m.root {
		delete(hooks.roots, m.gid)
	}
	hooks.mu.Unlock()
}

// settling holds the goroutines that run a Settle now (judge.quiet), by
// count; n is their number, read without the lock.
var settling struct {
	mu   sync.Mutex
	n    atomic.Int32
	gids map[uint64]int
}

// enterSettle marks the calling goroutine as running a Settle until the
// returned function is called.
func enterSettle() func() {
	gid := goroutineID()
	settling.mu.Lock()
	if settling.gids == nil {
		settling.gids = map[uint64]int{}
	}
	settling.gids[gid]++
	settling.mu.Unlock()
	settling.n.Add(1)
	return func() {
		settling.n.Add(-1)
		settling.mu.Lock()
		if settling.gids[gid]--; settling.gids[gid] == 0 {
			delete(settling.gids, gid)
		}
		settling.mu.Unlock()
	}
}

// settlingGoroutines returns the goroutines that run a Settle now; nil,
// with no lock taken, when none does.
func settlingGoroutines() []uint64 {
	if settling.n.Load() == 0 {
		return nil
	}
	settling.mu.Lock()
	defer settling.mu.Unlock()
	out := make([]uint64, 0, len(settling.gids))
	for gid := range settling.gids {
		out = append(out, gid)
	}
	return out
}

// isHookRoot reports whether goroutine gid runs Setup or Teardown now.
func isHookRoot(gid uint64) bool {
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	return hooks.roots[gid]
}

// inHook reports whether the calling goroutine runs State, Settle, Setup
// or Teardown.
func inHook() bool {
	if hooks.n.Load() == 0 {
		return false
	}
	gid := goroutineID()
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	return hooks.gids[gid] > 0
}

// snapshot encodes the state, turning a panic into an error, the first
// of which the judge keeps (stateerror.go).
func (j *judge) snapshot() (s string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = statePanicError(v)
		}
		if err != nil {
			j.failed.note(err)
		}
	}()
	defer enterHook(false).leave()
	v, err := j.readState()
	if err != nil {
		return "", err
	}
	s, err = Canonical(v)
	if err != nil {
		err = stateEncodeError(v, err)
	}
	if err == nil && j.leaveOut != nil {
		s = nullRestless(s, j.leaveOut) // a heartbeat beside a Settle (settledbeat.go)
	}
	if err == nil && j.reads != nil {
		j.reads.seen(s)
	}
	return s, err
}

// settleTimeout starts the error of a Settle that did not see the world
// quiet (judge.quiet), as a repeat's StateError records it.
const settleTimeout = "the world did not go quiet"

// crashFired reports whether tr's run crashed an invocation.
func crashFired(tr *Trace) bool {
	return tr.Fired && tr.Fault != nil && tr.Fault.Kind == FaultCrash
}

// quiet runs Settle, if any.
func (j *judge) quiet() error {
	if j.settle == nil {
		return nil
	}
	err := func() error {
		defer enterHook(false).leave()
		defer enterSettle()()
		return j.settle(j.halt.ctx) // cancelled by a stall (statebound.go)
	}()
	if err != nil {
		return fmt.Errorf("%s: %w", settleTimeout, err)
	}
	return nil
}

func callKeyOf(c *Call) string {
	b, _ := c.args().MarshalJSON()
	return c.op.Name + "\x00" + c.rec.Identity + "\x00" + string(b)
}

// before is called when a write is about to execute. Whether it repeats
// an earlier write is decided in the critical section that opens or joins
// its cluster, so that the first of two writes of one identity to reach
// it is the first execution: with two deliveries at once, the one that
// counted itself first could be preempted and execute second, and its
// rival, taken for the repeat, was judged by a cluster of its own as the
// one that changed the world (a false duplicate_write of an upsert). A
// repeat found there lets what earlier executions set in motion land
// (Settle) with the lock released, and looks again.
func (j *judge) before(c *Call) {
	key := c.op.Name + "\x00" + c.rec.Identity
	quieted, quietErr := false, ""
	j.mu.Lock()
	defer j.mu.Unlock()
	// A call made inside another (a tool's own call, with its context:
	// also one a worker makes with the context of the call that queued
	// the job, after that call returned) or serving its HTTP request is
	// part of what that call set in motion: what Settle waits for. It
	// does not settle the world itself, here or after it returns: a
	// Settle run on its goroutine waited for the call itself to finish
	// (a queue's in-flight count it lowers after the call), to its bound,
	// and the repeat was then judged by counting executions (red team: a
	// worker's keyed transfer, a false duplicate_write on every run). Its
	// window is its outer call's, which settles. So for a call a server
	// makes with a context Resolve gave it (a bus consumer's, the run
	// carried by Token): a Settle that waits for the bus to drain waited,
	// on the handler's goroutine, for the handler itself, to its bound,
	// and every repeat of such a call went unjudged (red team rtY #4).
	nested := c.parent != nil || j.servedBy(c) != nil || isCarried(c.Context)
	if j.started[key] && j.settle != nil && !nested {
		// A write of this identity started before, and stays started.
		// A write that returned while the world settled (the earlier
		// execution, in flight in the other delivery) may have set
		// something in motion only as it returned (a shipment it
		// queued): the world settles again, so that it lands before
		// the repeat's window opens rather than inside it, unless the
		// repeat overlaps a write in flight (its cluster is judged by
		// the end).
		for {
			returns := j.returns
			j.mu.Unlock()
			err := j.quiet()
			j.mu.Lock()
			quieted = true
			if err != nil {
				quietErr = errorText(err)
				break
			}
			if j.returns == returns || len(j.inflight) > 0 && !j.onlyOuter(c) {
				break
			}
		}
	}
	j.execs++
	e := &callEffect{repeat: j.started[key], order: j.execs, served: j.servedBy(c), nested: nested}
	e.carried = nested && c.parent == nil && e.served == nil
	c.effect = e // for within, from here on
	j.started[key] = true
	j.repeated = j.repeated || e.repeat
	if e.repeat && quieted {
		e.err, e.settled = quietErr, quietErr == ""
		if quietErr != "" && c.byServer() {
			// The Settle ran on a goroutine of a server of the world
			// serving the delivery (a bus's consumer), and held its
			// repeat: the work the world had pending may be that call's
			// own (its message, acknowledged only once the handler
			// returns), which cannot end while the Settle waits. Not held
			// against the repeat: it is judged by its window where that
			// changed the state (judge.after), else by the end, which
			// the Settle at the end reads once that work is done (red
			// team rtY #9: a Retry middleware's second charge,
			// inconclusive "the world did not go quiet" on a correct
			// Settle). No Settle after it either: it would wait for the
			// same work.
			e.err, e.heldSettle = "", quietErr
		}
	}
	switch {
	case len(j.inflight) == 0:
		j.open = j.window()
		if j.idle != "" && j.open.err == "" && j.open.before != j.idle {
			j.gaps = append(j.gaps, [2]string{j.idle, j.open.before})
			j.gapsAt = append(j.gapsAt, e.order)
		}
		j.open.others = j.othersOutside(c)
	case j.onlyOuter(c):
		// A tool calling a tool, with nothing else in flight: the call
		// has a window of its own, inside its outer calls'. They are not
		// overlapped by what they do themselves.
		e.cl, e.inner = j.window(), true
		e.cl.others = j.othersOutside(c)
		if j.open != nil {
			e.in = j.open.n
		}
	default:
		e.overlapped = true
		for o := range j.inflight {
			if c.within(o) {
				continue // its own doing: c is part of its effect
			}
			o.effect.overlapped = true
			if o.effect.inner {
				// Its own window holds another's effects now: it is
				// told as any overlapped call, by the cluster.
				o.effect.inner = false
				o.effect.cl = j.open
				j.open.keys[callKeyOf(o)] = true
			}
		}
		j.open.alone = slices.DeleteFunc(j.open.alone, func(o *Call) bool {
			if c.within(o) {
				return false
			}
			o.effect.overlapped = true
			return true
		})
	}
	if e.cl == nil {
		e.cl = j.open
		if !e.overlapped {
			j.open.alone = append(j.open.alone, c)
		}
	}
	e.cl.keys[callKeyOf(c)] = true
	e.cl.repeat = e.cl.repeat || e.repeat
	c.effect = e
	j.inflight[c] = true
	if c.inv != nil {
		j.busy[c.inv]++
		delete(j.outside, c.inv)
	}
}

// othersOutside reports whether an invocation other than c's is, as c's
// window opens, between its traced writes and has not returned. j.mu is
// held.
func (j *judge) othersOutside(c *Call) bool {
	for inv := range j.outside {
		if inv != c.inv && !inv.returned.Load() {
			return true
		}
	}
	return false
}

// window opens a cluster, taking its snapshot before with the lock held,
// so that no call of it runs before it.
func (j *judge) window() *cluster {
	j.windows++
	cl := &cluster{keys: map[string]bool{}, n: j.windows}
	var err error
	if cl.before, err = j.snapshot(); err != nil {
		cl.err = errorText(err)
	}
	if j.lookWorld != nil {
		cl.openedAt = time.Now()
	}
	return cl
}

// onlyOuter reports whether every write in flight is a call c was made
// inside of, or serves (within). j.mu is held.
func (j *judge) onlyOuter(c *Call) bool {
	for o := range j.inflight {
		if !c.within(o) {
			return false
		}
	}
	return true
}

// servedBy returns the write in flight whose HTTP request c serves, when
// an HTTP handler of this process made c (lookup's viaHTTP: a fake of the
// service the agent calls, its sink traced too) with no call of the run in
// its context, which cannot cross HTTP: the innermost of the writes in
// flight, when all are of c's invocation and each was made inside the
// next (a tool waiting for the response). Its effect is that write's
// too: without this, a keyed server's first booking was judged as the
// handler's alone, no execution of the client's write was seen to change
// the world, and every execution counted (a false duplicate_write). nil
// when no write is in flight or they are not one chain: nothing then
// tells which one the request came from, and the calls overlap. j.mu is
// held.
func (j *judge) servedBy(c *Call) *Call {
	if c.parent != nil || c.rec.rare == nil || c.rec.rare.viaHTTP == 0 || c.rec.rare.served == nil {
		// No call of its invocation waited for an HTTP answer as it
		// began (recorder.servedCall): the request came from the
		// agent's own code, beside the writes in flight, not from one
		// of them.
		return nil
	}
	var inner *Call
	for o := range j.inflight {
		if o.inv != c.inv {
			return nil
		}
		if inner == nil || o.within(inner) {
			inner = o
		}
	}
	for o := range j.inflight {
		if o != inner && !inner.within(o) {
			return nil
		}
	}
	return inner
}

// within reports whether c's effect is part of o's: c was made inside o
// (Call.parent) or serves its HTTP request (callEffect.served), at any
// depth. For the judge; the scheduler's gates follow parent alone
// (madeInside).
func (c *Call) within(o *Call) bool {
	for p := c.judgeParent(); p != nil; p = p.judgeParent() {
		if p == o {
			return true
		}
	}
	return false
}

// outermost returns the outermost call c was made inside of or serves
// (within), or c.
func (c *Call) outermost() *Call {
	r := c
	for p := c.judgeParent(); p != nil; p = p.judgeParent() {
		r = p
	}
	return r
}

func (c *Call) judgeParent() *Call {
	if c.parent != nil {
		return c.parent
	}
	if e := c.effect; e != nil {
		return e.served
	}
	return nil
}

// madeInside reports whether c was made inside call o (Call.parent), at
// any depth.
func (c *Call) madeInside(o *Call) bool {
	for p := c.parent; p != nil; p = p.parent {
		if p == o {
			return true
		}
	}
	return false
}

// after is called when a write returned (or panicked).
func (j *judge) after(c *Call) {
	e := c.effect
	if e == nil {
		return
	}
	var settleErr error
	if e.repeat && j.settle != nil && e.err == "" && !e.nested && e.heldSettle == "" {
		settleErr = j.quiet()
	}
	c.mu.Lock()
	unanswered := c.rec.status == statusFailed && noAnswer(c.rec.Error)
	c.mu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if unanswered {
		j.unansweredAt = time.Now()
	}
	if settleErr != nil {
		e.err = errorText(settleErr) // under the lock: the trace may be read (record)
	}
	// A repeat whose Settle failed while the harness held it (before) is
	// judged by its window only where that window, its own, changed the
	// state: no Settle ran after it, so an equal window says nothing of
	// an effect landing after the call. Otherwise it is unjudged, as
	// after any failed Settle, unless the run's end is as the baseline's
	// (heldSettle in judgeRepeatsIn).
	if e.heldSettle != "" && e.err == "" && (e.overlapped || e.inner || len(j.inflight) > 1 || j.open == nil) {
		e.err = e.heldSettle
	}
	if e.nested {
		if r := c.outermost(); r != c && j.inflight[r] {
			e.outer = r
		}
	}
	delete(j.inflight, c)
	if inv := c.inv; inv != nil {
		if j.busy[inv]--; j.busy[inv] <= 0 {
			delete(j.busy, inv)
			j.outside[inv] = true
			if !inv.returned.Load() && len(j.inflight) > 0 {
				// Its invocation goes on with its own code while the
				// windows still open hold what it writes untraced. Not
				// where c was the last call in flight: its window closes
				// now, with nothing of that code in it (a repeat alone,
				// after a lost acknowledgement, was taken for one held
				// while another delivery ran: red team, /tmp/rt26 w1).
				j.markOthers()
			}
		}
	}
	j.returns++
	if !e.inner && len(j.inflight) > 0 {
		return
	}
	s, err := j.snapshot()
	if err == nil {
		j.lastAfter = s
	}
	if e.inner {
		// Its own window closes.
		e.cl.after = s
		if err != nil && e.cl.err == "" {
			e.cl.err = errorText(err)
		}
		j.closed(e.cl, s, err)
		if len(j.inflight) > 0 {
			return // its outer calls are still in flight
		}
		// Its outer calls returned before it (a tool that left a call
		// it made running): their cluster closes with it.
	}
	if cl := j.open; cl != nil {
		cl.after = s
		if err != nil && cl.err == "" {
			cl.err = errorText(err)
		}
		if e.heldSettle != "" && e.err == "" && (cl.err != "" || cl.before == "" || s == cl.before) {
			e.err = e.heldSettle
		}
		j.closed(cl, s, err)
	}
	j.open = nil
	if err == nil {
		j.idle, j.idleAt = s, time.Now()
	}
}

// closed notes, as window cl closes on snapshot s (err where State
// failed), how long a change took in the baseline (callLag) and whether a
// repeat's window changed nothing (quietRepeat). j.mu is held.
func (j *judge) closed(cl *cluster, s string, err error) {
	if err != nil || cl.err != "" || cl.before == "" {
		return
	}
	if cl.repeat && s == cl.before {
		j.quietRepeat = true
	}
	if j.lookWorld != nil && s != cl.before && !cl.openedAt.IsZero() {
		j.callLag = max(j.callLag, min(time.Since(cl.openedAt), endStillMax))
	}
}

// markOthers marks the windows open now (the cluster, and the windows of
// calls made inside others) as held while an invocation ran its own code.
// j.mu is held.
func (j *judge) markOthers() {
	if j.open != nil {
		j.open.others = true
	}
	for o := range j.inflight {
		if o.effect != nil && o.effect.cl != nil {
			o.effect.cl.others = true
		}
	}
}

// finish takes the end-of-run snapshot, once the world went quiet.
func (j *judge) finish() {
	if err := j.quiet(); err != nil {
		j.endErr = errorText(err)
		return
	}
	s, err := j.snapshot()
	if err != nil {
		j.endErr = errorText(err)
		return
	}
	unansweredAt := j.lastUnanswered()
	seenAt := time.Now() // when s was first seen
	lateUntil := j.lateReadAt()
	moving := j.settle == nil && (j.changedOutside(s) || j.worldLive || j.worldMoves && j.repeatedNow() || j.holdRepeats && j.quietRepeatNow() || j.baseEnd != "" && s != j.baseEnd && !j.repeatedNow() || j.lateBase != "" && (s != j.lateBase || time.Now().Before(lateUntil)) || !unansweredAt.IsZero())
	if !moving && j.settle == nil && j.lookLate {
		// Nothing moved by the time the agent returned: a mail a
		// timer sends a moment after it (latelook.go) is looked for.
		endSleep(lateLook)
		if again, err := j.snapshot(); err == nil && again != s {
			s, seenAt, moving = again, time.Now(), true
		}
	}
	if !moving && j.recheckSettle && j.repeatedNow() {
		// A Settle may say quiet before the world's work is done
		// (settlelook.go): the end is read once it held still, on the
		// polls' clock, as below.
		moving = true
	}
	if moving {
		// The state changed outside every traced write in this run: an
		// effect that lands outside its call (a booking a payments API
		// makes after it answered 202, a worker's) may still be on its
		// way. The end is read once it held still for stillFor: a second
		// booking queued behind the first, landing after the agent saw
		// the order paid, is then in the end state, not after it. What
		// the world does by itself meanwhile (an order confirmed by a
		// service of its own 25 ms after its commit) is in the end of
		// every run alike (landedByReturn): the baseline waits longer
		// (endCalibrate), and every other run at least twice as long as
		// the world took to go still there (judge.stillFor), for as
		// long as that takes (judge.stillMax).
		//
		// Those times run on the polls' clock, not the wall's: a poll
		// whose sleep of endPoll overran twice that counts 2*endPoll.
		// On a loaded machine (a CI runner, several go test -race at
		// once) the goroutines that carry the world's change wait for a
		// CPU as the polls do, and on the wall's clock the state held
		// still while they waited: a booking queued 15 ms behind another
		// was read as never made (a missed duplicate_write, 3 runs of 50
		// beside 3 busy loops; TestABookingQueuedBehindAnotherOnALoadedMachine).
		// The wait stretches as the polls are kept waiting; unloaded,
		// the clocks agree.
		var (
			on, stillSince time.Duration // on the polls' clock, from the first end snapshot
			clock          = newPollClock()
		)
		for on < j.stillMax {
			var now time.Time
			on, now = clock.sleep()
			again, err := j.snapshot()
			if err != nil {
				break
			}
			if again != s {
				j.mu.Lock()
				if j.keepPassed && len(j.passed) < maxPassed {
					j.passed = append(j.passed, s)
				}
				s, stillSince, seenAt = again, on, now
				j.landedAfter = on
				j.mu.Unlock()
				continue
			}
			if on-stillSince >= j.stillFor && (unansweredAt.IsZero() || time.Since(unansweredAt) >= lateLandWait) && !now.Before(lateUntil) {
				if j.atWork != nil {
					// A worker of Setup's asleep until its next job
					// leaves the state still meanwhile: the end is
					// read once none is at work, and the state is read
					// after that look, so that what one did just
					// before it is in the end.
					if j.busyAt = j.atWork(); j.busyAt != "" {
						continue
					}
					if again, err = j.snapshot(); err != nil {
						break
					}
					if again != s {
						j.mu.Lock()
						s, stillSince, seenAt = again, on, time.Now()
						j.landedAfter = on
						j.mu.Unlock()
						continue
					}
				}
				j.mu.Lock()
				j.still = true
				j.mu.Unlock()
				break
			}
		}
		if !unansweredAt.IsZero() && on >= j.stillMax && on-stillSince >= j.stillFor && j.busyAt == "" {
			// Held still, and waited for as long as it could for what a
			// failed write's request may still land (lateLandWait).
			j.mu.Lock()
			j.still = true
			j.mu.Unlock()
		}
	}
	if j.lookWorld != nil {
		// Whether the world could still land an effect after this end
		// (worldAtRest, nochange.go).
		busy := j.lookWorld()
		parked := ""
		if j.lookParked != nil {
			parked = j.lookParked()
		}
		j.mu.Lock()
		j.baseLooked, j.baseBusy, j.baseParked = true, busy, parked
		j.mu.Unlock()
	}
	j.end = s
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.keepPassed && j.worldLive && j.settle == nil && j.idle != "" && s != j.idle && !j.idleAt.IsZero() {
		// The baseline's world changed the state by itself after the
		// last traced write returned: learn how long it took, from then
		// to the first snapshot that held the end (the one taken when
		// the agent returned, where it did), for the other runs to wait
		// as long for their end (stillFor).
		at := seenAt
		if j.returned == s && !j.returnedAt.IsZero() {
			at = j.returnedAt
		}
		j.worldLag = min(max(at.Sub(j.idleAt), 0), endStillMax)
		j.worldAfterReturn = j.changedAtGate || j.agentDone == j.idle
	}
	if j.lookLate && !j.worldLive && j.settle == nil && j.idle != "" && s != j.idle && !j.idleAt.IsZero() {
		// What the calls set going landed after the last of them
		// returned, with no goroutine of Setup's running (a timer's
		// mail): how long it took, for a run that repeats a write to
		// wait as long for its end (latelook.go).
		at := seenAt
		if j.returned == s && !j.returnedAt.IsZero() {
			at = j.returnedAt
		}
		j.lateLag = min(max(at.Sub(j.idleAt), 0), lateLagMax)
	}
	if j.idle != "" && s != j.idle {
		j.gaps = append(j.gaps, [2]string{j.idle, s})
		j.gapsAt = append(j.gapsAt, j.execs+1)
	}
	if j.settle == nil && j.repeated && j.lastAfter != "" && !sameUpToOrder(j.lastAfter, s) {
		j.late = describeChange(j.lastAfter, s, maxChange)
	}
}

// lastUnanswered returns when a write last failed for want of an answer
// (judge.unansweredAt).
func (j *judge) lastUnanswered() time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.unansweredAt
}

// lateLandWait is how long after a write failed for want of an answer (its
// deadline ran out, its connection dropped: noAnswer) the end of a run
// with no Settle is read at the earliest, the state having held still: the
// request may have reached the service, which books it later. A payments
// fake that books 150 ms after a request whose attempt gave up at 40 ms
// could land after the baseline's end had held still for its 100 ms
// (endCalibrate), and the baseline, which charged twice, then saw one
// charge (red team rtQ #1; landedlate.go): a charge landing 120 ms after
// the agent returned was never in the baseline's end without this wait
// (TestAFailedChargeThatLandsLateBesideItsRetryIsADuplicate). Bounded, as
// every wait of the end, by the run's stillMax.
const lateLandWait = endStillMax

// endSleep is the sleep between two polls of the end state (judge.finish);
// a test makes it overrun, as a loaded machine does.
var endSleep = time.Sleep

// pollClock is the polls' clock (judge.finish): the time since it was
// made, less what each poll's sleep overran beyond twice endPoll, as a
// loaded machine makes it; what is done between sleeps (a State's query)
// counts.
type pollClock struct {
	on   time.Duration
	last time.Time
}

func newPollClock() pollClock { return pollClock{last: time.Now()} }

// sleep sleeps endPoll (endSleep) and returns the time on the clock, and
// on the wall's, then.
func (c *pollClock) sleep() (time.Duration, time.Time) {
	slept := time.Now()
	endSleep(endPoll)
	now := time.Now()
	c.on += now.Sub(c.last) - max(now.Sub(slept)-2*endPoll, 0)
	c.last = now
	return c.on, now
}

// endStill is how long the end state must hold still at least, when the
// state changed outside the traced writes and no Settle is given, to be
// read as the end; endCalibrate how long in the baseline, whose state is
// read every endPoll; endStillMax bounds the baseline's wait, and the
// others' where the baseline's state went still early (judge.finish,
// stillFor).
const (
	endStill     = 25 * time.Millisecond
	endCalibrate = 100 * time.Millisecond
	endPoll      = 5 * time.Millisecond
	endStillMax  = 300 * time.Millisecond
)

// stillFor returns how long the end of a run must hold still (finish),
// and how long the run may wait for it, given the baseline's trace: at
// least twice as long as the baseline's state went on changing after its
// agent returned (landedAfter), and long enough for a run whose state
// changes as late to hold still that long. A cap of 300 ms for every run
// kept a run of a world that changes for 100 ms after the agent returned
// (an order confirmed, then shipped, by services of its own) from ever
// holding still, and its repeat was counted (review of 461f5c3). A
// baseline that never held still (a heartbeat in the state) calibrates
// nothing: its landedAfter is where the wait stopped.
//
// The run's world may change later than the baseline's did: its timers
// and goroutines wait for the CPUs a loaded machine (a CI runner, several
// go test -race at once) gives them. A wait that let the run's last change
// come two polls later than the baseline's (10 ms) left the run of a
// correct agent, whose world ships 135 ms after its agent returned in the
// baseline and 212 ms after it in the run, unjudged and inconclusive
// (4 runs of 40 beside 3 busy loops). The run's last change may now come
// as late again as the baseline's, or endStillMax later where that is
// more; the wait runs that long only where the run's state never held
// still.
//
// Where Setup left a goroutine running that carried out what the calls set
// going (a queue's worker), the baseline's end may have landed before its
// agent returned, which waits for the world to go quiet, while another
// run's agent returns at once: the world's lag is then what the baseline
// learned (worldLag), and the run's end must hold still for twice that
// too. Held still for 25 ms, the end of a run whose worker refunded 30 ms
// after the call was read before the refund, in 15 runs of 15 (red team
// rtR #9).
func stillFor(base *Trace) (still, wait time.Duration) {
	if base == nil || !base.endStill {
		return endStill, endStillMax
	}
	lag := max(base.landedAfter, base.odd().worldLag)
	still = max(endStill, 2*lag+endPoll)
	late := max(lag, endStillMax) // how much later than the baseline's
	return still, lag + late + still + 2*endPoll
}

// maxPassed bounds the states judge.passed keeps.
const maxPassed = 32

// passedStates returns the states the end went through before the last
// while it was read again (judge.finish).
func (j *judge) passedStates() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.passed
}

// stillEnd reports whether the end was read again and had held still,
// and how long after the first end snapshot the state last changed.
func (j *judge) stillEnd() (bool, time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.still, j.landedAfter
}

// repeatedNow reports whether a write of an op and identity started again.
func (j *judge) repeatedNow() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.repeated
}

// quietRepeatNow reports whether a repeat's window changed nothing
// (judge.quietRepeat).
func (j *judge) quietRepeatNow() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.quietRepeat
}

// changedOutside reports whether the state changed outside every traced
// write in this run, up to snapshot s taken at its end.
func (j *judge) changedOutside(s string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.gaps) > 0 || j.idle != "" && s != j.idle
}

// noteReturn takes the snapshot of the world once the last delivery
// returned, before the run waits for what the agent left running and for
// the world to settle: a change after it did not come from the agent's
// own flow (a transaction it committed before it returned), and the end
// state then says less of its writes (judgeRepeatsIn). Nothing is kept
// when State fails.
func (j *judge) noteReturn() {
	if s, err := j.snapshot(); err == nil {
		j.mu.Lock()
		j.returned, j.returnedAt = s, time.Now()
		j.mu.Unlock()
	}
}

// afterGate is called, in the baseline, once write c, which returned, was
// let go at its finish gate, where the scheduler held it until the world
// went quiet: where Setup left goroutines running (worldLive) and no
// write is in flight, a state that differs from the one c's window closed
// on was changed by the world meanwhile, not by the agent, which waited
// in the call (changedAtGate).
func (j *judge) afterGate(c *Call) {
	if !j.keepPassed || !j.worldLive || j.settle != nil || c.effect == nil {
		return
	}
	j.mu.Lock()
	idle, open := j.idle, len(j.inflight) > 0
	j.mu.Unlock()
	if open || idle == "" {
		return
	}
	if s, err := j.snapshot(); err == nil && s != idle {
		j.mu.Lock()
		j.changedAtGate = true
		j.mu.Unlock()
	}
}

// noteAgentDone takes, in the baseline, the snapshot of the world as soon
// as its deliveries returned (judge.agentDone).
func (j *judge) noteAgentDone() {
	if s, err := j.snapshot(); err == nil {
		j.mu.Lock()
		j.agentDone = s
		j.mu.Unlock()
	}
}

// gapsSeen returns the changes the state went through outside every
// traced write (gaps), and when each began (gapsAt).
func (j *judge) gapsSeen() ([][2]string, []int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.gaps), slices.Clone(j.gapsAt)
}

const lateNotePrefix = "the state changed after the last traced write returned"

// lateNote is the trace's note when the state changed after the last
// traced write returned, in a run with a repeat and no Settle: the suite
// cannot tell an effect that landed late from any other untraced change,
// and does not count it (README: what the harness cannot see), but says
// what it saw; unless it is the change a retry of a call that failed for
// want of an answer made again (landedlate.go): that is a duplicate_write.
func lateNote(change string) string {
	return fmt.Sprintf(lateNotePrefix+" (%s): if that is the effect of a traced write landing late (a transaction committed after its writes, a server that answers 202 and books afterwards, a queue a worker drains), the snapshots around its calls did not see it; a repeat of such a write is judged by the end state where the state had landed when the agent returned (a note then says so), and otherwise may have been judged by what it did before its effect landed; give a Settle so the suite waits for effects that land later: testkit.SettleUntil with what the world has pending (a fake service's requests in flight, a queue's jobs), or testkit.SettleOn where the world records its effects on an event stream (an untraced write of the agent or of the world changes the state too)", change)
}

// endUnreadNote says that the end of a run with a repeated write could not
// be read, and why: what the repeats left was judged by their own windows
// alone, and the scenario is inconclusive.
func endUnreadNote(err string) string {
	return "the end of this run could not be read (" + err + "): a repeated write was judged by the snapshots around its calls alone, not by how the run ended against the baseline, which is what catches an effect that lands after its call; the scenario is inconclusive (fix State or the Settle for this world)"
}

// record copies what the judge saw into the call's trace record, in v
// and m, which are zero; j.mu is held (judge.record).
func (e *callEffect) record(o *Operation, v *effectView, m *opMore) {
	o.Overlapped = e.overlapped
	o.withMore(m).view = v
	v.order, v.settled, v.heldSettle, v.carriedAlone = e.order, e.settled, e.heldSettle != "", e.carried
	if cl := e.cl; cl != nil {
		v.inCluster = true
		v.before, v.after, v.clErr, v.clusterKeys = cl.before, cl.after, cl.err, len(cl.keys)
		v.others = cl.others
		v.cluster = cl.n
		if e.inner {
			v.in = e.in
		}
	}
	switch {
	case e.err != "":
		o.StateError = e.err
		return
	case e.cl.err != "":
		o.StateError = e.cl.err
		return
	}
	if e.overlapped || e.cl.before == "" || e.cl.after == "" {
		return
	}
	o.StateChange = DescribeChange(e.cl.before, e.cl.after)
	v.seen = true
	if r := e.outer; r != nil && r.effect != nil {
		v.outerQuiet = r.effect.settledQuiet()
	}
}

// settledQuiet reports whether the call's window was let settle, before
// and after (a repeat's), held no other call's, and saw no change. j.mu
// is held.
func (e *callEffect) settledQuiet() bool {
	cl := e.cl
	return e.settled && e.err == "" && !e.overlapped && cl != nil && cl.err == "" &&
		cl.before != "" && cl.after != "" && DescribeChange(cl.before, cl.after) == ""
}

// record copies what the judge saw of calls into ops, calls[i] into
// ops[i], under the judge's lock: a goroutine the agent left behind may
// still be running writes the judge watches. After a stall (aborted), the
// lock may be held for good: State or Settle runs with it held, on the
// goroutine of the call judged, and one that waits for what that
// goroutine holds (a lock taken around the call) never returns. The
// harness then waited for the lock forever, after it had abandoned the
// scenario. So it tries for recordGrace, and reports false if it could
// not: nothing of the judge is recorded.
func (j *judge) record(calls []*Call, ops []Operation, aborted bool) bool {
	if !aborted {
		j.mu.Lock()
	} else if !tryLockFor(&j.mu, recordGrace) {
		return false
	}
	defer j.mu.Unlock()
	// What the judge saw of the calls is in two blocks, one of views and
	// one of the ops' opMores to point to them: two allocations a trace,
	// where a view each was one a call.
	n := 0
	for _, c := range calls {
		if c.effect != nil {
			n++
		}
	}
	views, mores := make([]effectView, n), make([]opMore, n)
	for i, c := range calls {
		if c.effect != nil {
			c.effect.record(&ops[i], &views[0], &mores[0])
			views, mores = views[1:], mores[1:]
		}
	}
	return true
}

// recordGrace bounds record's wait for the judge's lock after a stall.
const recordGrace = 100 * time.Millisecond

// tryLockFor takes mu if it can within d.
func tryLockFor(mu *sync.Mutex, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for pause := 50 * time.Microsecond; !mu.TryLock(); pause = min(2*pause, 5*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
	return true
}

// windows indexes the calls of a trace whose snapshots were taken alone,
// by op, identity and arguments: each such call's before and after, the
// first under the key, the n-th under windowKey(key, n).
func windows(tr *Trace) map[string][2]string {
	out := map[string][2]string{}
	if tr == nil {
		return out
	}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if !o.stateSeen() || o.Status != StatusSuccess && !landed(o) {
			// A call that failed after its effect landed (a write whose
			// deadline ran out as it returned) made one execution's
			// change all the same: without its window, a keyed retry's
			// effect was seen nowhere in the baseline, and two deliveries
			// at once were counted (red team: a per-attempt timeout).
			continue
		}
		k := o.Name + "\x00" + o.Identity + "\x00" + argsKey(o)
		for n := 1; ; n++ {
			if _, ok := out[windowKey(k, n)]; !ok {
				before, after := o.stateWindow()
				out[windowKey(k, n)] = [2]string{before, after}
				break
			}
		}
	}
	return out
}

// hasWindows reports whether windows(tr) holds any window.
func hasWindows(tr *Trace) bool {
	if tr == nil {
		return false
	}
	for i := range tr.Ops {
		if o := &tr.Ops[i]; o.stateSeen() && (o.Status == StatusSuccess || landed(o)) {
			return true
		}
	}
	return false
}

// withWindows adds to base the windows of more, each after those base
// has for its op, identity and arguments.
func withWindows(base, more map[string][2]string) map[string][2]string {
	for k, w := range more {
		if strings.Contains(k, "\x00#") {
			continue // a later window of k: added with k below
		}
		for m := 1; ; m++ {
			mw, ok := more[windowKey(k, m)]
			if !ok {
				break
			}
			if m > 1 {
				w = mw
			}
			for n := 1; ; n++ {
				if _, ok := base[windowKey(k, n)]; !ok {
					base[windowKey(k, n)] = w
					break
				}
			}
		}
	}
	return base
}

// windowKey is the key of the n-th window of op, identity and arguments k
// (from 1): k itself for the first, then k, NUL, #n. Keys read by op and
// identity (their prefix) see every window.
func windowKey(k string, n int) string {
	if n == 1 {
		return k
	}
	return k + "\x00#" + strconv.Itoa(n)
}

// unseenNote is why a repeat counts when State saw no execution of it
// change anything and no Settle let the world settle.
const unseenNote = "the state changed in neither call"

// overlapNote is why a repeat counts when State saw the world change only
// while executions of it overlapped other calls, so that no change was
// told to be theirs (overlapChange says what changed), and no Settle let
// the world settle. Told as unseenNote, the finding said that State saw
// no execution change the world where it went from {} to {p1:1} (red team
// rtN F7).
const overlapNote = "the state changed only while the calls overlapped others"

// endNeverStill reports whether both ends were read (the run's, end, and
// the baseline's) but one of them did not hold still, and was not the
// state when the agent returned: the world was still changing when it was
// read (judge.finish).
func endNeverStill(tr *Trace, end string, base *Trace) bool {
	return end != "" && base != nil && base.end != "" && !landedByReturn(tr, end, base)
}

// worldNeverStillNote says why the repeat id of op, whose window held what
// the world did by itself in the baseline, was not judged.
func worldNeverStillNote(op, id string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: what changed in its window is what the world did by itself in the baseline (a worker that Setup started, carrying out what a call queued), and the baseline's state kept changing by itself while its end was read (a counter that changes by itself), so neither the baseline nor the end can say whether the repeat did it again; give a Settle that waits for that work (testkit.SettleUntil), or leave the parts that change by themselves out of State", id, op)
}

// neverStillNote says why the repeat id of op was not judged.
func neverStillNote(op, id string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, and the state, here or in the baseline, had not held still when the end was read: the world went on changing by itself after the agent returned (a counter it bumps, an order its services confirm and ship), so the end cannot say whether a second effect stayed; give a Settle that waits for the world to go quiet (testkit.SettleUntil), or leave the parts that change by themselves out of State", id, op, op)
}

// landedByReturn reports whether, in the run of tr (its end state end) and
// in the baseline base, the state at the end was already the state when
// the last delivery returned.
//
// Or the end was read once the state held still (judge.finish): what was
// on its way when the agent returned (a booking queued behind another) had
// landed then, and what the world did by itself meanwhile (a service of
// its own confirming an order) is in both ends alike.
func landedByReturn(tr *Trace, end string, base *Trace) bool {
	return end != "" && (tr.returned == end || tr.endStill) && base != nil && base.end != "" && (base.returned == base.end || base.endStill)
}

// settledEnds reports whether the end of the run of tr (end) and the
// baseline's were both read once a Settle said the world was quiet: as
// good as ends that had landed when the agent returned (landedByReturn),
// which a run with a Settle does not snapshot (Suite.returnState).
func settledEnds(tr *Trace, end string, base *Trace) bool {
	return end != "" && tr.endSettled && base != nil && base.end != "" && base.endSettled
}

// clusterTaken reports whether o ran in a cluster of overlapping calls
// whose snapshots, before and after it, were both taken.
func clusterTaken(o *Operation) bool {
	e := o.effect()
	return e != nil && e.inCluster && e.clErr == "" && e.before != "" && e.after != ""
}

// worldNote is the trace's note for repeat o of the write first, whose
// window held what the world did by itself in the baseline (worldAfter).
func worldNote(o *Operation, first string) string {
	return fmt.Sprintf("%s's repeat %s was not counted although the state changed while it ran: the change is the one the baseline's state went through by itself after %s, with no call in flight (a worker that Setup started, carrying out what the call queued), and the run ended as the baseline did; give a Settle that waits for that work for the suite to judge the repeat by its own window", o.Name, o.ID, first)
}

// finishedNote is the trace's note when repeat o's window finished what
// the first execution's window (first) began, and the run ended as the
// baseline did (judgeRepeatsIn, finishedFirst). What finished it is not
// known: a goroutine Setup left running may have (a queue worker), and
// the note says no more than that.
func finishedNote(o *Operation, first string) string {
	return fmt.Sprintf("%s's repeat %s was not counted although the state changed while it ran: %s's window and its together made the change one execution made in the baseline, no more (the rest of %s's effect landed while the repeat ran; Setup left goroutines running, such as a queue worker carrying out what a call queued, which may have made it), and the run ended as the baseline did; give a Settle that waits for such work for the suite to judge the repeat by its own window", o.Name, o.ID, first, first)
}

// finishedUnjudgedNote says why repeat o was not judged where its window
// finished what the first execution's began but the end could not tell
// whether it set anything more going (judgeRepeatsIn, finishedFirst).
func finishedUnjudgedNote(o *Operation, first string) string {
	return fmt.Sprintf("%s (a repeat of %s with the same arguments) was not judged: %s's window and its together made the change one execution made in the baseline (the rest of %s's effect landed while the repeat ran; Setup left goroutines running, such as a queue worker carrying out what a call queued, which may have made it), but the end of this run was not read once it held still, or the baseline's never held still, so nothing shows whether the repeat set a second effect going that lands later; give a Settle that waits for such work (testkit.SettleUntil)", o.ID, first, first, first)
}

// landedAfterAllNote says why repeat o, whose window held nothing, was not
// judged: the state changed after the agent returned (change), and the run
// ended otherwise than the baseline did (judgeRepeatsIn, landedAfterAll,
// and landedUnread, whose end had not held still when its wait ran out).
func landedAfterAllNote(o *Operation, first, change string) string {
	return fmt.Sprintf("%s (a repeat of %s) was not judged: nothing changed in its window, but the state changed after the agent returned (%s) and the run ended otherwise than the baseline did; a second effect the repeat set going that landed after its window (a mail a worker sent again) cannot be told there from what the world did by itself (a worker that Setup started); give a Settle that waits for that work (testkit.SettleUntil)", o.ID, first, change)
}

// deferredNote is the trace's note when a repeat of op (the first, id)
// whose executions changed the state in no window of their own was judged
// by the end state (judgeRepeatsIn).
func deferredNote(op, id string) string {
	return fmt.Sprintf("%s changed the state in none of its calls, here or in the baseline, where the state changed outside every traced write and had landed when the agent returned: its effect lands outside its calls (a transaction's commit, or nothing after a rollback; a booking made after an answer); its repeat %s was judged by the end state, which is the baseline's, so the repeats left nothing of their own (had the run ended otherwise, each execution would count)", op, id)
}

// carriedAloneNote is the trace's note when repeat id of op, a call served
// with the run carried and no traced call around it, was judged by the
// settled end (judgeRepeatsIn).
func carriedAloneNote(op, id string) string {
	return fmt.Sprintf("%s changed the state in none of its calls, here or in the baseline, where the state changed outside every traced write: its calls were served with the run carried (runtime.Resolve) and no traced call around them, so no Settle closed their windows (one on the server's goroutine may wait for the call itself), and what they set going landed after them; its repeat %s was judged by the end state, read once the Settle said the world was quiet, which is the baseline's, so the repeats left nothing of their own (had the run ended otherwise, each execution would count)", op, id)
}

// renamedNote is the trace's note for repeat o, absorbed because its
// window only gave rows other names the sink made.
func renamedNote(o *Operation, first string) string {
	return fmt.Sprintf("%s repeated %s and only gave what it wrote another name the sink hands out (%s): the same rows, one of them under a new id, as an INSERT OR REPLACE leaves a row it deleted and inserted again; no second effect. Where something refers to the old id, the change is yours to judge", o.ID, first, clip(o.StateChange, maxChange/2))
}

// reorderNote is the trace's note for repeat o, absorbed because its
// window only reordered a list.
func reorderNote(o *Operation, first string) string {
	return fmt.Sprintf("%s repeated %s and only changed the order of entries in its window (%s): no execution of %s made an order its effect, so it is no second effect; a list read in the order of a column the write stamps (a timestamp, a rowid given anew) moves its rows without changing them", o.ID, first, clip(o.StateChange, maxChange/2), o.Name)
}

// unseenFirstNote is why a repeat that changed the state counts when no
// earlier execution of it with the same arguments was seen alone, in the
// run or in the baseline: the suite cannot tell a second effect from a
// set back of what a later write changed.
const unseenFirstNote = "no earlier execution of it with these arguments ran alone, here or in the baseline, so the suite cannot tell whether the repeat did it again or set back what a later write changed; it counts"

// wholeNote is why a repeat that changed the state counts when its
// earlier executions overlapped other writes and it did, from another
// start, all that one execution does in the baseline (redo.whole).
const wholeNote = "its earlier executions overlapped other writes, and it did all that one execution of it does in the baseline, from another start, so the suite cannot tell whether the repeat did it again or set back what a later write changed; it counts"

// baseWinOf returns the baseline's windows for redone: none in the
// baseline itself.
func baseWinOf(baseWin map[string][2]string, baseline bool) map[string][2]string {
	if baseline {
		return nil
	}
	return baseWin
}

// judgeRepeats decides, for every op and identity executed more than once,
// which repeats had an effect, marks the trace's operations (Repeat,
// JudgedBy) and returns the findings: one duplicate_write per op and
// identity whose repeats had effects, one not_idempotent per op declared
// idempotent whose equal repeat changed the state.
//
// end and baseEnd are the end-of-run snapshots of this run and of the
// baseline ("" when not taken); baseline says this run is the baseline.
// fold says the duplicate_write findings after the first are folded into
// it (a redelivery): they are returned without a message.
func judgeRepeats(tr *Trace, end, baseEnd string, baseWin map[string][2]string, baseline, fold bool) []Finding {
	return judgeRepeatsIn(nil, tr, end, baseEnd, baseWin, nil, baseline, fold, nil)
}

// changedBeyondNested reports whether o's own window changed a place of
// the state that no call made inside o changed in its own window: an
// effect o had itself. False when o's window is not known.
func changedBeyondNested(tr *Trace, o *Operation, views *stateViews) bool {
	if o.effect() == nil || o.Overlapped {
		return false
	}
	before, after := o.stateWindow() // taken, though the Settle around them timed out
	if before == "" || after == "" || before == after {
		return false
	}
	own, ok := changedPlaces(views.of(before), views.of(after))
	if !ok {
		return false
	}
	inner := map[string]bool{}
	for i := range tr.Ops {
		n := &tr.Ops[i]
		if n.Parent != o.ID || n.effect() == nil {
			continue
		}
		b, a := n.stateWindow()
		if b == "" || a == "" {
			return false // not known what the inner call changed
		}
		ps, ok := changedPlaces(views.of(b), views.of(a))
		if !ok {
			return false // not known what the inner call changed
		}
		for _, p := range ps {
			inner[p.key()] = true
		}
	}
	for _, p := range own {
		if !inner[p.key()] {
			return true
		}
	}
	return false
}

// crashCut returns the IDs of the calls of tr whose own work a crash cut
// short: a call made inside one (with its context: a job it queued, which
// a worker of Setup's carries out) was stopped because its invocation had
// crashed (Call.stopIfCrashed), and so is every call it was made inside
// of. nil when no call was stopped so.
func crashCut(tr *Trace) map[string]bool {
	var cut map[string]bool
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Parent == "" || o.Status != StatusFailed || o.Error != errNotExecutedCrashed {
			continue
		}
		if cut == nil {
			cut = map[string]bool{}
		}
		for p, depth := o.Parent, 0; p != "" && depth < len(tr.Ops); depth++ {
			cut[p] = true
			next := ""
			for j := range tr.Ops {
				if tr.Ops[j].ID == p {
					next = tr.Ops[j].Parent
					break
				}
			}
			p = next
		}
	}
	return cut
}

// judgeRepeatsIn is judgeRepeats with what the baseline says of the
// changes made outside traced writes (un, nil for none): a repeat's window
// is judged without those another delivery's own code made in it
// (untraced.go), and the trace's notes say so. The findings are appended
// to out: a suite hands in the slice of the scenario before, emptied
// (Suite.duplicates), where one made for every scenario with a repeat took
// 17 KB of the ten-write suite's 755.
func judgeRepeatsIn(out []Finding, tr *Trace, end, baseEnd string, baseWin map[string][2]string, un *untraced, baseline, fold bool, baseTr *Trace) []Finding {
	type key struct{ op, id string }
	// The effective writes by op and identity, in order of first
	// execution, with the index of the first; groups holds, for those
	// executed more than once, the indexes of their calls in trace order
	// (by position in order; nil when none was). Keys are looked up by a
	// scan while they are few, as in most runs, and in a map beyond.
	type firstWrite struct {
		k key
		i int
		n int // the calls that executed it
	}
	var (
		order  []firstWrite
		few    [16]firstWrite // order's array up to 16 writes
		index  map[key]int    // the position of each key in order, past 16 keys
		groups [][]int
	)
	// next is the position after the key found last: a redelivery
	// repeats the writes in their order, and finds each there without a
	// scan.
	next := 0
	posOf := func(k key) (int, bool) {
		if index != nil {
			p, ok := index[k]
			return p, ok
		}
		if next < len(order) && order[next].k == k {
			next++
			return next - 1, true
		}
		for p := range order {
			if order[p].k == k {
				next = p + 1
				return p, true
			}
		}
		return 0, false
	}
	executed := func(o *Operation) bool {
		if o.Kind != KindWrite || o.Replayed || o.IdentityError != "" {
			return false
		}
		return o.Status == StatusSuccess || landed(o) || failedTogether(o)
	}
	repeated := 0 // writes executed more than once: most have one finding
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if !executed(o) {
			continue
		}
		k := key{o.Name, o.Identity}
		if p, seen := posOf(k); seen {
			if order[p].n++; order[p].n == 2 {
				repeated++
			}
			continue
		}
		if order == nil {
			// On the stack while the writes are few, as in most runs
			// (a ten-write agent's redelivery has ten): made for the
			// calls left, in every scenario, the list took 19 KB of
			// the ten-write suite's 775.
			order = few[:0]
		}
		order = append(order, firstWrite{k: k, i: i, n: 1})
		if index != nil {
			index[k] = len(order) - 1
		} else if len(order) > 16 {
			index = make(map[key]int, len(order))
			for p, w := range order {
				index[w.k] = p
			}
		}
	}
	if repeated > 0 {
		// The calls of each repeated write, in one allocation for them
		// all: a map of a slice for each, grown call by call, was 3
		// allocations a write for the ten-write agent's redeliveries.
		members := 0
		for p := range order {
			if order[p].n > 1 {
				members += order[p].n
			}
		}
		groups = make([][]int, len(order))
		all := make([]int, members)
		for p, w := range order {
			if w.n > 1 {
				groups[p], all = all[:1:w.n], all[w.n:]
				groups[p][0] = w.i
			}
		}
		for i := order[0].i + 1; i < len(tr.Ops); i++ {
			o := &tr.Ops[i]
			if !executed(o) {
				continue
			}
			if p, _ := posOf(key{o.Name, o.Identity}); order[p].n > 1 && order[p].i != i {
				groups[p] = append(groups[p], i)
			}
		}
	}
	// A write that failed by itself yet changed the state (landed) is an
	// execution of its group only if another execution of it, before or
	// after, changed a place it changed too: a declined charge that
	// recorded the attempt, retried with another card, is one charge, and
	// two charges whose gateway moved the money and then timed out
	// confirming it are two. Looked for after it only, the last landed
	// call of a group was always left out, and a redelivery that landed
	// the charge again, failing as the first delivery's had, was no
	// duplicate (red team rtL R0, adapters/mcp/rtl/failedeffect
	// TestAlwaysErrState; adapters/eino/rtl/interrupt TestPayThenApprove,
	// a payment made before the approval interrupt).
	var views stateViews // the snapshots decoded, for repeats that changed the state (redone)
	leaveOut(groups, func(idx []int, i int) bool {
		o := &tr.Ops[i]
		return landed(o) && !redoneByAnother(tr, o, idx, &views)
	})
	// What one delivery left, for calls that overlapped.
	// endSame holds the end states the same when their lists hold the same
	// entries in another order (rows inserted in another order); for an op
	// whose one execution in the baseline reordered a list, order is its
	// effect, and only the end state byte for byte is the same (reorders).
	endExact := !baseline && end != "" && baseEnd != "" && end == baseEnd
	sameKnown, sameInOrder := endExact, endExact
	var named map[string]bool
	namedByRun := func() map[string]bool { // the names the run's calls were given (namedIn)
		if named == nil {
			named = namedIn(tr)
		}
		return named
	}
	// sinkNames pairs the names the sink gave this run with those it gave
	// the baseline: what the write calls of one op, identity and arguments
	// answered (sinkRenaming), and the tokens it drew for each run that
	// no call was given or answered, where the two ends hold them at one
	// place (withFreshTokens: an api_token DEFAULT md5(random()::text)).
	var sinkRn map[string]string
	sinkKnown := false
	sinkNames := func() map[string]string {
		if !sinkKnown {
			sinkKnown = true
			if baseTr != nil && !baseline {
				sinkRn = withFreshTokens(sinkRenaming(tr, baseTr), end, baseEnd, tr, baseTr)
			}
		}
		return sinkRn
	}
	// inBaseNames returns key (an op's name, identity and arguments, as
	// JSON) with the names the sink gave this run, quoted, in the
	// baseline's (sinkNames); key itself where there are none.
	var quotedRn *strings.Replacer
	inBaseNames := func(key string) string {
		rn := sinkNames()
		if len(rn) == 0 {
			return key
		}
		if quotedRn == nil {
			quoted := make([]string, 0, 2*len(rn))
			for x, y := range rn {
				quoted = append(quoted, encode(x), encode(y))
			}
			quotedRn = strings.NewReplacer(quoted...)
		}
		return quotedRn.Replace(key)
	}
	// They are the same too when they differ only by the names of members
	// that creates made (T-1 and T-2 swapped): two parallel creates of one
	// delivery ran in another order than in the baseline (madenames.go).
	var madeInBase madeNames
	madeKnown := false
	baseWindows := func() [][2]string { // the baseline's windows, read for what its creates made
		ws := make([][2]string, 0, len(baseWin))
		for _, w := range baseWin {
			ws = append(ws, w)
		}
		if un != nil {
			// And what the baseline's state gained outside its traced
			// writes (a transaction's commit): the rows a table numbered
			// from a sequence that a rolled back attempt of the run
			// advanced.
			ws = append(ws, un.base.gaps...)
		}
		return ws
	}
	baseMadeNow := func() madeNames { // the members one execution in the baseline made (madeBy)
		if !madeKnown {
			madeKnown = true
			madeInBase = madeBy(baseWindows())
		}
		return madeInBase
	}
	// baseMadeNowWithoutClocks is baseMadeNow from the windows without
	// the moments no call was given (withoutClocks): a payment row the
	// baseline made with its created_at is the row, once both ends have
	// theirs left out.
	var madeNoClocks madeNames
	baseMadeNowWithoutClocks := func() madeNames {
		if madeNoClocks == nil {
			ws := baseWindows()
			for i, w := range ws {
				if holdsClock(w[0]) || holdsClock(w[1]) {
					ws[i] = [2]string{withoutClocks(w[0], namedByRun()), withoutClocks(w[1], namedByRun())}
				}
			}
			madeNoClocks = madeBy(ws)
		}
		return madeNoClocks
	}
	// baseMadeNames are the names of the members of the baseline's end
	// that its creates made (madeNamesIn): names the sink hands out.
	var baseMadeNames map[string]bool
	baseMadeNamesNow := func() map[string]bool {
		if baseMadeNames == nil {
			baseMadeNames = map[string]bool{}
			if b, err := decodeState(baseEnd); err == nil && baseEnd != "" {
				for _, n := range madeNamesIn(b, baseMadeNow()) {
					baseMadeNames[n] = true
				}
			}
		}
		return baseMadeNames
	}
	// sinkNums pairs the whole numbers the sink answered this run as
	// names (an order's id from a counter Setup does not reset) with the
	// baseline's (sinkNumbers).
	var sinkNumRn numberNames
	sinkNumKnown := false
	sinkNums := func() numberNames {
		if !sinkNumKnown {
			sinkNumKnown = true
			if baseTr != nil && !baseline {
				sinkNumRn = sinkNumbers(tr, baseTr)
			}
		}
		return sinkNumRn
	}
	// sameChangeInBaseNumbers says whether the change from a to b (one
	// execution's in the baseline) is the change from c to d (the run's)
	// once the numbers the sink answered this run are read in the
	// baseline's where they stand as ids or references (an order_id of
	// 25 where the baseline's order was 1: numbersInBaseNames), up to the
	// names of the rows each change made (sameChangeUpToMadeNames). A
	// count or a quantity keeps its number, so a visit counted twice
	// still differs from one (TestACountEqualToARenamedIDIsNoName).
	sameChangeInBaseNumbers := func(a, b, c, d string) bool {
		rn := sinkNums()
		if len(rn) == 0 {
			return false
		}
		c2, ok1 := numbersInBaseNames(c, rn)
		d2, ok2 := numbersInBaseNames(d, rn)
		if !ok1 || !ok2 || c2 == normState(c) && d2 == normState(d) {
			return false // nothing renamed: the comparisons before said it all
		}
		return describeChange(a, b, -1) == describeChange(c2, d2, -1) ||
			sameChangeUpToMadeNames(a, b, c2, d2, namedByRun(), baseMadeNamesNow())
	}
	// slotsAgreeInBaseNames is slotsAgree for the change from a to b (one
	// execution's in the baseline) and from c to d (the run's), read in
	// the baseline's names where the sink gave this run names of its
	// own, where either moves entries: the comparison up to made names
	// takes lists in any order, and a job boosted twice past the one above
	// it, whose audit row names no one, read as one boost (fifth red team,
	// /tmp/rt39 q2 TestFlatRace).
	slotsAgreeInBaseNames := func(a, b, c, d string) bool {
		if !movesEntries(a, b) && !movesEntries(c, d) {
			return true
		}
		c2, d2 := c, d
		if rn := sinkNames(); len(rn) > 0 {
			if r1, r2 := renamedState(c, rn), renamedState(d, rn); r1 != "-" && r2 != "-" {
				c2, d2 = r1, r2
			}
		}
		return slotsAgree(a, b, c, d, c2, d2)
	}
	// sameChangeInBaseNames says whether the change from a to b (one
	// execution's in the baseline) is the change from c to d (the run's)
	// once the names the sink gave this run are read in the baseline's
	// (sinkNames), whatever stood around it: what was added and removed,
	// not the whole states. Two deliveries at once of an agent that adds
	// each of two orders' lines in a goroutine of its own added the apple
	// line to an empty table, where the baseline added it beside the pear
	// line, each under its order's random id (red team, /tmp/rt29 s1
	// TestServerID: a duplicate_write about half the runs). Up to the
	// names of the rows each change made, as sameChangeInBaseNumbers: a
	// line's own random id, which no call was answered (TestServerIDRaw).
	// sameInBaseNames compares the whole states, and an added pair of rows
	// still differs from one.
	sameChangeInBaseNames := func(a, b, c, d string) bool {
		rn := sinkNames()
		if len(rn) == 0 {
			return false
		}
		c2, d2 := renamedState(c, rn), renamedState(d, rn)
		if c2 == "-" || d2 == "-" || c2 == normState(c) && d2 == normState(d) {
			return false // nothing renamed: the comparisons before said it all
		}
		if describeChange(a, b, -1) == describeChange(c2, d2, -1) {
			return true
		}
		// anyOrder compares the changes with lists in any order: up to
		// the names of the rows each change made, or with every list's
		// entries sorted. A list the sink's random ids order (orders by
		// id, each with its lines) holds the pear's order first here and
		// second in the baseline, and lists of one length are compared
		// place by place (red team, /tmp/rt35 s3 TestHTTPList).
		anyOrder := func() bool {
			if sameChangeUpToMadeNames(a, b, c2, d2, namedByRun(), baseMadeNamesNow()) {
				return true
			}
			ch := describeChange(sortedState(a), sortedState(b), -1)
			return ch != "" && ch == describeChange(sortedState(c2), sortedState(d2), -1)
		}
		baseMoves, runMoves := movesEntries(a, b), movesEntries(c2, d2)
		if !baseMoves && !runMoves {
			return anyOrder()
		}
		// Where either change moves entries of a list, where it leaves
		// them is part of what it did: sorted, a job boosted twice past
		// two others, in a queue by a priority State does not show, read
		// as one boost (second red team, /tmp/rt36 q2), also up to the
		// name of the audit row each boost wrote (third, /tmp/rt37 r1).
		// Where the two started from one state in one order and end in
		// one order, with the moves alike, that is one execution's
		// change.
		if c2 == normState(a) && baseMoves == runMoves &&
			sameChangeUpToMadeNamesInOrder(a, b, c2, d2, namedByRun(), baseMadeNamesNow()) {
			return true
		}
		// Else an entry the change edited or made must stand where one
		// execution's does among the entries neither changed, in a list
		// no field of its entries orders, unless the two could be ties
		// the random names order (slotsAgree): ties by random ids in
		// another order hid a job boosted twice past the one above it
		// (fourth red team, /tmp/rt38 s1 TestTieRaceEv), and a job set to
		// the ties' priority, which lands among them as its random id
		// falls, was a duplicate_write a run in six where the befores
		// stood in one order (fifth red team, /tmp/rt39 q1
		// TestSetGuardIntoTies, since 8624416).
		return slotsAgree(a, b, c, d, c2, d2) && anyOrder()
	}
	// alike says whether two end states are the same up to what the runs
	// cannot make alike: their clocks' stamps (withoutClocks), the order of
	// a list's entries (sameUpToOrder), and the names creates made and the
	// numbers a sequence handed out (sameUpToMadeNames).
	alike := func(e, b string) bool {
		if baseline || e == "" || b == "" {
			return false
		}
		if e == b {
			return true
		}
		made := baseMadeNow
		if holdsClock(e) || holdsClock(b) {
			// The two runs' clocks stamped what they made at other
			// moments (withoutClocks); so did the baseline's windows
			// that say which names its creates made.
			e, b = withoutClocks(e, namedByRun()), withoutClocks(b, namedByRun())
			made = baseMadeNowWithoutClocks
		}
		if sameUpToOrder(e, b) {
			return true
		}
		if sameUpToMadeNames(e, b, made(), namedByRun()) {
			return true
		}
		// In the baseline's names: the names the sink gave this run as
		// text (a ticket's random UUID) held wherever the run put them
		// (a comment's ticket, a task's parent, a title that quotes it),
		// where references read off their keys do not reach (red team,
		// PostgreSQL, /tmp/rt27 p1).
		if rn := sinkNames(); len(rn) > 0 {
			if r := renamedState(e, rn); r != normState(e) {
				r2 := normState(b)
				if r == r2 || sameUpToOrder(r, r2) || sameUpToMadeNames(r, r2, made(), namedByRun()) {
					return true
				}
			}
		}
		// And the numbers the sink answered this run (an order's id from
		// a counter Setup does not reset) where they stand as ids or
		// references: numbersInBaseNames, which leaves a count alone.
		if rn := sinkNums(); len(rn) > 0 {
			if r, ok := numbersInBaseNames(e, rn); ok && r != normState(e) {
				r2 := normState(b)
				return r == r2 || sameUpToOrder(r, r2) || sameUpToMadeNames(r, r2, made(), namedByRun())
			}
		}
		return false
	}
	// wentThrough says whether the baseline's state went, with no traced
	// write in flight, from a state alike from to one alike to, all three
	// read through norm: the world went on by itself there (a queue worker
	// that Setup started mailed what a call had queued). Or part of the
	// way, where the world's change came in steps (a mail, then its
	// receipt 20 ms later) and a window closed between them: the baseline
	// went through that state as its end was read again (passed), or held
	// it when its agent returned.
	wentThrough := func(from, to string, norm func(string) string) bool {
		for _, g := range un.base.gaps {
			if !alike(from, norm(g[0])) {
				continue
			}
			if alike(to, norm(g[1])) {
				return true
			}
			if g[1] != un.base.end {
				continue
			}
			for _, p := range append([]string{un.base.returned}, un.base.passed...) {
				if p != "" && p != g[0] && alike(to, norm(p)) {
					return true
				}
			}
		}
		// Or to is part of the way between the two states of a gap,
		// though the baseline never showed it: its agent returned after
		// both steps had landed, as a loaded machine (go test -race
		// beside busy loops) delayed it, and the mail and its receipt
		// came in one gap. The window of a correct agent's repeat, holding
		// the mail alone, was a duplicate_write (3 runs of 20;
		// TestWorldWorkerStepsThatLandedBeforeTheBaselineReturned).
		for _, g := range un.base.gaps {
			if !alike(from, norm(g[0])) {
				continue
			}
			t, a, b := views.of(to), views.of(norm(g[0])), views.of(norm(g[1]))
			if t != nil && a != nil && b != nil && partWay(t.v, a.v, b.v) {
				return true
			}
		}
		return false
	}
	// worldRestless is worldAfter for a baseline whose state never held
	// still, or changed places by themselves twice or more as its end was
	// read (a heartbeat in State, restlessKnown): the places that went on changing by
	// themselves (untraced.restless) left out of every state compared,
	// and the end not consulted, since it says nothing there.
	worldRestless := func(from, to string) bool {
		if un == nil || baseline || from == "" || to == "" || len(un.base.passed) == 0 || un.base.endStill && !un.restlessKnown() {
			return false // still, or never read again: not a restless world
		}
		f, t := un.restlessOut(from), un.restlessOut(to)
		if f == t {
			return false // only the heartbeat moved: not this rule's
		}
		return wentThrough(f, t, un.restlessOut)
	}
	// worldRestlessOwn is worldRestless where the baseline's end never saw
	// a place move by itself but this run's own end, read again, saw
	// places change twice or more (untraced.ownRestless): a heartbeat
	// whose beats, on a loaded machine, all came before the baseline's end
	// was read. It only leaves a repeat unjudged (CI197,
	// TestAHeartbeatTheBaselineNeverSawBeatIsRestless).
	worldRestlessOwn := func(from, to string) bool {
		if un == nil || baseline || from == "" || to == "" || len(un.own) == 0 {
			return false
		}
		un.load()
		if len(un.ownRestless) == 0 {
			return false
		}
		f, t := un.ownRestlessOut(from), un.ownRestlessOut(to)
		if f == t {
			return false
		}
		return wentThrough(f, t, un.ownRestlessOut)
	}
	endSame := func() bool { // read only for overlapped repeats: it decodes both snapshots
		if !sameKnown {
			sameKnown, sameInOrder = true, alike(end, baseEnd)
		}
		return sameInOrder
	}
	// endByOthers says the end differs from the baseline's only at
	// places that repeats of other ops changed in their windows, for op
	// and identity id, whose calls idx all held still (endChangedByOthers);
	// endBy keeps those ops, by op and identity, for the note.
	var endBy map[string][][]string
	var beside []besideRepeat // the repeats absorbed so (besideJudged)
	endByOthers := func(idx []int, op, id string) bool {
		by := endChangedByOthers(tr, idx, op, id, end, baseEnd, baseWin, &views)
		if by == nil {
			return false
		}
		if endBy == nil {
			endBy = map[string][][]string{}
		}
		endBy[op+"\x00"+id] = by
		return true
	}
	// worldAfter says whether the world took the baseline's state from a
	// state alike from to one alike to by itself (wentThrough). Only
	// without a Settle (un): with one, such a change may be a traced
	// write's effect landing late; and only where this run's end was read
	// once it held still (judge.worldMoves), for the end to hold what a
	// repeat set going that lands after its window.
	worldAfter := func(from, to string) bool {
		if un == nil || baseline || !tr.endStill || from == "" || to == "" {
			return false
		}
		return wentThrough(from, to, func(s string) string { return s })
	}
	// restNorm reads a state with the places that change by themselves
	// left out (worldRestless), where the baseline never held still.
	restlessWorld := !baseline && un != nil && len(un.base.passed) > 0 && (!un.base.endStill || un.restlessKnown())
	restNorm := func(s string) string {
		if !restlessWorld {
			return s
		}
		return un.restlessOut(s)
	}
	// onlyRestless says o's window changed only what changes by itself.
	onlyRestless := func(o *Operation) bool {
		before, after := o.stateWindow()
		return restlessWorld && before != after && restNorm(before) == restNorm(after)
	}
	// finishedFirst says repeat o's window finished what the first
	// execution's window began, and no more: first's window went from a
	// state alike where one execution started in the baseline, not yet to
	// where it ended, nothing changed between the two, and o's window
	// ended where that execution did. From the first's start to the
	// repeat's end, the two made one execution's change (a second mail,
	// a counter bumped again, a row inserted twice would show there); the
	// steps between need not be the baseline's (the outbox row queued,
	// then marked sent, went null → unsent → sent). The world took
	// the rest of one execution's change by itself (a worker of Setup's
	// mailing what the call queued) while the repeat ran; in the
	// baseline, on a loaded machine, the mail landed before the call
	// returned, in its window, and the baseline never showed the world
	// alone: no gap for worldAfter to read. The correct agent's repeat
	// (an upsert, the queue outside State) was a duplicate_write (1 run
	// of 10 under -race beside CPU burners). Only with no Settle, where
	// Setup left goroutines running, and only for a repeat of first's
	// call: with other arguments (an upsert of the customer's other name)
	// o does a change of its own, and first's start and o's end could
	// stand for one execution of another call in the baseline (two
	// upserts of one customer in one turn, run one after the other in the
	// other order by a schedule or a restart: four scenarios unjudged,
	// with a note that blamed a worker that did not exist, red team rtS
	// #3).
	finishedFirst := func(o, first *Operation) bool {
		if baseline || baseTr == nil || !baseTr.worldLive || tr.endSettled || first.effect() == nil || first.Overlapped || o.Overlapped || first.stateSettled() || o.stateSettled() || argsKey(o) != argsKey(first) {
			return false
		}
		fb, fa := first.stateWindow()
		ob, oa := o.stateWindow()
		if fb == "" || fa == "" || oa == "" || restNorm(fb) == restNorm(fa) || restNorm(fa) != restNorm(ob) {
			return false
		}
		// One execution of first's call in the baseline: a window of its
		// op, identity and arguments, where the baseline has one (else,
		// given names the sink made anew, any of its op and identity).
		prefix := o.Name + "\x00" + o.Identity + "\x00"
		call := prefix + argsKey(first)
		if _, ok := baseWin[call]; ok {
			prefix = call
		}
		for wk, w := range baseWin {
			if !strings.HasPrefix(wk, prefix) || w[0] == "" || w[1] == "" {
				continue
			}
			if rest := wk[len(prefix):]; prefix == call && rest != "" && !strings.HasPrefix(rest, "\x00#") {
				continue // another call whose arguments begin as first's
			}
			b0, b1 := restNorm(w[0]), restNorm(w[1])
			if b0 != b1 && alike(restNorm(fb), b0) && !alike(restNorm(fa), b1) && alike(restNorm(oa), b1) {
				return true
			}
		}
		return false
	}
	// finishedAll says repeat o's window made the whole of one
	// execution's change in the baseline's window, no more, where the
	// first execution's window held none of it: the first's effect landed
	// late, in the repeat's window (a worker of Setup's carrying out what
	// it queued, slower than in the baseline, where it landed within the
	// call). Counted, a correct River agent on PostgreSQL was a
	// duplicate_write in crash_restart, 1 run of 20 (red team rtR #2).
	finishedAll := func(o, first *Operation) bool {
		if baseline || baseTr == nil || !baseTr.worldLive || tr.endSettled || first.effect() == nil || first.Overlapped || o.Overlapped || first.stateSettled() || o.stateSettled() {
			return false
		}
		fb, fa := first.stateWindow()
		ob, oa := o.stateWindow()
		if fb == "" || fa == "" || oa == "" || restNorm(fb) != restNorm(fa) || restNorm(fa) != restNorm(ob) {
			return false
		}
		prefix := o.Name + "\x00" + o.Identity + "\x00"
		for wk, w := range baseWin {
			if !strings.HasPrefix(wk, prefix) || w[0] == "" || w[1] == "" {
				continue
			}
			b0, b1 := restNorm(w[0]), restNorm(w[1])
			if b0 != b1 && alike(restNorm(fb), b0) && alike(restNorm(oa), b1) {
				return true
			}
		}
		return false
	}
	// landedAfterAll says repeat o, whose window held nothing, ran in a
	// run with no Settle where Setup left goroutines running, whose state
	// changed after the agent returned and whose end, read once it held
	// still, is not the baseline's.
	landedAfterAll := func(o *Operation) bool {
		return !baseline && baseTr != nil && baseTr.worldLive && !tr.endSettled && !o.stateSettled() && tr.endStill &&
			tr.returned != "" && end != "" && baseEnd != "" && !alike(tr.returned, end) && !endSame()
	}
	// landedUnread is landedAfterAll where this run's end had not held
	// still when its wait ran out (judge.finish), in a world whose
	// baseline's end did hold still: the second mail the repeat asked
	// for, which a loaded machine's mailer sent a few hundred ms after
	// the agent returned, in the end read last but with too little
	// stillness after it, was absorbed as "nothing changed in its
	// window", a plain pass of the buggy agent (CI, under -race:
	// TestWorldWorkerSecondMailAfterTheFirstWentOut). An end that did
	// not hold still says less than one that did, never more: unjudged
	// as well.
	landedUnread := func(o *Operation) bool {
		return !baseline && baseTr != nil && baseTr.worldLive && baseTr.endStill && !restlessWorld && !tr.endSettled && !o.stateSettled() && !tr.endStill &&
			tr.returned != "" && end != "" && baseEnd != "" && !alike(tr.returned, end) && !endSame()
	}
	// notLandedYet says overlapped repeat o ran where no Settle was given
	// and Setup left goroutines running, and the state did not change
	// from its cluster's end to the run's end, which is not the
	// baseline's: what the calls set going had not landed when the end
	// was read.
	notLandedYet := func(o *Operation) bool {
		_, after := o.stateWindow()
		return !baseline && baseTr != nil && baseTr.worldLive && !tr.endSettled && !o.stateSettled() &&
			end != "" && baseEnd != "" && after != "" && alike(end, after) && !endSame()
	}
	// copiedAfter says the end of this run, read once it held still (or
	// as the agent left it), holds one more copy of what one execution of
	// o's call added in the baseline's window, beside all the baseline's
	// end holds (oneMoreCopy, nochange.go), in a run with no Settle whose
	// world had goroutines Setup left running.
	copiedAfter := func(o *Operation) bool {
		// A world that acts after the calls: a goroutine Setup left
		// running, or, with none, a change the baseline's state made
		// after its last write returned (a timer a tool armed, a service
		// that answers 202 and books later: judge.lateLag).
		late := baseTr != nil && !baseTr.worldLive && baseTr.odd().lateLag > 0
		if baseline || baseTr == nil || !baseTr.worldLive && !late || tr.endSettled || o.stateSettled() || restlessWorld || !landedByReturn(tr, end, baseTr) || endExact {
			return false
		}
		prefix := o.Name + "\x00" + o.Identity + "\x00"
		alone := soleWrite(baseTr)
		for wk, w := range baseWin {
			if !strings.HasPrefix(wk, prefix) {
				continue
			}
			if oneMoreCopy(baseEnd, end, w, &views) {
				return true
			}
			// The baseline's one write: all its world did after it is
			// that write's effect too (a consumer that booked the
			// refund after the call returned).
			if alone && w[0] != "" && oneMoreCopy(baseEnd, end, [2]string{w[0], baseEnd}, &views) {
				return true
			}
			// And what it did after the call's window alone, where the
			// call changed the state in its window too: a keyed charge
			// beside a receipt booked 10 ms later, the receipt booked
			// twice by a retry (red team rS #1: SAFE on every run).
			if alone && w[1] != "" && w[1] != w[0] && oneMoreCopy(baseEnd, end, [2]string{w[1], baseEnd}, &views) {
				return true
			}
		}
		return false
	}
	var reorderCache map[key]bool
	// baseReorders says a window of k in baseWin reordered a list.
	baseReorders := func(k key) bool {
		if len(baseWin) == 0 {
			return false // no window to read (no State): no key to build, no cache (perf: see seenInBase)
		}
		if r, ok := reorderCache[k]; ok {
			return r
		}
		r := false
		prefix := k.op + "\x00" + k.id + "\x00"
		for wk, w := range baseWin {
			if strings.HasPrefix(wk, prefix) && reordersList(w[0], w[1]) {
				r = true
				break
			}
		}
		if reorderCache == nil {
			reorderCache = map[key]bool{}
		}
		reorderCache[k] = r
		return r
	}
	reorders := func(k key) bool { // whether k's baseline window reordered a list (read only when the end differs in order)
		return !endExact && baseReorders(k)
	}
	endChange := ""
	// endParts are the parts of the state the run left otherwise than the
	// baseline (nil when the same, or either end is not known).
	var endParts *parts
	if !baseline && end != "" && baseEnd != "" && !endExact {
		endChange = describeAcrossRuns(baseEnd, end, namedByRun(), maxChange)
		endParts = partsOf(baseEnd, end, &views)
	}
	// The parts of the state each op and identity changed in the baseline
	// (in every window of it there), read only by the end-state judgement.
	var touchedBy map[key]*parts
	touched := func(k key) *parts {
		if t, ok := touchedBy[k]; ok {
			return t
		}
		t := &parts{}
		prefix := k.op + "\x00" + k.id + "\x00"
		for wk, w := range baseWin {
			if strings.HasPrefix(wk, prefix) {
				t.merge(partsOf(w[0], w[1], &views))
			}
		}
		if touchedBy == nil {
			touchedBy = map[key]*parts{}
		}
		touchedBy[k] = t
		return t
	}

	// A write that failed by itself while it overlapped other writes
	// (failedTogether) has no window of its own to show it landed: it is
	// an execution of its group only where the run ended otherwise than
	// one delivery in a part of the state that its call, with these
	// arguments, changed in the baseline, and its cluster changed there.
	// Two charges whose gateway timed out confirming them, of two
	// deliveries at once, overlapped now and then (3 to 8 runs in 20
	// under -race), and the concurrent delivery missed the charge made
	// twice (red team rtL R0). A declined card that changed nothing in
	// the baseline, or a conflict whose run ended as one delivery, stays
	// out.
	leaveOut(groups, func(_ []int, i int) bool {
		o := &tr.Ops[i]
		return failedTogether(o) && !landedTogether(o, end, baseEnd, endParts, baseWin, baseline, inBaseNames, endSame, &views)
	})

	// The mirror of the landed rule above: a write that succeeded yet
	// changed nothing, before any execution of its group that changed the
	// state, is no execution of it where nothing of it can have landed
	// later (noEffectFirst): a tool that answered its service's 404 as
	// data for the model to read ({"error": "no such invoice"}), and the
	// model, having opened the invoice, attached again, which made the one
	// line (red team rtS #7: "one effect done 2 times" on the correct
	// agent's baseline). Only where the baseline's state never changed
	// outside a traced write, and, past the baseline, where the change
	// that stands for the group's one effect is one the baseline saw a
	// call of the op, identity and arguments make in its own window
	// (madeInItsCall): an op whose effect lands after its call (a queue a
	// worker of Setup's ships from, later) shows an unchanged window there,
	// and a repeat's window may hold the first call's effect, not its own
	// (TestSettleUntilWaitsForTheWorldItself's lazy outbox).
	madeInItsCall := func(l *Operation) bool {
		if baseline {
			return true // no other run to say how the op makes its effect
		}
		lb, la := l.stateWindow()
		key := inBaseNames(l.Name + "\x00" + l.Identity + "\x00" + argsKey(l))
		for n := 1; ; n++ {
			w, ok := baseWin[windowKey(key, n)]
			if !ok {
				return false
			}
			if w[0] != w[1] && (describeChange(w[0], w[1], -1) == describeChange(lb, la, -1) ||
				sameChangeUpToMadeNames(w[0], w[1], lb, la, namedByRun(), baseMadeNamesNow()) ||
				sameChangeInBaseNames(w[0], w[1], lb, la)) {
				return true
			}
		}
	}
	// Past the baseline, the call that changed nothing must do what a
	// call of the op, identity and arguments did there too (quietInBase):
	// a publish whose consumer, a worker of Setup's, lands the entry within
	// the call in the baseline, shows an unchanged window where the
	// consumer lagged, and its effect in the window of the repeat that
	// followed, whose own job was still in the topic when the end was
	// read: a duplicate_delivery of the buggy agent passed (red team rS
	// #3, rtu/kafkarefund, 11 runs in 450 of that scenario). A 404
	// answered as data changes nothing in the baseline as well.
	quietInBase := func(o *Operation) bool {
		if baseline {
			return true
		}
		key := inBaseNames(o.Name + "\x00" + o.Identity + "\x00" + argsKey(o))
		for n := 1; ; n++ {
			w, ok := baseWin[windowKey(key, n)]
			if !ok {
				return false
			}
			if w[0] == w[1] {
				return true
			}
		}
	}
	// lateFirst holds the calls noEffectFirst would have left out but for
	// quietInBase: the baseline's call made its change in its own window,
	// so this one's effect may have landed late, in the later call's
	// window. A repeat after it whose window made that change, in a run
	// that ended as the baseline did, is not judged (below): counted, two
	// deliveries at once of a correct River agent on PostgreSQL, both
	// quiet, were a duplicate_write ("the repeat changed the state"), 1
	// run in 105 of red team rT's sweep, where finishedAll, the rule for
	// such a late effect, asks for calls that ran alone.
	var lateFirst map[*Operation]bool
	if baseline && len(tr.gaps) == 0 || !baseline && baseTr != nil && len(baseTr.gaps) == 0 {
		leaveOut(groups, func(idx []int, i int) bool {
			if !noEffectFirst(tr, i, idx, end, madeInItsCall, &views) {
				return false
			}
			if quietInBase(&tr.Ops[i]) {
				return true
			}
			if lateFirst == nil {
				lateFirst = map[*Operation]bool{}
			}
			lateFirst[&tr.Ops[i]] = true
			return false
		})
	}

	// The repeats seen alone that changed the state, compared with the
	// earlier executions of their group (redone), and the set-backs among
	// them: a repeat that does again what its earlier execution did, where
	// a set-back undid it, is judged as the set-back is.
	var redos map[int]redo
	var setBacks setBackIndex
	// firsts are the orders in which the first execution of each op and
	// identity ran (State): an entry a repeat adds again is a second
	// effect only if no first execution came in between (a new sale before
	// the second restock makes its log line its own).
	var firsts []int
	for p, w := range order {
		i := w.i
		switch {
		case p < len(groups) && len(groups[p]) > 0:
			i = groups[p][0] // the first kept: a failed call left out is none
		case failedTogether(&tr.Ops[i]):
			continue // no execution of its own
		}
		if x := tr.Ops[i].execOrder(); x != 0 {
			firsts = append(firsts, x)
		}
	}
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		// The first execution is the first to run, which under a gate
		// may not be the first to be called. (The same stable sort as
		// sort.SliceStable, without its reflection.)
		slices.SortStableFunc(idx, func(a, b int) int {
			if x, y := tr.Ops[a].execOrder(), tr.Ops[b].execOrder(); x != 0 && y != 0 && x < y {
				return -1
			}
			return 0
		})
		for n, i := range idx[1:] {
			if o := &tr.Ops[i]; o.stateSeen() && o.StateChange != "" {
				r := redone(tr, o, idx[:n+1], &views, baseWinOf(baseWin, baseline))
				if r.again != "" && slices.ContainsFunc(firsts, func(x int) bool { return x > r.againAfter && x < o.execOrder() }) {
					r.again = ""
				}
				if redos == nil {
					redos = map[int]redo{}
				}
				redos[i] = r
				if r.setBack != "" {
					setBacks.add(o.execOrder(), r.places)
				}
			}
		}
	}
	besideNoted := false   // the trace says why a repeat that added beside was taken as an update (addedBeside)
	dupFound := false      // a duplicate_write finding was made
	deferredNoted := false // the trace says why a repeat was judged by the end (deferredNote)
	stillNoted := false    // the trace says why a repeat was not judged (neverStillNote)
	// overlapUnjudged says why overlapped repeats that what their
	// clusters left, or the end, would count are unjudged, "" where they
	// are judged: no traced write of the run changed what State reads
	// where the baseline's did, and the run ended where it began
	// (unseenWrites); or the end differs from the baseline's only in
	// values nothing in this run changed (untouchedEndDiff). Read once.
	var overlapKnown bool
	var overlapUnseen string
	var overlapDiff [][]string
	overlapLoad := func() {
		if !overlapKnown {
			overlapKnown = true
			if !baseline && baseTr != nil {
				overlapUnseen = unseenWrites(tr, baseTr, end, alike)
				overlapDiff = untouchedEndDiff(tr, baseTr)
			}
		}
	}
	// unseenFor is unseenWrites' note where an earlier run of the suite
	// in which op took effect once for identity ident ended where it
	// began; "" where none did, and the calls may have undone each other
	// (a check-then-toggle: untouchedend.go).
	unseenFor := func(op, ident string) string {
		overlapLoad()
		if overlapUnseen != "" && tr.odd().lone.endedWhereBegan(op, ident) {
			return overlapUnseen
		}
		return ""
	}
	overlapUnjudged := func(op, ident, id string) string {
		if n := unseenFor(op, ident); n != "" {
			return n
		}
		if overlapDiff != nil && tr.odd().lone.without(op, ident, overlapDiff) {
			return untouchedEndNote(op, id, overlapDiff)
		}
		return ""
	}
	letThrough := "" // what the end says the Settle let through (settleLetThrough)
	// lateIn holds, by op, the repeat of another op whose window held the
	// late effect of a call of it (foreignWindow): there an empty window
	// of its own repeat says nothing (unjudgedLate, below).
	var lateIn map[string]string
	entityReads := -1 // whether tr has a read a repeat may have re-read (hasEntityRead), once a finding asks
	innerWrites := -1 // whether tr has a write made inside a call and replayed (replayedInside), once a finding asks
	if repeated > 0 {
		out = slices.Grow(out, repeated)
	}
	var (
		cut      map[string]bool // crashCut(tr), once a repeat asks
		cutKnown bool
	)
	// nestedSettled says o was made inside another call (or serves its
	// request), and this run and the baseline ended once the Settle saw
	// the world quiet: their ends hold what o set going.
	nestedSettled := func(o *Operation) bool {
		return (o.Parent != "" || o.served() != "") && tr.endSettled && baseEnd != "" && !baseline
	}
	// onlyReordered says repeat o's window changed the order of entries
	// and nothing else.
	onlyReordered := func(o *Operation) bool {
		before, after := o.stateWindow()
		return sameUpToOrder(before, after)
	}
	// onlyRenamed says the repeat's window holds the same members, with
	// names the sink made left out (sameUpToMadeNames, the window's
	// before standing for the baseline's end): names made by the calls
	// seen alone in the baseline and in this run, the repeat's own among
	// them, and given to no call. A member more, a value changed, or a
	// row that refers to the old name (pref_id) still differs.
	var runMade madeNames
	onlyRenamed := func(o *Operation) bool {
		before, after := o.stateWindow()
		if runMade == nil {
			ws := make([][2]string, 0, len(baseWin)+len(tr.Ops))
			for _, w := range baseWin {
				ws = append(ws, w)
			}
			if !baseline {
				for _, w := range windows(tr) {
					ws = append(ws, w)
				}
			}
			runMade = madeBy(ws)
		}
		return sameUpToMadeNames(after, before, runMade, namedByRun())
	}
	// orderIsEffect says an execution of op and identity k reordered a
	// list in its own window: one of earlier (indexes of tr.Ops), or one
	// in the baseline.
	orderIsEffect := func(k key, earlier []int) bool {
		for _, i := range earlier {
			if e := &tr.Ops[i]; e.stateSeen() && reordersList(e.stateWindow()) {
				return true
			}
		}
		// In the baseline, baseWin holds this run's own windows, the
		// repeat's among them.
		return !baseline && baseReorders(k)
	}
	for p, idx := range groups {
		k := order[p].k
		if len(idx) < 2 {
			continue
		}
		first := &tr.Ops[idx[0]]
		// A finding's Ops and Identities, and its Calls (dups, below), in
		// one allocation.
		ids := make([]string, 2, 2+len(idx))
		ids[0], ids[1] = k.op, k.id
		opID := ids[:2:2]
		firstSeen := firstVisible(first, k.op, k.id, baseWin) || landedBefore(tr, first)
		// The arguments seen so far, when the judgement of a repeat reads
		// them (readsArgs): encoding them is most of the cost otherwise.
		var args map[string]bool
		for _, i := range idx[1:] {
			if readsArgs(&tr.Ops[i], baseline) {
				args = map[string]bool{argsKey(first): true}
				break
			}
		}
		dups := append(ids[2:2:cap(ids)], first.ID)
		// carried says the executions left at most one effect through
		// the calls they were made inside of (nestedcarried.go);
		// carriedBy is the one whose window changed the state.
		var carriedBy *Operation
		carriedKnown, carriedOK := false, false
		carried := func() bool {
			if !carriedKnown {
				carriedKnown = true
				carriedBy, carriedOK = carriedByCaller(tr, baseTr, idx, k.op, k.id)
			}
			return carriedOK
		}
		// cutBefore returns an execution of the op for this identity
		// before the one at position n of idx whose work the crash cut
		// short (crashCut), or "".
		cutBefore := func(n int) string {
			if !cutKnown {
				cut, cutKnown = crashCut(tr), true
			}
			for _, j := range idx[:n] {
				if cut[tr.Ops[j].ID] {
					return tr.Ops[j].ID
				}
			}
			return ""
		}
		// effectSeen says whether an effect of the op for this identity
		// was ever seen, so that a repeat that overlapped others can be
		// judged by comparing snapshots: its first execution's, one of its
		// executions in the baseline, or the world let settle around the
		// repeat, or a declaration that repeats change nothing. Without
		// any, equal snapshots say nothing (the effect lands later: a
		// worker takes a queued job up) and every execution counts.
		baseSeen := -1
		var seenInBase func(o *Operation) bool
		effectSeen := func(o *Operation) bool {
			return o.stateSettled() || o.Idempotent || firstSeen || seenInBase(o)
		}
		// seenInBase says whether one of the op's executions for this
		// identity in the baseline changed the state in its own window.
		seenInBase = func(o *Operation) bool {
			if baseSeen < 0 && len(baseWin) == 0 {
				// No window in the baseline (no State): nothing to find,
				// and no prefix, renaming or numbering to make for it.
				// The ten-write suite asked here for each of its 75
				// repeated writes: with baseReorders' early-out, some
				// 190 allocations of its 4,621 and about 20 us (CPU
				// profile, GOMAXPROCS=1) of its 1,040.
				baseSeen = 0
			}
			if baseSeen < 0 {
				baseSeen = 0
				prefix := k.op + "\x00" + k.id + "\x00"
				renamed := inBaseNames(prefix) // the baseline's call, given the baseline's names
				var numbered []string          // or the numbers the sink answered, where the call's id parameters hold them
				if rn := sinkNums(); len(rn) > 0 {
					for _, nk := range numbersInBaseKeys(opKey(o), rn) {
						if nk != opKey(o) {
							numbered = append(numbered, nk[:strings.LastIndexByte(nk, 0)+1])
						}
					}
				}
				for wk, w := range baseWin {
					if (strings.HasPrefix(wk, prefix) || strings.HasPrefix(wk, renamed) || slices.ContainsFunc(numbered, func(p string) bool { return strings.HasPrefix(wk, p) })) && w[0] != w[1] {
						baseSeen = 1
						break
					}
				}
			}
			return baseSeen == 1
		}
		// queuedOnly says o's op changed the state in no window of its
		// own, here or in the baseline, where the world changed it after
		// the agent returned (a queue's worker carrying out what the call
		// queued), with no Settle given: an end alike the baseline's may
		// have been read before a second job the repeat queued was
		// picked up (a poller's next fetch, which leaves every goroutine
		// at rest meanwhile), and cannot absorb the repeat. A buggy
		// River agent's scenario passed so, the suite SAFE in 1 run of
		// 40 on PostgreSQL (red team rtR #3).
		//
		// The first execution's window showing a change (firstSeen) is no
		// evidence there: in such a world it is the worker's, carrying out
		// a job queued before (a River crash_restart whose first window
		// held the refund was absorbed as "state unchanged").
		queuedOnly := func(o *Operation) bool {
			return !baseline && un != nil && un.base.odd().worldAfterReturn && !o.stateSettled() && !o.Idempotent && !seenInBase(o)
		}
		var change, note string
		rereadNote := false // note says a read-modify-write was done again (rmw.go)
		overlapChange := "" // with overlapNote: what State saw change
		var notIdem []string
		notIdemChange := ""
		// changed judges repeat o, seen (judged by) to change the state
		// (what): an equal repeat of an op declared idempotent shows the
		// declaration wrong, another repeat of it is an update, a repeat
		// of any other op a duplicate; why, if any, says how it was seen.
		changed := func(o *Operation, same bool, by, what, why string) {
			o.JudgedBy = by
			switch {
			case o.Idempotent && same:
				o.Repeat = RepeatDuplicate
				notIdem = append(notIdem, o.ID)
				if notIdemChange == "" {
					notIdemChange = what
				}
			case o.Idempotent && by == JudgedByState && !baseline:
				// The declaration speaks of repeats with equal
				// arguments; this one was given others, and its own
				// window says what it did (addedBeside).
				beside, undecided := addedBeside(first, o, end, baseEnd, endSame, &views)
				switch {
				case beside:
					o.Repeat = RepeatDuplicate
					dups = append(dups, o.ID)
					if change == "" {
						change = what
						note = fmt.Sprintf("with other arguments than %s, it added beside what %s made, which still stood, restating none of it, and the run ended with more there than one delivery leaves: the idempotent declaration covers repeats with equal arguments", first.ID, first.ID)
					}
				case undecided != "":
					o.Repeat = RepeatUpdate
					if !besideNoted {
						besideNoted = true
						tr.Notes = append(tr.Notes, fmt.Sprintf("%s's repeat %s, with other arguments than %s, only added entries to the state, as a second entry beside the first's does (a comment reworded by the retry), but %s; it was taken as an update, as the idempotent declaration of %s says", k.op, o.ID, first.ID, undecided, k.op))
					}
				default:
					o.Repeat = RepeatUpdate
					if rmw, unsure := rereadRepeat(tr, baseTr, first, o, end, baseEnd, quietEnd(tr, un, baseTr), &views); rmw != "" { // rmw.go
						o.Repeat = RepeatDuplicate
						dups = append(dups, o.ID)
						tr.withRare().reread = append(tr.withRare().reread, o.ID)
						if change == "" {
							change, note, rereadNote = what, rmw, true
						}
					} else if unsure != "" {
						tr.unsettled = true
						tr.Notes = append(tr.Notes, unsure)
					}
				}
			case o.Idempotent:
				o.Repeat = RepeatUpdate
			default:
				o.Repeat = RepeatDuplicate
				dups = append(dups, o.ID)
				if change == "" {
					change = what
					if why != "" {
						note = why
					}
				}
			}
		}
		for p, i := range idx[1:] {
			pos := p + 1 // of o in idx
			o := &tr.Ops[i]
			ak, same := "", false
			if args != nil {
				ak = argsKey(o)
				same = args[ak]
				args[ak] = true
			}
			// Calls that overlapped: did their cluster change the world
			// the way one execution of the call changed it in the
			// baseline?
			// oneFrom says the comparison is from where one execution
			// started, or of the same change: otherwise the cluster began
			// elsewhere and did something else, which says nothing of an
			// idempotent declaration (a drain that drained what two
			// deliveries queued).
			oneKnown, oneChange, oneFrom := false, "", false
			var oneWin [2]string // the baseline's window oneChange compares with
			// cut says what cutting out of the cluster the windows of
			// calls made inside its calls left (nestedothers.go).
			cut, cutCalls, baseCut := cutNone, []*Operation(nil), []*Operation(nil)
			// left holds what the cluster changed untraced, left out of
			// the comparison with one execution (untraced.go), for the
			// note; untracedAlone says a repeat seen alone changed
			// nothing else (left).
			var left []place
			worldNoted := false    // the cluster's change beyond one execution's was the world's (worldAfter)
			worldUnjudged := false // so, where the baseline never held still (worldRestless)
			windowUnjudged := ""   // why the cluster, ended otherwise than one execution, is unjudged (untouchedInWindow)
			untracedAlone := func(o *Operation) bool {
				before, after := o.stateWindow()
				left, _ = un.explains(o, before, after, &views)
				return left != nil
			}
			if comparesOne(o, baseline) {
				before, after := o.stateWindow()
				one := func(w [2]string) string { // what the cluster did otherwise than one execution (w)
					oneFrom = true
					left, windowUnjudged = nil, ""
					untracedBut := func() bool {
						left, _ = un.sameChangeBut(o, w[0], w[1], before, after, &views)
						return left != nil
					}
					// The snapshots compared, without the moments the
					// two runs' clocks stamped (withoutClocks): a row
					// the baseline made at T0 and the cluster at T1 is
					// one execution's change.
					w0, w1, b, a := w[0], w[1], before, after
					if named := namedByRun(); holdsClock(w0) || holdsClock(w1) || holdsClock(b) || holdsClock(a) {
						w0, w1 = withoutClocks(w0, named), withoutClocks(w1, named)
						b, a = withoutClocks(b, named), withoutClocks(a, named)
					}
					switch {
					case w0 != b && un != nil && un.restlessOut(normState(w0)) == un.restlessOut(normState(b)) && worldRestless(normState(w[1]), normState(after)):
						// From where one execution started but for what
						// changes by itself (a heartbeat that beat
						// before the baseline's call, where a loaded
						// machine delayed the call, and not before this
						// cluster began), and the rest is what the world
						// did by itself in the baseline, which never
						// held still: unjudged, as below (1 run of 12 of
						// TestWorldWorkerChangeInARepeatsWindow's
						// heartbeat case beside CPU burners was a
						// duplicate_write;
						// TestRestlessWorldsBeatBeforeTheBaselinesCall).
						worldUnjudged = true
						return ""
					case w0 != b && un != nil && un.ownRestlessOut(normState(w0)) == un.ownRestlessOut(normState(b)) && worldRestlessOwn(normState(w[1]), normState(after)):
						// As above, where only this run's own end saw
						// the heartbeat beat (worldRestlessOwn): its
						// beats all came before the baseline's first
						// call, as a loaded machine delayed the agent,
						// so the baseline never saw one, and its one
						// execution began at another beat than the
						// cluster. A duplicate_write of the correct
						// agent in duplicate_delivery/concurrent
						// (CI245 and a CI on 49cb06d,
						// TestHeartbeatStarvedInTheBaseline;
						// TestBeatsBeforeTheBaselinesFirstCallAreRestless).
						worldUnjudged = true
						return ""
					case restlessWorld && (w0 != b || w1 != a) && un.restlessOut(normState(w0)) == un.restlessOut(normState(b)) && un.restlessOut(normState(w1)) == un.restlessOut(normState(a)) && describeChange(w0, w1, -1) != describeChange(b, a, -1):
						// One execution's change but for what changes by
						// itself (a heartbeat that beat inside the
						// cluster and not in the baseline's window, where
						// a loaded machine put the world's mail inside
						// the baseline's call): what the cluster set
						// going that lands later, the end of a world that
						// never held still cannot show. Unjudged, as
						// above (a duplicate_write of the correct agent,
						// 1 run of 20 beside CPU burners).
						worldUnjudged = true
						return ""
					case w0 == b:
						c := describeChange(w1, a, maxChange)
						if c != "" && sameChangeUpToMadeNames(w0, w1, b, a, namedByRun(), baseMadeNamesNow()) {
							// What one execution made as row 1, the
							// cluster made as row 10: a counter of the
							// sink's that Setup does not reset (SQLite's
							// AUTOINCREMENT, a sequence) named it.
							return ""
						}
						if c != "" && sameChangeInBaseNumbers(w0, w1, b, a) {
							// And where what it made refers to what it
							// made by the number the sink answered (an
							// order's invoice, under its order_id),
							// once that number is the baseline's (red
							// team, /tmp/rt34 c1).
							return ""
						}
						if c != "" {
							if left, _ = un.explains(o, w[1], after, &views); left != nil {
								// It did what one execution did, and
								// the rest is another delivery's
								// untraced write.
								return ""
							}
						}
						if c != "" && (worldRestless(normState(w[1]), normState(after)) || worldRestlessOwn(normState(w[1]), normState(after))) {
							// As below, where the baseline's state never
							// held still (a heartbeat): unjudged.
							worldUnjudged = true
							return ""
						}
						if c != "" && worldAfter(w[1], after) && endSame() {
							// It did what one execution did, and the
							// rest is what the world did after that
							// execution in the baseline, with no call
							// in flight (a worker of Setup's mailing
							// what the call queued): it landed inside
							// the cluster's window here. The run ended
							// as the baseline did, so no second effect
							// stayed.
							worldNoted = true
							return ""
						}
						if rn := sinkNames(); c != "" && len(rn) > 0 && sameInBaseNames(w1, a, rn) {
							// One execution's change, once the names
							// the sink gave this run are the
							// baseline's, wherever the create wrote
							// them (an order's url that quotes its
							// id: red team, /tmp/rt29 hs). With lists
							// in any order, the moves too: from one
							// state, a post published under a random
							// slug, in a list by slug, moves the others
							// or not as the slug falls (fourth red
							// team, /tmp/rt38 s2 TestPublish, a
							// duplicate_write 4/4 when the moves had to
							// agree here).
							return ""
						}
						if c != "" {
							if less := untouchedInWindow(w[1], before, after); less != nil && heldFromStart(runStart(tr), after, less) && tr.odd().lone.without(k.op, k.id, less) {
								// It ended otherwise than one execution
								// only in values it never changed,
								// which held what the run began with
								// (untouchedend.go): unjudged.
								windowUnjudged = untouchedEndNote(k.op, o.ID, less)
								return ""
							}
							if un != nil && !baseline && un.worldAfterButValues(w[1], after, end, baseEnd, wentThrough, alike) {
								// The rest is what the world did by
								// itself in the baseline, but for values
								// only the world changed there
								// (worldvalues.go): unjudged.
								windowUnjudged = un.worldValuesNote(k.op, o.ID)
								return ""
							}
							// Said as compared: without the moments,
							// and the rows the sink numbered otherwise
							// read as one (red team rtP #8).
							c = describeAcrossRuns(w[1], after, namedByRun(), maxChange)
						}
						return c
					case describeChange(w0, w1, -1) == describeChange(b, a, -1),
						sameChangeUpToMadeNames(w0, w1, b, a, namedByRun(), baseMadeNamesNow()) && slotsAgreeInBaseNames(w0, w1, b, a),
						sameChangeInBaseNumbers(w0, w1, b, a),
						sameChangeInBaseNames(w0, w1, b, a),
						untracedBut():
						// The same change, also where the cluster
						// made under another name (T-2) what one
						// execution made (T-1): an open of one
						// delivery's pair ran first.
						if fe := first.effect(); firstSeen && before != after && (fe == nil || !fe.inCluster || fe.before != before || fe.after != after) {
							// The first execution ran before this
							// cluster and its effect was seen: the
							// cluster made one execution's change
							// again (an idempotency key made anew
							// for the retry, its deliveries one).
							return fmt.Sprintf("%s, one execution's change again after %s", describeChange(before, after, maxChange/2), first.ID)
						}
						return ""
					}
					if rn := sinkNames(); len(rn) > 0 && sameInBaseNames(w0, b, rn) && sameInBaseNames(w1, a, rn) && (renamedState(b, rn) != normState(w0) && slotsAgree(w0, w1, b, a, renamedState(b, rn), renamedState(a, rn)) || !movesEntries(w0, w1) && !movesEntries(b, a) || renamedState(a, rn) == normState(w1)) {
						// From where one execution started to where
						// it ended, once the names the sink gave this
						// run are the baseline's: a ticket's random
						// id, which open_ticket answered and the
						// agent passed on to comment (red team,
						// PostgreSQL, /tmp/rt22 p9). Both states are
						// compared with lists in any order, so where
						// the two started from one state in one order
						// and either moves entries of a list, the run
						// must end in the baseline's order: a job
						// boosted twice, past two others, was one
						// boost (second red team, /tmp/rt36 q2; third,
						// /tmp/rt37 r1). Where the random names the sink gave
						// order a list otherwise (tickets by status and
						// id), whether a change moves the others is the
						// names' doing: a ticket resolved by two
						// deliveries at once was a duplicate_write about
						// half the runs (third red team, /tmp/rt37 r2).
						// Unless no field orders the list and the
						// change left an entry elsewhere among those
						// neither run changed (slotsAgree): a job
						// boosted twice past the one above it, among
						// ties by random ids in another order (fourth
						// red team, /tmp/rt38 s1 TestTieRace).
						return ""
					}
					oneFrom = false
					return fmt.Sprintf("%s, where one execution made %s", describeChange(before, after, maxChange/2), orNothing(describeChange(w[0], w[1], maxChange/2)))
				}
				// Each execution of the call in the baseline is one
				// execution's change (open, hold, open again): the
				// first that the cluster matches, else the first.
				key := o.Name + "\x00" + o.Identity + "\x00" + ak
				if _, ok := baseWin[windowKey(key, 1)]; !ok {
					// The call given names the sink gave this run
					// (an order's random id): the baseline's call was
					// given the baseline's.
					key = inBaseNames(key)
					if _, ok := baseWin[windowKey(key, 1)]; !ok {
						// Or numbers it answered (an order's id
						// from a counter Setup does not reset),
						// under parameters that are ids: the first
						// key the baseline called, of those the
						// identity may read as.
						keys := numbersInBaseKeys(key, sinkNums())
						key = keys[0]
						for _, k := range keys {
							if _, ok := baseWin[windowKey(k, 1)]; ok {
								key = k
								break
							}
						}
					}
				}
				for n := 1; ; n++ {
					w, ok := baseWin[windowKey(key, n)]
					if !ok {
						break
					}
					c := one(w)
					if c != "" && w[0] == w[1] {
						// One execution changed nothing in its own
						// window there: its effect lands outside its
						// call (a transaction's commit), and what
						// the cluster changed, from where it started,
						// is no measure of it. Whatever the cluster
						// holds landed from elsewhere: the other
						// delivery's commit, made while this insert
						// was in flight (red team rtM P7,
						// TestSerialOrder, 2 runs in 86 under load:
						// "0 → 1 entry" taken for a second effect).
						// Judged by the end, as a repeat whose effect
						// no window shows is (below).
						continue
					}
					if !oneKnown || c == "" {
						oneChange, oneWin = c, w
					}
					oneKnown = true
					if c == "" {
						break
					}
				}
			}
			switch {
			case oneKnown && oneChange == "" && worldUnjudged:
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, worldNeverStillNote(k.op, o.ID))
				}
			case oneKnown && oneChange == "" && !o.Idempotent && effectSeen(o) && copiedAfter(o):
				// The calls together made one execution's change, and the
				// end, read once it held still, holds one more copy of it
				// beside the baseline's end: a second effect the world
				// carried out after the cluster closed.
				o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
				dups = append(dups, o.ID)
				if change == "" {
					change, note = endChange, copyNote(first.ID)
				}
			case oneKnown && oneChange == "" && windowUnjudged != "":
				// The cluster ended otherwise than one execution only
				// where nothing of it shows a second effect
				// (untouchedInWindow, worldAfterButValues); after a copy
				// more in the end (above), which is one: unjudged.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, windowUnjudged)
				}
			case oneKnown && oneChange == "" && effectSeen(o) && (landedAfterAll(o) || landedUnread(o)):
				// The calls together made one execution's change, but the
				// state changed again after the agent returned and the
				// end, read once it held still, is not the baseline's: a
				// second mail one of them asked for, landing after both
				// windows, would be absorbed here, a pass of the buggy
				// agent (TestWorldWorkerChangeInARepeatsWindow's late
				// case, concurrent, 9 runs of 10 beside CPU burners,
				// task fW). What landed may be a delivery's or the
				// world's: unjudged, as the sequential case below; and
				// so where the run's end had not held still when its
				// wait ran out (landedUnread, as below).
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, landedAfterAllNote(o, first.ID, describeChange(tr.returned, end, maxChange)))
				}
			case oneKnown && oneChange == "" && effectSeen(o):
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByOneExecution
				if worldNoted {
					tr.Notes = append(tr.Notes, worldNoteIn(baseTr, o, first.ID))
				}
				if left != nil {
					before, after := o.stateWindow()
					tr.Notes = append(tr.Notes, untracedNote(o, left, before, after, &views))
				}
			case oneKnown && oneChange != "" && quietCluster(o) && baseTr != nil && (landedByReturn(tr, end, baseTr) || settledEnds(tr, end, baseTr)) && endSame():
				// The cluster changed nothing where one execution in the
				// baseline did: that execution's effect landed inside its
				// window there, and here between calls (a booking made
				// after the client gave up, on a loaded machine), or
				// before the cluster began (a keyed charge made by the
				// crashed delivery, whose restart's two charges, the
				// message redelivered and its own, overlapped). Nothing
				// is no second effect; the run ended as one delivery did
				// (a false duplicate_write for one key for the order, 1
				// run in 20 at load 20, task fK; with a Settle, whose
				// end is read once it said the world is quiet, 1 to 4
				// runs in 40 of TestConsumerOfACarriedRunServesTheDeliveryAfterItReturned's
				// keyed charge under -race, "the repeat changed the
				// state: , where one execution made ord-1: 0 → 500").
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
			case oneKnown && oneChange != "" && oneFrom && !o.Idempotent && baseTr != nil && baseTr.worldLive && !tr.endSettled && copiedAfter(o) && func() bool { b, a := o.stateWindow(); return deficitOnly(oneWin[0], oneWin[1], b, a, &views) }():
				// The cluster left less than one execution's change, and
				// the end holds one more copy of it than the baseline's:
				// both effects landed after the cluster closed.
				o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
				dups = append(dups, o.ID)
				if change == "" {
					change, note = endChange, copyNote(first.ID)
				}
			case oneKnown && oneChange != "" && oneFrom && quietCluster(o) && notLandedYet(o) && undoneTwice(tr, baseTr, o, k.op, k.id, oneWin):
				// As below, but the call's change was there when it
				// returned in the baseline and in every other scenario
				// in which it ran once: nothing of the two was still to
				// land, and they undid each other (a check-then-toggle
				// whose two deliveries both read "not flagged" and both
				// flipped it: inconclusive on every run over an HTTP
				// service, red team rQ; undonetwice.go).
				changed(o, same, JudgedByOneExecution, oneChange, undoneTwiceNote(first.ID))
			case oneKnown && oneChange != "" && quietCluster(o) && notLandedYet(o):
				// As above, but the run's state never changed from the
				// cluster's end to its own (the end is not the
				// baseline's): nothing of the calls had landed when the
				// end was read, in a world whose goroutines Setup left
				// running and with no Settle (a long-polling consumer
				// holding the confirmation, at rest in its receive). Less
				// than one delivery's effect is no second one, nor proof
				// there is none: unjudged, the scenario inconclusive.
				// Counted, the correct agent of such a queue was a
				// duplicate_write "mails: [...] → null" (1 run in 10
				// under -race; TestOverlappedCallsWhoseEffectHadNotLanded).
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, notLandedYetNote(o, first.ID, oneChange))
				}
			case oneKnown && oneChange != "" && oneFrom && baseTr != nil && baseTr.worldLive && !tr.endSettled && func() bool { b, a := o.stateWindow(); return deficitOnly(oneWin[0], oneWin[1], b, a, &views) }():
				// The cluster left less than one execution left in the
				// baseline (nothing at all, or part of it), and the run did
				// not end as the baseline did, or its end was read before
				// it held still: what one execution added is missing,
				// nothing more was added, and that is no second effect.
				// Counted, a correct JetStream publisher whose consumer
				// had not delivered yet was a duplicate_write whose
				// change was "1 → 0 entries, removed" (red team rtU #1).
				// Unjudged, the scenario inconclusive.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, deficitNote(k.op, o.ID, first.ID, orNothing(describeChange(oneWin[0], oneWin[1], maxChange/2))))
				}
			case oneKnown && oneChange != "" && quietCluster(o) && unseenFor(k.op, k.id) != "":
				// The cluster changed nothing where one execution did,
				// and so did every write of the run, which ended where it
				// began (unseen.go): the calls may reach another world
				// than State reads (a client made once), and a toggle
				// done twice looks the same. Counted, the keyed agent of
				// a client bound by sync.Once was a duplicate_write in
				// most runs under -race
				// (TestWritesToAnotherWorldThanStateReadsAreUnjudged).
				// Unjudged, the scenario inconclusive.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, unseenFor(k.op, k.id))
				}
			case oneKnown && oneChange != "" && func() bool {
				cut, cutCalls, baseCut = nestedOthers(tr, baseTr, o, oneWin, &views)
				return cut == cutOne && endSame()
			}():
				// What the cluster changed otherwise than one execution
				// was a call's made inside one of its executions, in a
				// window of its own inside the cluster's (or inside one
				// execution's in the baseline): another traced write's,
				// no evidence against the repeat (nestedothers.go).
				// Outside those windows the calls made one execution's
				// change, and the run ended as the baseline did.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByOneExecution
				tr.Notes = append(tr.Notes, cutNote(o, first.ID, cutCalls, baseCut))
			case oneKnown && oneChange != "" && cut == cutUnknown && endSame():
				// The change beyond one execution is at places such a
				// call changed, the snapshots cannot tell its share from
				// the repeat's, and the run ended as the baseline did:
				// unjudged, never a duplicate on that evidence alone. An
				// end with more than one delivery leaves is evidence of
				// its own, judged as before.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, cutUnknownNote(o, first.ID, cutCalls))
				}
			case oneKnown && oneChange != "" && (oneFrom || !(o.Idempotent && same)):
				changed(o, same, JudgedByOneExecution, oneChange, "the calls overlapped in time, so this compares what they left with what one execution left in the baseline")
			case o.stateSeen() && o.StateChange == "" && !o.Idempotent && effectSeen(o) && copiedAfter(o):
				// The repeat's window held nothing, but the end, read
				// once it held still, holds one more copy of what one
				// execution added in the baseline, beside all the
				// baseline's end holds: the world carried out a second
				// effect after the window closed (a Kafka consumer's
				// second refund, the repeat's produce returning in 0.1 ms;
				// absorbed as "state unchanged" on every run, red team
				// rtU #2).
				o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
				dups = append(dups, o.ID)
				if change == "" {
					change, note = endChange, copyNote(first.ID)
				}
			case o.stateSeen() && o.StateChange == "" && effectSeen(o) && (landedAfterAll(o) || landedUnread(o)):
				// The repeat's window held nothing (the world's mail had
				// gone out before it began, as a loaded machine slowed
				// the first's answer), but the state changed after the
				// agent returned and the end, read once it held still
				// (or when its wait ran out, still changing: landedUnread),
				// is not the baseline's: a second mail the repeat asked
				// for, landing after its window, was absorbed, a pass of
				// the buggy agent (6 runs of 10 of
				// TestWorldWorkerChangeInARepeatsWindow's late case
				// under -race beside CPU burners). What landed may be
				// the repeat's or the world's: unjudged, the scenario
				// inconclusive. Only where the case below would absorb
				// it: a repeat whose first execution's effect no window
				// showed is judged by the end (deferredNote).
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, landedAfterAllNote(o, first.ID, describeChange(tr.returned, end, maxChange)))
				}
			case o.stateSeen() && o.StateChange == "" && !o.Idempotent && tr.endSettled && func() bool {
				letThrough = settleLetThrough(tr, baseTr, o, first, baseWin, end, baseEnd, &views, alike)
				return letThrough != ""
			}():
				// The end says the Settle let work through
				// (settledlate.go): unjudged.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, settleLetThroughNote(o, letThrough))
				}
			case o.stateSeen() && o.StateChange == "" && effectSeen(o) && !queuedOnly(o):
				// The snapshots around the repeat are equal, and the
				// first execution's effect was visible, or one in the
				// baseline was, in its own window (or the world was let
				// settle, or the op says repeats change nothing): the
				// op's effect lands within its call.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
			case o.stateSeen() && o.StateChange == "" && o.effect().outerQuiet:
				// A call made inside another settles nothing itself: its
				// effect may land after it returned (a bank books the
				// transfer a worker made a moment later). The outer
				// call's window, let settle, held it whole, and nothing
				// changed there.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
			case o.stateSeen() && o.StateChange != "" && (o.stateSettled() || firstSeen || o.Idempotent) && onlyReordered(o) && !orderIsEffect(k, idx[:pos]):
				// The repeat's window holds the same entries in another
				// order (rows read by a timestamp the repeat bumped, or by
				// the rowid an INSERT OR REPLACE gave anew), and no
				// execution of the op made an order its effect: no second
				// effect.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
				tr.Notes = append(tr.Notes, reorderNote(o, first.ID))
			case o.stateSeen() && o.StateChange != "" && (o.stateSettled() || firstSeen || o.Idempotent) && onlyRenamed(o):
				// The repeat's window holds the same rows, one or more
				// under a name the sink gave anew (an INSERT OR REPLACE
				// deletes the row and inserts it again under a new
				// rowid): no second effect.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
				tr.Notes = append(tr.Notes, renamedNote(o, first.ID))
			case o.stateSeen() && o.StateChange != "" && queuedOnly(o) && func() bool { before, after := o.stateWindow(); return worldAfter(before, after) }() && endSame():
				// As below, but what the op does is all the world's,
				// after the agent returned (queuedOnly): unjudged.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, queuedOnlyNote(k.op, o.ID, tr.odd().endBusy))
				}
			case o.stateSeen() && o.StateChange != "" && func() bool { before, after := o.stateWindow(); return worldAfter(before, after) }() && endSame():
				// The repeat's window went from a state the baseline
				// was in with no call in flight to the one the world
				// took it to by itself there (a queue worker of Setup's
				// mailing what the first execution queued, while the
				// repeat waited), and the run ended as the baseline did:
				// what the repeat's window holds is the world's, and no
				// second effect stayed.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
				tr.Notes = append(tr.Notes, worldNoteIn(baseTr, o, first.ID))
			case o.stateSeen() && o.StateChange != "" && !o.Idempotent && endChange != "" && func() bool { before, after := o.stateWindow(); return worldAfter(before, after) }() && !endBeforeTheWorld(end, un.base, &views, alike):
				// As above, but the run ended otherwise than the
				// baseline: counted as before, by the end, which says
				// what stayed. The window's change is the world
				// carrying out what the first execution set going, not
				// the repeat's: the finding says so, where it quoted it
				// as what the repeat changed (red team rtR #10).
				o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
				dups = append(dups, o.ID)
				if change == "" {
					change = endChange
					note = fmt.Sprintf("in its window the world carried out what %s set going (%s), as the baseline's world did by itself after its call, so this compares the end state with what one delivery left", first.ID, clip(o.StateChange, maxChange/2))
				}
			case o.stateSeen() && o.StateChange != "" && !baseline && un != nil && func() bool {
				before, after := o.stateWindow()
				return worldRestless(before, after) || worldRestlessOwn(before, after)
			}():
				// What the repeat's window holds is what the world did by
				// itself in the baseline (a mail a worker of Setup's
				// sent), and the baseline's state never held still (a
				// heartbeat in State): neither worldAfter nor the end can
				// tell whether the repeat did it again. Unjudged, the
				// scenario inconclusive (red team, /tmp/rt28 w3: a
				// duplicate_write on every run).
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, worldNeverStillNote(k.op, o.ID))
				}
			case o.stateSeen() && o.StateChange != "" && finishedFirst(o, first) && (!tr.endStill || restlessWorld || endSame()):
				// The repeat's window finished what the first
				// execution's began (the world's mail, while the repeat
				// waited for it): with the end read once it held still
				// and alike the baseline's, no second effect stayed (an
				// end read so that differs is judged below: a second
				// mail the repeat queued is there). Else what the
				// repeat set going that lands after its window has
				// nothing to show it: unjudged, the scenario
				// inconclusive.
				if tr.endStill && !restlessWorld {
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
					tr.Notes = append(tr.Notes, finishedNote(o, first.ID))
				} else if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, finishedUnjudgedNote(o, first.ID))
				}
			case o.stateSeen() && o.StateChange != "" && !o.Idempotent && (finishedAll(o, first) || lateFirst[first]) && endSame():
				// The repeat's window holds the first execution's late
				// effect, and the run ended as the baseline did: no
				// second effect is seen, but what the repeat set going
				// may land after the end. Unjudged, the scenario
				// inconclusive.
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, finishedAllNote(o, first.ID))
				}
			case o.stateSeen() && o.StateChange != "" && !o.Idempotent && tr.endSettled && endChange != "" && firstLandedDespiteSettle(tr, baseTr, o, first, baseWin, baseEnd, alike) && endHoldsACopyMore(baseTr, o, baseWin, end, baseEnd, &views):
				// As below, but the end holds a second copy: a duplicate,
				// counted by the end (settledlate.go).
				o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
				dups = append(dups, o.ID)
				if change == "" {
					change, note = endChange, settledLateDupNote(first.ID, o.StateChange)
				}
			case o.stateSeen() && o.StateChange != "" && !o.Idempotent && tr.endSettled && firstLandedDespiteSettle(tr, baseTr, o, first, baseWin, baseEnd, alike) && endSame():
				// As above, where the Settle let the first's effect
				// through (settledlate.go).
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, settledLateNote(o, first.ID))
				}
			case o.stateSeen() && o.StateChange != "" && onlyRestless(o):
				// Only what changes by itself (a heartbeat) changed in
				// the repeat's window, in a baseline that never held
				// still: nothing the repeat did shows there, and the end
				// cannot say what it set going. Unjudged, as above (a
				// loaded machine held the repeat's window open across a
				// beat: a duplicate_write of the correct agent, 1 run of
				// 20 beside CPU burners).
				if !stillNoted {
					stillNoted = true
					tr.unsettled = true
					tr.Notes = append(tr.Notes, worldNeverStillNote(k.op, o.ID))
				}
			case o.stateSeen() && o.StateChange != "" && (o.stateSettled() || firstSeen || o.Idempotent) && untracedAlone(o):
				// As above, once what another delivery's own code
				// wrote untraced while the repeat ran is left out.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
				before, after := o.stateWindow()
				tr.Notes = append(tr.Notes, untracedNote(o, left, before, after, &views))
			case o.stateSeen() && o.StateChange != "":
				r := redos[i]
				// byEnd judges the repeat by what the run left at the
				// places it changed, against what one delivery left
				// there: absorbed when the same, else a duplicate that
				// says what stayed (how is why it changed the state).
				at := r.places // where byEnd compares the ends
				byEnd := func(how string) {
					endV, baseV := views.of(end), views.of(baseEnd)
					if endV != nil && baseV != nil && samePlaces(at, endV, baseV) {
						o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
						return
					}
					o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
					dups = append(dups, o.ID)
					if change == "" {
						diff := endChange
						if endV != nil && baseV != nil {
							diff = describePlaces(at, baseV, endV, maxChange/2)
						}
						change = fmt.Sprintf("%s, %s, and the run ended otherwise than one delivery there: %s", o.StateChange, how, orNothing(diff))
					}
				}
				switch ends := end != "" && baseEnd != ""; {
				case r.setBack != "" && baseline:
					// In the baseline, setting back what a later write of
					// the agent's changed is its own doing (it reopened
					// what it closed).
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
				case r.setBack != "" && ends:
					// Elsewhere its effect is whether the later write
					// stayed undone.
					byEnd("setting back what " + r.setBack + " had left after a later write changed it")
				case r.redo != "" && ends && !baseline && setBacks.between(r.places, r.redoOrder, o.execOrder()):
					// It did again what an earlier execution did, from
					// where that one started, because a repeat set it
					// back meanwhile (a shipment's status flipped back
					// to paid by a redelivered upsert): judged as that
					// set-back is, by the end.
					byEnd("doing again what " + r.redo + " did after a repeat set it back")
				case r.again != "" && o.Idempotent && same && r.against == "":
					// A set adds nothing twice: a second effect of an op
					// whose declaration may hold (a flush sends what was
					// queued again meanwhile).
					o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByState
					dups = append(dups, o.ID)
					if change == "" {
						change = fmt.Sprintf("%s: it added %s again", o.StateChange, r.again)
					}
				case r.baseSetBack && ends && !baseline:
					// What one delivery does (its own set back) from
					// where it does it: whether a second effect stayed
					// is whether the run ended otherwise there.
					byEnd("doing what one execution in the baseline did, which set back there what a later write had changed")
				case o.Idempotent && same && r.against == "" && baseline:
					// The repeat did not start from what an earlier
					// equal execution left (the agent's own writes
					// changed the world in between, or none was seen
					// alone): no sign that the op is not idempotent, and
					// the declaration stands.
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByDeclaration
				case ends && !baseline && cutBefore(pos) != "":
					// An earlier execution's own work (a job it queued,
					// which a worker carries out with its context) was
					// stopped by the crash: this one may do what that one
					// never finished (a payout the restart requests
					// again), or do it twice. Judged, as a set-back is,
					// by whether the run ended as one delivery left it.
					byEnd("after the crash stopped the work " + cutBefore(pos) + " had set going")
				case o.Idempotent && same && r.against == "" && r.redo != "" && ends && !baseline && func() bool {
					extra := worldRedid(tr, baseTr, o, &r, &views)
					at = append(slices.Clip(r.places), extra...)
					return extra != nil
				}():
					// The world took what an earlier execution made and
					// acted on it, and the repeat made it again
					// (worldredo.go): judged by the end there, and where
					// the world acted.
					byEnd("doing again what " + r.redo + " did, after the world, outside every traced write, took that and acted on it")
				case o.Idempotent && same && r.against == "" && ends:
					byEnd("after another write changed what it acts on")
				case un != nil && !baseline && func() bool {
					before, after := o.stateWindow()
					return un.worldAfterButValues(before, after, end, baseEnd, wentThrough, alike)
				}():
					// What its window changed is what the world did by
					// itself in the baseline, between calls, but for
					// values only the world changed there (a heartbeat
					// that beat three times there and twice here):
					// unjudged, the scenario inconclusive
					// (worldvalues.go).
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, un.worldValuesNote(k.op, o.ID))
					}
				default:
					if by, outside := foreignWindow(tr, i, baseWin, &views); outside && ends && !baseline && baseTr != nil && endSame() {
						// The window changed only places the op changed in
						// no window of the baseline, and the run ended as
						// the baseline did: no evidence of a second
						// execution (otherop.go). Another op's earlier
						// call accounts for the change: absorbed; nothing
						// does: unjudged, the scenario inconclusive.
						if by != nil {
							o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
							tr.Notes = append(tr.Notes, foreignNote(o, by))
							for _, op := range by {
								if lateIn == nil {
									lateIn = map[string]string{}
								}
								if _, ok := lateIn[op]; !ok {
									lateIn[op] = o.ID
								}
							}
						} else if !stillNoted {
							stillNoted = true
							tr.unsettled = true
							tr.Notes = append(tr.Notes, foreignUnjudgedNote(o, first.ID))
						}
						break
					}
					why := ""
					switch {
					case r.unseen:
						why = unseenFirstNote
					case r.whole:
						why = wholeNote
					}
					changed(o, same, JudgedByState, o.StateChange, why)
				}
			case o.Overlapped && (effectSeen(o) || nestedSettled(o)) && endSame() && !reorders(k):
				// Also a call made inside another whose effect lands after
				// it returned (a worker's transfer the bank books later),
				// in a cluster of both deliveries: no window of it shows
				// the effect, but both runs ended once the Settle saw the
				// world quiet, and they ended alike.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
			case o.Overlapped && effectSeen(o) && endParts != nil && !touched(k).empty() && !meets(touched(k), endParts, o, true, &views):
				// The run ended otherwise than the baseline, but not in any
				// part of the state this op changed there (a place, at any
				// depth, or a member added to or removed from a collection
				// by o's cluster): the repeats of this op left what one
				// delivery left.
				o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
			default:
				switch {
				case o.Idempotent && same && o.Overlapped && endParts != nil && (touched(k).empty() || meets(touched(k), endParts, o, false, &views)) && overlapUnjudged(k.op, k.id, o.ID) != "":
					// As below, but no write of the run changed what
					// State reads (unseen.go), or what the end holds
					// otherwise is in values no call, gap or wait of this
					// run changed (untouchedend.go): unjudged.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, overlapUnjudged(k.op, k.id, o.ID))
					}
				case o.Idempotent && same && o.Overlapped && endParts != nil && (touched(k).empty() || meets(touched(k), endParts, o, false, &views)):
					// Overlapped, the run ended otherwise than one
					// delivery in a part of the state the op changes:
					// whatever the declaration, more than one effect
					// stayed there (a drain that ran a job queued twice).
					o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
					dups = append(dups, o.ID)
					if change == "" {
						change = endChange
						note = "the calls overlapped in time, so this compares the end state with what one delivery left"
					}
				case o.Idempotent && same:
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByDeclaration
				case o.Idempotent:
					o.Repeat, o.JudgedBy = RepeatUpdate, JudgedByDeclaration
				case un != nil && (tr.odd().endBusy != "" && !effectSeen(o) || queuedOnly(o)) && !reorders(k) && (o.stateSeen() && o.StateChange == "" || o.Overlapped && clusterTaken(o)) && endSame():
					// As the two below, but the end, alike the baseline's,
					// was read while a goroutine Setup started was still at
					// work (asleep until its next poll): a second effect the
					// repeat queued may land after it. Absorbed, the buggy
					// agent passed with a note saying the repeats left
					// nothing (red team rtR #3); unjudged, the scenario
					// inconclusive.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						if queuedOnly(o) {
							tr.Notes = append(tr.Notes, queuedOnlyNote(k.op, o.ID, tr.odd().endBusy))
						} else {
							tr.Notes = append(tr.Notes, busyEndNote(k.op, o.ID, tr.odd().endBusy))
						}
					}
				case un != nil && o.stateSeen() && o.StateChange == "" && !effectSeen(o) && landedByReturn(tr, end, un.base) && endSame() && !reorders(k):
					// No execution of the op changed the state in its own
					// window, here or in the baseline, and the baseline's
					// state changed outside every traced write (un): the
					// op's effect lands outside its call, at an untraced
					// point (a transaction committed after its writes, a
					// rolled-back attempt leaving nothing). In both runs
					// the state was what it ended at once the agent had
					// returned (landedByReturn: no effect was still on
					// its way, as a job another process books later may
					// be), and the run ended as the baseline did: its
					// repeats left nothing one delivery did not. Where it
					// ended otherwise, every execution still counts
					// (below).
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
					if !deferredNoted {
						deferredNoted = true
						tr.Notes = append(tr.Notes, deferredNote(k.op, o.ID))
					}
				case un != nil && o.Overlapped && clusterTaken(o) && !effectSeen(o) && landedByReturn(tr, end, un.base) && endSame() && !reorders(k):
					// As above, for a repeat that overlapped other calls:
					// two deliveries retried at once, and their last
					// attempts, answered by the sink's replay, ran side
					// by side. Its cluster's snapshots say nothing of
					// it: the booking an earlier attempt set going, whose
					// client gave up on it, lands between calls or while
					// the cluster runs. Both runs had their end state
					// when the agent returned, and the end says whether
					// a second effect stayed.
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
					if !deferredNoted {
						deferredNoted = true
						tr.Notes = append(tr.Notes, deferredNote(k.op, o.ID))
					}
				case un != nil && !effectSeen(o) && !reorders(k) && (o.stateSeen() && o.StateChange == "" || o.Overlapped && clusterTaken(o)) && endNeverStill(tr, end, un.base) && !differsWhereTheWorldDidNot(tr, end, un.base, &views, alike):
					// As the two above, but the end of this run or of the
					// baseline was read before the state held still: the
					// world went on changing by itself (a heartbeat in
					// the state, services that confirm and ship an order
					// for longer than the wait), and whether a second
					// effect stayed cannot be told from it. Counted, a
					// correct transactional agent failed in such a world
					// every run; the repeat is unjudged, and the
					// scenario inconclusive (Suite.duplicates).
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, neverStillNote(k.op, o.ID))
					}
				case un != nil && !effectSeen(o) && !reorders(k) && (o.stateSeen() && o.StateChange == "" || o.Overlapped && clusterTaken(o)) && landedByReturn(tr, end, un.base) && endBeforeTheWorld(end, un.base, &views, alike):
					// As above, and both ends held still, but this run's
					// was read before the world's own change landed in
					// it (endBeforeTheWorld): unjudged, the scenario
					// inconclusive.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, beforeTheWorldNote(k.op, o.ID))
					}
				case un != nil && !effectSeen(o) && !reorders(k) && (o.stateSeen() && o.StateChange == "" || o.Overlapped && clusterTaken(o)) && lateNotLanded(end, un.base, k.op, k.id, &views, alike):
					// As above, but the end lacks a change the baseline
					// made outside every traced write after the op's
					// call (latenotlanded.go): unjudged, the scenario
					// inconclusive.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, lateNotLandedNote(k.op, o.ID, describeChange(end, baseEnd, maxChange)))
					}
				case un == nil && !baseline && !effectSeen(o) && !reorders(k) && neverChanged(tr, idx, k.op, k.id, baseTr, baseWin) && func() bool { b, _ := o.stateWindow(); return restatedIn(b, o) }() && (endSame() || endByOthers(idx, k.op, k.id)):
					// No execution of the op changed the state, in its
					// window or after it, here or in the baseline, and the
					// run ended as the baseline did (nochange.go), or
					// differs from it only where other ops' repeats
					// changed it (nochangeothers.go): absorbed where
					// nothing of the world was at work to land an effect
					// later, else unjudged.
					if rest, where := worldAtRest(baseTr); rest {
						o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
						if by := endBy[k.op+"\x00"+k.id]; by != nil {
							// Noted once the other ops' repeats are
							// judged (besideJudged, below).
							beside = append(beside, besideRepeat{i, by})
						} else if !deferredNoted {
							deferredNoted = true
							tr.Notes = append(tr.Notes, unchangedNote(k.op, o.ID))
						}
					} else if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						if by := endBy[k.op+"\x00"+k.id]; by != nil {
							tr.Notes = append(tr.Notes, unchangedBesideBusyNote(k.op, o.ID, where, by))
						} else {
							tr.Notes = append(tr.Notes, unchangedBusyNote(k.op, o.ID, where))
						}
					}
				case un == nil && !baseline && !effectSeen(o) && !reorders(k) && baseTr != nil && worldMayLand(baseTr) != "" && neverChanged(tr, idx, k.op, k.id, baseTr, baseWin) && endSame():
					// As above, but the state holds nothing of what the
					// op sets (not restated): a job it queues that a
					// poller of Setup's carries out after the end was
					// read (a ticker's select between polls, a sleep
					// longer than the wait). Counted, a correct keyed
					// outbox drained every 120 ms to 1 s was a
					// duplicate_write on every run (red team rR #3):
					// unjudged.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, parkedWorldNote(k.op, o.ID, worldMayLand(baseTr)))
					}
				case crashFired(tr) && strings.HasPrefix(o.StateError, settleTimeout) && changedBeyondNested(tr, o, &views):
					// The Settle never saw the world quiet after the
					// crash: a goroutine the crash ended may have left
					// what the Settle waits for undone (a count of jobs
					// it lowers after its call, not in a defer), which a
					// real crash would have wiped with the process. Not
					// a sign of a second effect by itself; but the
					// repeat's own window (taken all the same) changed a
					// place that none of the calls made inside it
					// changed (a line the request writes itself): a
					// second effect of its own.
					before, after := o.stateWindow()
					changed(o, same, JudgedByState, DescribeChange(before, after), "the Settle did not see the world quiet after the crash")
				case crashFired(tr) && strings.HasPrefix(o.StateError, settleTimeout):
					// What the repeat changed is what the calls made
					// inside it changed (the work the crash cut short,
					// done now): the repeat is unjudged, and the
					// scenario inconclusive (Suite.duplicates).
					tr.Notes = append(tr.Notes, fmt.Sprintf("%s repeated %s and was not judged: %s after the crash; a goroutine the crash ended (runtime.Goexit, where a real crash ends the process) may have left undone what the Settle waits for, such as a count of pending jobs it lowers after its call; lower it in a defer", o.ID, first.ID, o.StateError))
				case o.heldSettle() && strings.HasPrefix(o.StateError, settleTimeout) && !o.Overlapped && tr.endSettled && end != "" && baseEnd != "" && endSame():
					// The Settle before the repeat failed on the goroutine
					// of the server that made it, while the harness held
					// it, and its window showed no change, which says
					// nothing of an effect landing after it (judge.after):
					// the run's end, read once the Settle saw the world
					// quiet, is as one delivery leaves it.
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
				case o.heldSettle() && strings.HasPrefix(o.StateError, settleTimeout):
					tr.unsettled = true
					tr.Notes = append(tr.Notes, fmt.Sprintf("%s repeated %s and was not judged: the Settle before it did not see the world quiet while the harness held it (see the note on the Settle), and no Settle ran after it; its window showed no change, which says nothing of an effect that lands after the call, and the run did not end as the baseline did (testkit.FailInconclusive fails the test on such a scenario)", o.ID, first.ID))
				case o.StateError != "":
					// State or the Settle failed around the repeat (State
					// could not be encoded or panicked in this scenario's
					// world, though it worked in the baseline, where a
					// failure stops the suite, stateerror.go; or the
					// Settle failed, its bound reached or its check
					// erring): the suite could not see whether it did
					// anything. Counted, a correct
					// agent failed whenever its worker was slower than the
					// bound, or its State held a cycle (a red team's); as
					// after a crash, the repeat is unjudged and the
					// scenario inconclusive (Suite.duplicates).
					tr.unsettled = true
					tr.Notes = append(tr.Notes, fmt.Sprintf("%s repeated %s and was not judged: %s; %s (testkit.FailInconclusive fails the test on such a scenario)", o.ID, first.ID, o.StateError, stateAdvice(o.StateError)))
				case !baseline && (o.stateSeen() && o.StateChange == "" || o.Overlapped && clusterTaken(o)) && !effectSeen(o) && o.effect().carriedAlone && first.effect() != nil && first.effect().carriedAlone && baseTr != nil && len(baseTr.gaps) > 0 && settledEnds(tr, end, baseTr) && endSame() && !reorders(k):
					// A call served with the run carried and no traced
					// call around it (a tool over MCP, its context from
					// Resolve) settles nothing itself (judge.before), so
					// what it sets going that lands after it answered (a
					// mail sent from a goroutine) is in no window, here or
					// in the baseline, whose state changed outside every
					// traced write. Both ends were read once the Settle
					// said the world was quiet, and the run ended as the
					// baseline did: the repeats left nothing one delivery
					// did not. Where it ended otherwise, each execution
					// counts (below). Counted, a correct notifier that
					// keeps one mail per order was a duplicate_write in 4
					// of 14 scenarios on every run (red team rZ #1, rtY
					// #10's agent with its Settle). So where the
					// concurrent redelivery's calls overlapped, with no
					// window of their own but their cluster's (11 runs
					// in 75 of that agent, three test binaries at once).
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByEndState
					if !deferredNoted {
						deferredNoted = true
						tr.Notes = append(tr.Notes, carriedAloneNote(k.op, o.ID))
					}
				case tr.odd().endUnread && o.stateSeen() && o.StateChange == "" && !effectSeen(o) && baseEnd != "":
					// The scenario stalled, so its end was never read, and
					// no window showed the op's effect, here or in the
					// baseline: the end is what would have judged the
					// repeat (the run that ends absorbs a keyed repeat so).
					// Counted, a correct keyed mail scheduler was a
					// duplicate_write beside its scenario's true stall
					// (red team rZ #2). Unjudged: the stall fails the
					// scenario already.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, fmt.Sprintf("%s (a repeat of %s) was not judged: no call of %s changed the state in its own window, here or in the baseline, and the scenario stalled before its end was read, which is what tells whether a repeat whose effect lands outside its call left a second one; fix the stall, and the repeat is judged", o.ID, first.ID, k.op))
					}
				case o.Overlapped && !o.Idempotent && tr.endSettled && nothingLandedSettled(tr, baseTr, end, baseEnd, alike):
					// Nothing landed by the settled end (settledlate.go):
					// unjudged.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, nothingLandedNote(o, endChange))
					}
				case !baseline && !effectSeen(o) && !reorders(k) && endSame() && carried():
					// Made inside other traced calls that hold its
					// effect (a transaction they commit after it
					// returns), and at most one of those changed the
					// state (nestedcarried.go).
					o.Repeat, o.JudgedBy = RepeatAbsorbed, JudgedByState
					if !deferredNoted {
						deferredNoted = true
						tr.Notes = append(tr.Notes, carriedByCallerNote(k.op, o.ID, carriedBy))
					}
				case o.Overlapped && endChange != "" && overlapUnjudged(k.op, k.id, o.ID) != "":
					// Counted below by the end, but no write of the run
					// changed what State reads (unseen.go), or the end
					// differs from the baseline's only in values no call,
					// gap or wait of this run changed (untouchedend.go):
					// unjudged.
					if !stillNoted {
						stillNoted = true
						tr.unsettled = true
						tr.Notes = append(tr.Notes, overlapUnjudged(k.op, k.id, o.ID))
					}
				default:
					o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByCount
					dups = append(dups, o.ID)
					switch {
					case o.Overlapped && endChange != "":
						if change == "" {
							change = endChange
							note = "the calls overlapped in time, so this compares the end state with what one delivery left"
						}
					case change == "" && un != nil && tr.endStill && o.stateSeen() && o.StateChange == "" && lateCopied(end, un.base, k.op, k.id, &views):
						change, note = describeChange(baseEnd, end, maxChange), lateCopiedNote // latenotlanded.go
					case o.stateSeen() || o.Overlapped && o.effect() != nil && !effectSeen(o):
						if change == "" && note == "" { // what another repeat showed says more
							note = unseenNote
						}
						for _, x := range [2]*Operation{first, o} {
							// The first execution's window may have
							// changed where the repeat's did not.
							if e := x.effect(); change == "" && note == unseenNote && e != nil && !x.stateSeen() && e.inCluster && e.before != e.after {
								note, overlapChange = overlapNote, "in the window of "+x.ID+", "+DescribeChange(e.before, e.after)
							}
						}
					}
				}
			}
		}
		if len(dups) == 1 && len(notIdem) == 0 && !baseline && endParts != nil && landedByReturn(tr, end, baseTr) && !endSame() && carriedBetweenCalls(tr, baseTr, k.op, k.id, idx, endParts, &views) {
			// The repeats' windows changed nothing, but calls of the op
			// that failed by themselves left effects between calls
			// (gapcarried.go): judged by the end, which holds more.
			for _, i := range idx[1:] {
				if o := &tr.Ops[i]; o.Repeat == RepeatAbsorbed && (o.JudgedBy == JudgedByState || o.JudgedBy == JudgedByOneExecution) {
					o.Repeat, o.JudgedBy = RepeatDuplicate, JudgedByEndState
					dups = append(dups, o.ID)
				}
			}
			if len(dups) > 1 {
				change, note = endChange, carriedNote
			}
		}
		if len(notIdem) > 0 {
			calls := append([]string{first.ID}, notIdem...)
			out = append(out, Finding{Code: CodeNotIdempotent, Severity: SeverityError, Ops: opID[:1:1], Identities: opID[1:2:2], Calls: calls,
				Message: fmt.Sprintf("%s is declared idempotent, but its repeat %s with the same arguments changed the state: %s; the declaration is wrong: remove idempotent and make the write idempotent at the sink (idem.Store)",
					k.op, notIdem[0], notIdemChange)})
		}
		if len(dups) < 2 {
			continue
		}
		if fold && dupFound {
			out = append(out, Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: opID[:1:1], Identities: opID[1:2:2], Calls: dups})
			continue
		}
		dupFound = true
		var room [768]byte // the whole message, most of it the advice below, on the stack
		b := room[:0]
		if change == "" && note == overlapNote {
			// An effect was seen, but not whose: the finding says what
			// changed, and why the repeat still counts.
			b = append(b, fmt.Sprintf("%s executed %d times for identity %s (%s), and State saw the world change only while its executions overlapped other calls in time (%s), so it could not tell which call changed it, nor whether a repeat did: without a Settle the suite cannot tell a write that changes nothing from one whose effect lands later (a background worker), so each execution counts as an effect; if the effect lands later, give a Settle (testkit.SettleOn) so the suite waits for it; if a repeat changes nothing (a set to the value it has), declare the op idempotent: State then checks the declaration",
				k.op, len(dups), k.id, strings.Join(dups, ", "), clip(overlapChange, maxChange/2))...)
			out = append(out, Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: opID[:1:1], Identities: opID[1:2:2], Calls: dups,
				Message: string(b)})
			continue
		}
		if change == "" && note == unseenNote {
			// No effect was seen: the finding says why it still counts.
			b = appendExecuted(b, k.op, k.id, dups)
			// The likeliest cause first: a State that leaves out what the
			// op changes (red team rtV #22d: a State without the outbox,
			// and a duplicate email).
			b = append(b, ", and State saw no execution change the world: if State leaves out what "...)
			b = append(b, k.op...)
			b = append(b, " changes (a table, an outbox, a service's record), add it, and see that the tool reaches the world State reads (a client made once, with sync.Once or in a package variable, keeps the world of the Setup that ran first); without a Settle the suite cannot tell a write that changes nothing from one whose effect lands later (a background worker), so each execution counts as an effect; if the effect lands later, give a Settle (testkit.SettleOn) so the suite waits for it; if a repeat changes nothing (a set to the value it has), declare the op idempotent: State then checks the declaration"...)
			out = append(out, Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: opID[:1:1], Identities: opID[1:2:2], Calls: dups,
				Message: string(b)})
			continue
		}
		b = appendExecuted(b, k.op, k.id, dups)
		b = append(b, ": one effect done "...)
		b = strconv.AppendInt(b, int64(len(dups)), 10)
		b = append(b, " times"...)
		// A repeat that failed yet landed is named too: its error says
		// the write did not happen, and State says it did.
		var again *Operation
		// Looked up by id only where a repeat of the group failed (dups'
		// repeats are of idx): a search of the trace for each repeat,
		// 10 us of the ten-write suite's 75 findings, none of which has.
		if slices.ContainsFunc(idx[1:], func(i int) bool { return landed(&tr.Ops[i]) || failedTogether(&tr.Ops[i]) }) {
			for _, id := range dups[1:] {
				if o := traceOp(tr, id); o != nil && (landed(o) || failedTogether(o)) {
					again = o
					break
				}
			}
		}
		switch {
		case failedTogether(first) && again != nil:
			// Neither has a window of its own: the end said they landed
			// (landedTogether).
			b = append(b, fmt.Sprintf(" (%s failed with %q, yet the run ended with more than one delivery leaves where it changes the state: it landed, and %s did it again, failing too)", first.ID, clip(first.Error, 120), again.ID)...)
		case failedTogether(first):
			b = append(b, fmt.Sprintf(" (%s failed with %q, yet the run ended with more than one delivery leaves where it changes the state: it landed, and the retry did it again)", first.ID, clip(first.Error, 120))...)
		case landed(first) && again != nil:
			b = append(b, fmt.Sprintf(" (%s failed with %q, yet it changed the state: %s; it landed, and %s did it again, failing too)", first.ID, clip(first.Error, 120), clip(first.StateChange, maxChange/2), again.ID)...)
		case landed(first):
			b = append(b, fmt.Sprintf(" (%s failed with %q, yet it changed the state: %s; it landed, and the retry did it again)", first.ID, clip(first.Error, 120), clip(first.StateChange, maxChange/2))...)
		case again != nil:
			b = append(b, fmt.Sprintf(" (%s failed with %q, yet it changed the state: it landed)", again.ID, clip(again.Error, 120))...)
		}
		switch {
		case change != "" && note != "":
			b = append(b, "; the repeat changed the state ("...)
			b = append(b, note...)
			b = append(b, "): "...)
			b = append(b, change...)
		case change != "":
			b = append(b, "; the repeat changed the state: "...)
			b = append(b, change...)
		case note != "":
			b = append(b, " ("...)
			b = append(b, note...)
			b = append(b, ")"...)
		}
		if entityReads < 0 {
			entityReads = 0
			if hasEntityRead(tr) {
				entityReads = 1
			}
		}
		b = append(b, repeatAdvice(tr, first, dups, rereadNote, entityReads == 1)...) // rmw.go
		if !rereadNote && change != "" && !strings.Contains(change, "added") && !strings.Contains(change, "removed") && !strings.Contains(change, "entries") {
			// Values changed in place, no member more: it may be the
			// sink's bookkeeping, which State should not hold.
			b = append(b, "; if what it changed is bookkeeping that every call updates (a timestamp, a version, a count of attempts), leave that out of State"...)
		}
		if change == "" && innerWrites < 0 {
			innerWrites = 0
			if replayedInside(tr) {
				innerWrites = 1
			}
		}
		if change == "" && innerWrites == 1 && innerReplayed(tr, dups[1:]) {
			// A tool that writes only through tools it calls, whose
			// repeats their sink answered from its record.
			b = append(b, fmt.Sprintf("; every write made inside its repeats was replayed by its sink (MarkReplayed): if %s does nothing but make those calls, declare it idempotent, or give testkit.State so the suite can see", k.op)...)
		} else if change == "" && !first.stateSeen() && first.StateError == "" && !first.Overlapped {
			b = append(b, "; if a repeat of it truly changes nothing (an upsert, a set), declare it idempotent, or give testkit.State so the suite can see"...)
		}
		out = append(out, Finding{Code: CodeDuplicateWrite, Severity: SeverityError, Ops: opID[:1:1], Identities: opID[1:2:2], Calls: dups,
			Message: string(b)})
	}
	unjudgedLate(tr, lateIn)
	besideJudged(tr, beside)
	if !baseline {
		// An end no traced call explains (unexplained.go): inconclusive.
		if n := unexplainedEnd(tr, baseTr, end, alike); n != "" {
			tr.unsettled = true
			tr.Notes = append(tr.Notes, n)
		}
		if tr.odd().lateRepeated && baseTr != nil && lateUnseenInBase(baseTr) && end != "" && !alike(end, baseEnd) {
			// The baseline's end holds nothing of what landed late
			// here: the ends cannot say what the repeats did. Ends
			// alike but for their clocks' stamps or the names creates
			// made are the same end (latelook.go).
			tr.unsettled = true
			tr.Notes = append(tr.Notes, lateUnseenNote)
		} else if n := unseenWrites(tr, baseTr, end, alike); n != "" && !tr.unsettled && !dupFound {
			// Writes State saw change nothing, where the baseline's
			// did (unseen.go): inconclusive. Not beside a second effect
			// found: overlapped calls that undid each other (a
			// check-then-toggle) leave nothing too, and a client made
			// once is not what the note would have to name.
			tr.unsettled = true
			tr.Notes = append(tr.Notes, n)
		}
	}
	return out
}

// appendExecuted appends the head of a duplicate_write finding's message,
// "op executed n times for identity id (call, call)", as fmt.Fprintf with
// "%s executed %d times for identity %s (%s)" and the calls joined by ", "
// did: without fmt's boxing of each argument and the joined list, 4
// allocations a finding and 33 to 4 us of the ten-write suite's 75
// findings (CPU profile, GOMAXPROCS=1). The
// message is built in a buffer on the stack, and made a string once, of
// its length: a strings.Builder grown to a bound (some 450 bytes) kept the
// bound, a size class or two above the 300 bytes most take: 75
// allocations (the Builder, moved to the heap by fmt.Fprintf) and 10 KB
// of the ten-write suite's 789.
func appendExecuted(b []byte, op, id string, calls []string) []byte {
	b = append(b, op...)
	b = append(b, " executed "...)
	b = strconv.AppendInt(b, int64(len(calls)), 10)
	b = append(b, " times for identity "...)
	b = append(b, id...)
	b = append(b, " ("...)
	for i, c := range calls {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, c...)
	}
	return append(b, ')')
}

// replayedInside reports whether a write made inside another call of tr
// was replayed: innerReplayed holds of no calls where none was, and its
// scan of the trace for each finding (each repeat of a tool writing
// through no inner call ends it at once) is left out.
func replayedInside(tr *Trace) bool {
	for i := range tr.Ops {
		if o := &tr.Ops[i]; o.Parent != "" && o.Kind == KindWrite && o.Replayed {
			return true
		}
	}
	return false
}

// innerReplayed reports whether each of the calls ids made writes inside
// it (Operation.Parent) and all of those were replayed.
func innerReplayed(tr *Trace, ids []string) bool {
	for _, id := range ids {
		inner := 0
		for i := range tr.Ops {
			if o := &tr.Ops[i]; o.Parent == id && o.Kind == KindWrite {
				if !o.Replayed {
					return false
				}
				inner++
			}
		}
		if inner == 0 {
			return false
		}
	}
	return len(ids) > 0
}

// parts is what the end-state judgement compares of a change from one
// snapshot to another: the places it changed (changedPlaces), at any
// depth, and the collections it added members to or removed members from.
// A write that inserts a row keyed by an id the sink hands out (T-1, then
// T-2; the next AUTOINCREMENT id) adds a new member on every execution:
// what its repeat added is never a place it changed in the baseline, so it
// is compared as "a member added to that collection", not by name.
type parts struct {
	places []place
	// added and removed hold, by the key of a collection's path (an
	// object's, or a list's), the members changed there: the place of a
	// key or row added or removed, or of a list entry whose count rose or
	// fell.
	added, removed map[string][]place
	// whole says a snapshot did not decode: every part may differ.
	whole bool
}

// partsOf returns the parts in which snapshot b differs from snapshot a.
func partsOf(a, b string, views *stateViews) *parts {
	ps := &parts{}
	if a == b {
		return ps
	}
	av, bv := views.of(a), views.of(b)
	places, ok := changedPlaces(av, bv)
	if !ok {
		ps.whole = true
		return ps
	}
	ps.places = places
	for _, p := range places {
		if coll, m, added, ok := member(p, av, bv); ok {
			ps.addMember(coll, m, added)
		}
	}
	return ps
}

func (ps *parts) addMember(coll string, m place, added bool) {
	at := &ps.removed
	if added {
		at = &ps.added
	}
	if *at == nil {
		*at = map[string][]place{}
	}
	(*at)[coll] = append((*at)[coll], m)
}

// merge adds the parts of q to ps.
func (ps *parts) merge(q *parts) {
	ps.places = append(ps.places, q.places...)
	ps.whole = ps.whole || q.whole
	for c, ms := range q.added {
		for _, m := range ms {
			ps.addMember(c, m, true)
		}
	}
	for c, ms := range q.removed {
		for _, m := range ms {
			ps.addMember(c, m, false)
		}
	}
}

// empty reports whether ps names no part.
func (ps *parts) empty() bool { return ps == nil || !ps.whole && len(ps.places) == 0 }

// member says whether changed place p, from snapshot a to b, added a
// member to a collection or removed one: the key of the collection's path,
// the member's place, and which. A key or a row is a member where the
// value at its path is missing (null) on one side, the outermost such
// path where a whole object came or went; a list's entry is one whose
// count rose (added) or fell.
func member(p place, a, b *stateView) (coll string, m place, added, ok bool) {
	if p.elem {
		na, _ := strconv.Atoi(a.at(p))
		nb, _ := strconv.Atoi(b.at(p))
		if na == nb {
			return "", place{}, false, false
		}
		return pathKey(p.path), p, nb > na, true
	}
	for i := 1; i <= len(p.path); i++ {
		q := place{path: p.path[:i]}
		// Missing (null) or not, unencoded (stateView.value): p's
		// collection is on its path.
		x, y := a.value(q.path) == nil, b.value(q.path) == nil
		switch {
		case x && !y:
			return pathKey(p.path[:i-1]), q, true, true
		case y && !x:
			return pathKey(p.path[:i-1]), q, false, true
		}
	}
	return "", place{}, false, false
}

func pathKey(path []string) string { return strings.Join(path, "\x01") }

// placesMeet reports whether places p and q may be one place, or one
// within the other: the value at a path holds every place under it; a
// list's entry is its own place, apart from the list's other entries. Two
// rows of one list keyed by different columns (each pair of snapshots
// keys its rows by the column they share most) may be one row.
func placesMeet(p, q place) bool {
	n := min(len(p.path), len(q.path))
	for i := range n {
		if p.path[i] == q.path[i] {
			continue
		}
		x, okx := strings.CutPrefix(p.path[i], rowSegment)
		y, oky := strings.CutPrefix(q.path[i], rowSegment)
		if okx && oky {
			cx, _, _ := strings.Cut(x, "\x00")
			cy, _, _ := strings.Cut(y, "\x00")
			return cx != cy
		}
		return false
	}
	if p.elem && q.elem && len(p.path) == len(q.path) {
		return p.entry == q.entry
	}
	return true
}

// meets reports whether the parts op changed in the baseline and the
// parts the run's end changed may be the same: a place of one meets a
// place of the other (placesMeet), or both added members to one
// collection, or both removed some. With window (the op's repeat o was
// seen to have an effect), members added or removed at the end count only
// where o's cluster changed one of them: a member already there before it
// began, or changed after it ended, is another call's (another op's, or
// what the delivery recorded untraced, a session row). Without both
// snapshots of the cluster it may be o's. An op that changed nothing in
// the baseline never meets; a snapshot that did not decode always does.
func meets(op, end *parts, o *Operation, window bool, views *stateViews) bool {
	if op.empty() || end.empty() {
		return false
	}
	if op.whole || end.whole {
		return true
	}
	for _, p := range op.places {
		if slices.ContainsFunc(end.places, func(q place) bool { return placesMeet(p, q) }) {
			return true
		}
	}
	for _, side := range [2][2]map[string][]place{{op.added, end.added}, {op.removed, end.removed}} {
		for c := range side[0] {
			if ms, ok := side[1][c]; ok && (!window || changedInWindow(o, ms, views)) {
				return true
			}
		}
	}
	return false
}

// changedInWindow reports whether the snapshots around overlapped repeat
// o's cluster differ at one of members; true without both of them.
func changedInWindow(o *Operation, members []place, views *stateViews) bool {
	v := o.effect()
	if v == nil || !v.inCluster || v.clErr != "" || v.before == "" || v.after == "" {
		return true
	}
	bv, av := views.of(v.before), views.of(v.after)
	if bv == nil || av == nil {
		return true
	}
	return slices.ContainsFunc(members, func(m place) bool { return bv.at(m) != av.at(m) })
}

// firstVisible reports whether the effect of first, the first execution of
// op for identity id, was visible by the time a repeat ran: its own
// snapshots changed; or it overlapped other writes (parallel calls of one
// delivery), and their cluster changed the parts of the state that op
// for id changed in the baseline (baseWin). A change of other parts only
// (a sibling's) says nothing of first's: its effect may land later.
func firstVisible(first *Operation, op, id string, baseWin map[string][2]string) bool {
	if first.StateChange != "" {
		return true
	}
	if !first.Overlapped || first.effect() == nil {
		return false
	}
	before, after := first.stateWindow()
	if before == "" || after == "" || before == after {
		return false
	}
	// By place only: that some member was added around first (a
	// sibling's row) says nothing of first's effect (members are for the
	// end state).
	var views stateViews
	changed := byName(partsOf(before, after, &views))
	prefix := op + "\x00" + id + "\x00"
	for wk, w := range baseWin {
		if !strings.HasPrefix(wk, prefix) {
			continue
		}
		if meets(byName(partsOf(w[0], w[1], &views)), changed, first, false, &views) {
			return true
		}
	}
	return false
}

// landedBefore reports whether an execution of first's op and identity
// that ran before it failed by itself yet changed the state in its own
// window (landed; left out of the group when no other execution did what
// it did): a booking whose gateway answered 502, retried with its
// key. Its effect was visible, and a repeat with equal snapshots changed
// nothing.
func landedBefore(tr *Trace, first *Operation) bool {
	ranBefore := func(o *Operation) bool {
		if x, y := o.execOrder(), first.execOrder(); x != 0 && y != 0 {
			return x < y
		}
		return o.Seq < first.Seq
	}
	for i := range tr.Ops {
		o := &tr.Ops[i]
		// landed first: most calls did not fail, and their op and
		// identity are then not compared.
		if o != first && landed(o) && o.Name == first.Name && o.Identity == first.Identity && ranBefore(o) {
			return true
		}
	}
	return false
}

// byName returns ps without its members added or removed.
func byName(ps *parts) *parts {
	return &parts{places: ps.places, whole: ps.whole}
}

// redo is what the snapshots around earlier executions of the same op,
// identity and arguments say of a repeat that changed the state (redone).
type redo struct {
	places []place // the places the repeat changed
	// setBack is the earlier execution whose effect the repeat set back:
	// at every place it changed, the repeat left what that execution
	// left, starting from something other than what that execution
	// started from. A later write changed what it had left (a ticket
	// closed after it was opened), and the repeat did nothing that
	// execution had not done. A second append, or an email queued again
	// after the outbox was sent and cleared, starts where the first did:
	// no set back.
	setBack string
	// against is an earlier execution from whose end the repeat started,
	// nothing changed in between, and which it changed anyway (a retry
	// that appended a second entry). Only that shows an op declared
	// idempotent is not: once other writes came in between, a change may
	// be theirs (a total recomputed after a line was added, a row
	// inserted again under a new id after it was deleted, a job drained
	// again after it was queued again).
	against string
	// again is an entry of a list that the repeat added once more, as an
	// earlier execution had added it, to a list that held it as often as
	// that execution left it: a mail logged as sent a second time. A set
	// adds nothing that is there already: whatever came in between, that
	// is a second effect.
	again      string
	againAfter int // the execOrder of the execution it added the entry again after
	// redo is an earlier execution whose change the repeat made again, at
	// every place it changed: from what that one started from, to what
	// it left (a deposit again after a payout; a shipment's status set
	// again after something set it back). redoOrder is its execOrder.
	redo      string
	redoOrder int
	// baseSetBack says the earlier executions overlapped other writes,
	// and the repeat did all and only what one execution in the baseline
	// did, from where that one started, which there set back what an
	// earlier execution had left after a later write changed it (set 5,
	// 7, then 5 again): the repeat is that set back, made by one of the
	// deliveries, and is judged as a set back is, by the end.
	baseSetBack bool
	// unseen says no earlier execution with the same arguments was seen
	// alone, here or in the baseline: what the repeat did cannot be told
	// from what its first execution did.
	unseen bool
	// whole says the repeat would be a set back of what one execution
	// does in the baseline, but did all of it: the places that execution
	// changed are the repeat's. A mail sent from the outbox (its row
	// deleted, the mail outside the snapshot) sends one queued anew under
	// another id just as it does the first: only an execution that did
	// more (a checkout that placed the order the repeat did not place
	// again) shows that the repeat did not do it again.
	whole bool
}

// setBackIndex lists, by place, the orders in which repeats that set
// back what an earlier execution of their op left (redo.setBack) ran.
type setBackIndex map[string][]int

func (x *setBackIndex) add(order int, places []place) {
	if *x == nil {
		*x = setBackIndex{}
	}
	for _, p := range places {
		k := p.key()
		(*x)[k] = append((*x)[k], order)
	}
}

// between reports whether every one of places was changed by a set-back
// that ran after the execution of order from and before the one of order
// to.
func (x setBackIndex) between(places []place, from, to int) bool {
	if from == 0 || to == 0 || len(x) == 0 {
		return false
	}
	for _, p := range places {
		if !slices.ContainsFunc(x[p.key()], func(o int) bool { return o > from && o < to }) {
			return false
		}
	}
	return true
}

// redone compares repeat o, seen alone between snapshots that differ,
// with the earlier executions of its group (earlier, in the order they
// ran) that were seen alone and had the same arguments. When none was
// (each overlapped other writes: two deliveries at once, an interleaving),
// it compares o with what one execution with those arguments did in the
// baseline (baseWin, nil in the baseline itself), where the calls ran
// alone: the latest of earlier stands for that execution in the order of
// this run, and o is its set back only where it did more than o did
// (whole). Without either, nothing says what o's first execution did
// (unseen).
func redone(tr *Trace, o *Operation, earlier []int, views *stateViews, baseWin map[string][2]string) redo {
	before, after := o.stateWindow()
	bv, av := views.of(before), views.of(after)
	places, ok := changedPlaces(bv, av)
	if !ok || len(places) == 0 {
		return redo{}
	}
	r := redo{places: places}
	ak := argsKey(o)
	compared := false
	for _, e := range slices.Backward(earlier) {
		p := &tr.Ops[e]
		if !p.stateSeen() || argsKey(p) != ak {
			continue
		}
		pBefore, pAfter := p.stateWindow()
		pbv, pav := views.of(pBefore), views.of(pAfter)
		if pbv == nil || pav == nil {
			continue
		}
		compared = true
		if r.compare(p.ID, p.execOrder(), before, bv, av, pAfter, pbv, pav, true) {
			break
		}
	}
	if compared || baseWin == nil {
		return r
	}
	order := 0
	for _, e := range earlier {
		order = max(order, tr.Ops[e].execOrder())
	}
	key := o.Name + "\x00" + o.Identity + "\x00" + ak
	var ws [][2]string
	for n := 1; ; n++ {
		w, ok := baseWin[windowKey(key, n)]
		if !ok {
			break
		}
		ws = append(ws, w)
	}
	for n, w := range slices.Backward(ws) {
		pbv, pav := views.of(w[0]), views.of(w[1])
		if pbv == nil || pav == nil {
			continue
		}
		compared = true
		had := r.redo != ""
		if r.compare(inBaseline, order, before, bv, av, w[1], pbv, pav, didMore(r.places, pbv, pav)) {
			break
		}
		if !had && r.redo != "" && !didMore(r.places, pbv, pav) {
			r.baseSetBack = setsBack(ws[:n], pbv, pav, views)
		}
	}
	r.unseen = !compared
	return r
}

// setsBack reports whether the execution between decoded snapshots pbv
// and pav, in the baseline, set back what an earlier execution there
// (earlier, their windows) had left: at every place it changed it left
// what that one left, from something else. Such an op sets a value, not
// adds to one (a level set to 5, to 7, to 5 again).
func setsBack(earlier [][2]string, pbv, pav *stateView, views *stateViews) bool {
	places, ok := changedPlaces(pbv, pav)
	if !ok || len(places) == 0 {
		return false
	}
	for _, w := range earlier {
		ebv, eav := views.of(w[0]), views.of(w[1])
		if ebv != nil && eav != nil && samePlaces(places, pav, eav) && otherAtEvery(places, pbv, ebv) {
			return true
		}
	}
	return false
}

// didMore reports whether the execution between decoded snapshots pbv and
// pav changed a place that none of places (a repeat's) meets.
func didMore(places []place, pbv, pav *stateView) bool {
	did, ok := changedPlaces(pbv, pav)
	if !ok {
		return false
	}
	return slices.ContainsFunc(did, func(q place) bool {
		return !slices.ContainsFunc(places, func(p place) bool { return placesMeet(p, q) })
	})
}

// inBaseline names, in what a finding says, the execution of the baseline
// a repeat was compared with (redone).
const inBaseline = "one execution in the baseline"

// compare records what the snapshots around an earlier execution (id, of
// execOrder order: pAfter, decoded pbv and pav) say of the repeat (before,
// decoded bv and av), and reports whether that settles it. Without
// setBackOK the repeat is no set back of that execution (redo.whole).
func (r *redo) compare(id string, order int, before string, bv, av *stateView, pAfter string, pbv, pav *stateView, setBackOK bool) bool {
	if r.setBack == "" && samePlaces(r.places, av, pav) && otherAtEvery(r.places, bv, pbv) {
		if setBackOK {
			r.setBack = id
		} else {
			r.whole = true
		}
	}
	if r.against == "" && before == pAfter {
		r.against = id
	}
	if r.again == "" {
		if r.again = addedAgain(r.places, bv, av, pbv, pav); r.again != "" {
			r.againAfter = order
		}
	}
	if r.redo == "" && samePlaces(r.places, av, pav) && samePlaces(r.places, bv, pbv) {
		r.redo, r.redoOrder = id, order
	}
	return r.setBack != "" || r.against != ""
}

// stateViews decodes each snapshot of a judgement once.
type stateViews map[string]*stateView

func (m *stateViews) of(s string) *stateView {
	if v, ok := (*m)[s]; ok {
		return v
	}
	if *m == nil {
		*m = stateViews{}
	}
	v := viewOf(s)
	(*m)[s] = v
	return v
}

// noEffectFirst reports whether write tr.Ops[i] of a group (group lists
// its calls) succeeded yet was no execution of the group's effect: State
// saw it change nothing, alone, and nothing of it can have landed later.
// All of these hold:
//
//   - it succeeded (an answer given as data, {"error": "404 no such
//     invoice"}, is a success to the harness), and its own window shows no
//     change, or, where it overlapped only calls of its op, identity and
//     arguments, their cluster's window shows none (two deliveries at
//     once, both told 404);
//   - every call of the group that ran before it is such a call too: it
//     comes before the group's first effect (after one, an unchanged
//     window is an absorbed repeat, judged as such);
//   - a call of the group that ran after it made a change in its own
//     window, alone, and the run's end (end) holds at every place that
//     call changed what its window left: the one effect stands, and no
//     second one came on top of it there; past the baseline, the
//     baseline saw a call of the op, identity and arguments make that
//     change in its own window (madeInItsCall): the op's effect lands
//     inside its call, and the later window holds its own;
//   - past the baseline, the baseline saw a call of the op, identity and
//     arguments change nothing in its own window too (the caller checks
//     that: quietInBase);
//   - the state changed outside every traced write neither in this run
//     after the call began (gaps), nor anywhere in the baseline (the
//     caller checks that): a write whose effect lands after its call (a
//     queue worker's mail, a service that answered 503 and booked the
//     line later) shows there, and stays an execution.
//
// The rule mirrors the one for a write that failed yet changed the state
// (landed): effects, not executions. Without State, every success counts.
func noEffectFirst(tr *Trace, i int, group []int, end string, madeInItsCall func(*Operation) bool, views *stateViews) bool {
	quiet := func(o *Operation) bool {
		if o.Status != StatusSuccess || o.StateChange != "" || o.StateError != "" || o.execOrder() == 0 ||
			!o.stateSeen() && !(clusterTaken(o) && o.effect().clusterKeys == 1) {
			return false
		}
		// Its own window, or its cluster's where every call in it was this
		// one call (both deliveries' attach, told 404 together): nothing
		// in it changed. A cluster of other calls too may end where it
		// began with each call's effect done (a payout beside a deposit
		// of the same amount).
		b, a := o.stateWindow()
		return b != "" && b == a
	}
	o := &tr.Ops[i]
	if end == "" || !quiet(o) || len(tr.odd().gapsAt) != len(tr.gaps) {
		return false
	}
	for g, gap := range tr.gaps {
		if tr.odd().gapsAt[g] > o.execOrder() && gap[0] != gap[1] {
			return false // begun after o began: it may be o's, landing late
		}
	}
	made := false
	for _, j := range group {
		l := &tr.Ops[j]
		switch x := l.execOrder(); {
		case l == o:
		case x != 0 && x < o.execOrder():
			if !quiet(l) {
				return false // after the group's first effect, or not known
			}
		case !made && x > o.execOrder() && l.Status == StatusSuccess && !l.Overlapped && l.stateSeen() && l.StateChange != "" && l.StateError == "":
			lb, la := l.stateWindow()
			lav, endV := views.of(la), views.of(end)
			places, ok := changedPlaces(views.of(lb), lav)
			made = ok && len(places) > 0 && endV != nil && samePlaces(places, lav, endV) && madeInItsCall(l)
		}
	}
	return made
}

// landed reports whether write o failed (its own error: a client's
// timeout, a dropped connection) yet State saw it change the world while it
// ran alone: it executed, and a retry of it is a repeat.
func landed(o *Operation) bool {
	return o.Status == StatusFailed && o.Fault == FaultNone && o.stateSeen() && o.StateChange != ""
}

// addedBeside reports whether repeat o of an op declared idempotent,
// called with other arguments than first, its group's first execution,
// made a second effect beside first's rather than an update of it (red
// team rtL R5, adapters/mcp/rtl/idemargs: add_comment(T-1, "refund issued
// (attempt 2)") retried a timed-out "(attempt 1)", and the tracker, which
// drops an identical comment, posted a second one). All of these hold:
//
//   - o's own window only added members (no value changed in place, no
//     member removed: a field an upsert set anew, a row it replaced, are
//     an update), to collections that first's own window added to;
//   - what first left stood still where o began;
//   - o's arguments do not restate first's effect: not every string
//     first added (its entries, its row's fields; or, with no string,
//     every number) is among the values o was given. set_tags(T-1, [a])
//     then set_tags(T-1, [a, b]) adds b beside a, and restates a: the
//     set as a whole, given again, is an update, the shape MCP's
//     idempotentHint is for;
//   - the run ended otherwise than one delivery (the baseline's end, not
//     alike: same), with more members in each collection o added to.
//     An agent that adds two tags to a ticket, or posts two comments,
//     in one delivery (add_tag(T-1, "refund"), add_tag(T-1, "urgent")),
//     does it in the baseline too, and its end is one delivery's.
//
// Where o's window is of that shape but the rest cannot be told (first
// was not seen alone, an end was not taken), undecided says why, and o is
// taken as an update: the declaration stands where the evidence does not
// decide, with a note. In the baseline (no end to compare with) o is an
// update.
func addedBeside(first, o *Operation, end, baseEnd string, same func() bool, views *stateViews) (beside bool, undecided string) {
	if first == o || !o.stateSeen() {
		return false, ""
	}
	ob, oa := o.stateWindow()
	obv, oav := views.of(ob), views.of(oa)
	op := partsOf(ob, oa, views)
	if obv == nil || oav == nil || op.whole || len(op.added) == 0 || len(op.removed) > 0 {
		return false, ""
	}
	for _, p := range op.places {
		if _, _, added, ok := member(p, obv, oav); !ok || !added {
			return false, "" // a value changed in place: an update
		}
	}
	if !first.stateSeen() || first.StateChange == "" {
		return false, "its first execution " + first.ID + " was not seen alone, so what it made is not known"
	}
	fb, fa := first.stateWindow()
	fp := partsOf(fb, fa, views)
	fav := views.of(fa)
	if fp.whole || fav == nil {
		return false, "the snapshots around " + first.ID + " did not decode"
	}
	// The collections first added to: a member of one, or a list it
	// made from none ([] to ["a"] is a change of the list).
	for c := range op.added {
		if _, ok := fp.added[c]; !ok && !slices.ContainsFunc(fp.places, func(q place) bool { return !q.elem && pathKey(q.path) == c }) {
			return false, "" // it added to something else (a field of the row first made)
		}
	}
	// What first left stood where o began: each place as first left
	// it, a list's entry as many times or more, or a list holding its
	// entries still.
	var made []any // the values first added, for the restatement
	for _, q := range fp.places {
		was, now := fav.at(q), obv.at(q)
		switch {
		case q.elem:
			w, _ := strconv.Atoi(was)
			n, _ := strconv.Atoi(now)
			if n < w {
				return false, ""
			}
			if e, err := decodeState(q.entry); err == nil {
				made = append(made, e)
			}
			continue
		case was != now && !listHolds(now, was):
			return false, ""
		}
		switch v, err := decodeState(was); {
		case err != nil:
		case v == true && len(q.path) > 0:
			// A set kept as an object of true ({"alice": true}):
			// its keys are what it holds.
			made = append(made, q.path[len(q.path)-1])
		default:
			made = append(made, v)
		}
	}
	if restates(made, o) {
		return false, ""
	}
	if end == "" || baseEnd == "" {
		return false, "the run's end or the baseline's was not taken, so whether the run ended with more than one delivery leaves is not known"
	}
	if same() {
		return false, "" // the run ended as one delivery: nothing more stayed
	}
	endV, baseV := views.of(end), views.of(baseEnd)
	if endV == nil || baseV == nil {
		return false, "the end states did not decode"
	}
	for _, ms := range op.added {
		if coll := collectionOf(ms[0]); membersAt(endV, coll) <= membersAt(baseV, coll) {
			return false, "" // no more there than one delivery leaves
		}
	}
	return true, ""
}

// collectionOf returns the place of the collection that member m (of a
// parts' added or removed) belongs to: a list's entry, the list; a key or
// a row, the object or list that holds it.
func collectionOf(m place) place {
	if m.elem {
		return place{path: m.path}
	}
	return place{path: m.path[:len(m.path)-1]}
}

// membersAt returns how many members the collection at place c of v
// holds: a list's entries, an object's keys; 0 for anything else.
func membersAt(v *stateView, c place) int {
	x, err := decodeState(v.at(c))
	if err != nil {
		return 0
	}
	switch x := x.(type) {
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 0
}

// restates reports whether the values first made (made) are among what
// repeat o was given: every string in them is a string of o's arguments,
// or, where they hold no string, every number is a number of them. An
// entry the sink stamps (a row's id, its created_at) is no argument: such
// a row is not restated, and the end decides (addedBeside).
func restates(made []any, o *Operation) bool {
	args, err := decodeState(argsKey(o))
	if err != nil {
		return false
	}
	given := map[string]bool{}
	leaves(args, func(x any) { given[encode(x)] = true })
	var strs, nums []string
	for _, v := range made {
		leaves(v, func(x any) {
			switch x.(type) {
			case string:
				strs = append(strs, encode(x))
			case bool, nil:
			default:
				nums = append(nums, encode(x))
			}
		})
	}
	want := strs
	if len(want) == 0 {
		want = nums
	}
	if len(want) == 0 {
		return false
	}
	for _, x := range want {
		if !given[x] {
			return false
		}
	}
	return true
}

// leaves calls f with each value of v that is not an object or a list,
// at any depth (an object's keys are no values).
func leaves(v any, f func(any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			leaves(e, f)
		}
	case []any:
		for _, e := range x {
			leaves(e, f)
		}
	default:
		f(x)
	}
}

// listHolds reports whether the list encoded in outer holds every entry of
// the list encoded in inner, as many times.
func listHolds(outer, inner string) bool {
	o, err1 := decodeState(outer)
	i, err2 := decodeState(inner)
	ol, ok1 := o.([]any)
	il, ok2 := i.([]any)
	if err1 != nil || err2 != nil || !ok1 || !ok2 {
		return false
	}
	count := map[string]int{}
	for _, e := range ol {
		count[encode(e)]++
	}
	for _, e := range il {
		if count[encode(e)]--; count[encode(e)] < 0 {
			return false
		}
	}
	return true
}

// failedTogether reports whether write o failed by itself (no injected
// fault) while it overlapped other writes, in a cluster whose snapshots
// were taken and differ: it may have landed, and its own window, which
// would say, does not exist (landedTogether).
func failedTogether(o *Operation) bool {
	if o.Status != StatusFailed || o.Fault != FaultNone || !o.Overlapped || o.stateSeen() || !clusterTaken(o) {
		return false
	}
	before, after := o.stateWindow()
	return before != after
}

// landedTogether reports whether failedTogether call o landed, as the
// run's end (end) against the baseline's (baseEnd) shows: the two ends
// are not alike (same), and they differ (endParts) in a part of the
// state that an execution of o's op, identity and arguments changed in
// the baseline, alone (baseWin; the key in the baseline's names, inBase,
// where the sink named things anew), with o's cluster changing the
// members that differ (meets). An execution with these arguments that
// changed nothing there (a declined card), or none seen alone, says
// nothing landed: false. Never in the baseline, which has no other
// delivery to compare with.
func landedTogether(o *Operation, end, baseEnd string, endParts *parts, baseWin map[string][2]string, baseline bool, inBase func(string) string, same func() bool, views *stateViews) bool {
	if baseline || end == "" || baseEnd == "" || endParts == nil || same() {
		return false
	}
	k := o.Name + "\x00" + o.Identity + "\x00" + argsKey(o)
	if _, ok := baseWin[windowKey(k, 1)]; !ok {
		k = inBase(k)
	}
	ps := &parts{}
	for n := 1; ; n++ {
		w, ok := baseWin[windowKey(k, n)]
		if !ok {
			break
		}
		if w[0] != w[1] {
			ps.merge(partsOf(w[0], w[1], views))
		}
	}
	return meets(ps, endParts, o, true, views)
}

// redoneByAnother reports whether another execution of o's group (group
// lists them all), before or after it, changed the state where landed call
// o changed it, or may have: one that overlapped other writes, whose own
// change is not known.
func redoneByAnother(tr *Trace, o *Operation, group []int, views *stateViews) bool {
	ob, oa := o.stateWindow()
	oav := views.of(oa)
	mine, ok := changedPlaces(views.of(ob), oav)
	if !ok {
		return true
	}
	for _, i := range group {
		l := &tr.Ops[i]
		if l == o {
			continue
		}
		if l.Overlapped {
			return true
		}
		if !l.stateSeen() || l.StateChange == "" {
			continue
		}
		lb, la := l.stateWindow()
		lav := views.of(la)
		theirs, ok := changedPlaces(views.of(lb), lav)
		if !ok {
			return true
		}
		for _, p := range theirs {
			if slices.ContainsFunc(mine, func(q place) bool { return samePlace(p, lav, q, oav) }) {
				return true
			}
		}
	}
	return false
}

// samePlace reports whether place p, of a change that left snapshot pv, and
// place q, of one that left qv, are one place: a key or a row by its path;
// a list's entry only if the same entry, also where the other change's
// list held one and was one value (a first entry, then the same again, in
// either order).
func samePlace(p place, pv *stateView, q place, qv *stateView) bool {
	switch {
	case p.elem && q.elem:
		return p.entry == q.entry && slices.Equal(p.path, q.path)
	case p.elem && slices.Equal(p.path, q.path):
		return holds(qv, q, p.entry)
	case q.elem && slices.Equal(p.path, q.path):
		return holds(pv, p, q.entry)
	}
	n := min(len(p.path), len(q.path))
	return slices.Equal(p.path[:n], q.path[:n])
}

// holds reports whether the list at place q of snapshot v holds entry (an
// encoding).
func holds(v *stateView, q place, entry string) bool {
	if v == nil {
		return false
	}
	x, err := decodeState(v.at(q))
	l, _ := x.([]any)
	return err == nil && slices.ContainsFunc(l, func(e any) bool { return encode(e) == entry })
}

// readsArgs reports whether judging repeat o reads its arguments: an op
// declared idempotent tells an equal repeat from an update by them, and
// the calls that overlapped in a cluster are compared with one execution
// of the same arguments in the baseline (comparesOne). Repeats of other
// ops are judged without them.
func readsArgs(o *Operation, baseline bool) bool {
	return o.Idempotent || comparesOne(o, baseline)
}

// comparesOne reports whether repeat o overlapped other writes in a cluster
// whose snapshots can be compared with what one execution of it did in the
// baseline. Not when the world was let settle around o (Settle): its
// cluster's snapshot after holds what landed late (the shipment a worker
// took up from the outbox), and the baseline's windows, with no Settle
// around a first call, do not; such a cluster is judged by the run's end.
func comparesOne(o *Operation, baseline bool) bool {
	v := o.effect()
	return o.Overlapped && !baseline && v != nil && v.inCluster && !v.settled && v.clErr == "" && v.clusterKeys == 1 && v.before != "" && v.after != ""
}

// argsKey is the canonical encoding of a call's recorded arguments.
func argsKey(o *Operation) string {
	b, _ := o.Args.MarshalJSON()
	return string(b)
}

// executing is called when a traced write is about to run its tool.
func (c *Call) executing() {
	if j := c.inv.rec.judge; j != nil && j.reads != nil {
		switch c.op.Kind {
		case KindRead:
			j.readBefore(c)
		case KindWrite:
			j.reads.writeBegins()
		}
	}
	if j := c.inv.rec.judge; j != nil && c.op.Kind == KindWrite {
		if s := c.sched; s != nil && s.judgeAfter != nil {
			<-s.judgeAfter.sched.judged
		}
		j.before(c)
		if e := c.effect; e != nil && e.heldSettle != "" {
			c.inv.rec.addNoteOnce(heldSettleNote(c, e.heldSettle))
		}
	}
}

// judgeAfter makes c, a write let go at once with first, a write of the
// same op and identity in another delivery (twins of a concurrent
// delivery), reach the judge only once first has passed it (executing) or
// will not reach it (passedJudge). The first of two writes to reach the
// judge is the first execution, and the other the repeat: left to the
// goroutines, which of the twins was the repeat changed from run to run
// (and with it the calls a duplicate_write names). Their tools still run
// at once: c waits only until first's window opens, so either first has
// returned before c runs, and its effect is its own, or the two overlap
// and are judged together. Both calls are held at their gates: they read
// what is set here once let go.
func judgeAfter(c, first *Call) {
	if c.inv == first.inv || c.op.Kind != KindWrite || c.op != first.op || c.rec.Identity != first.rec.Identity || c.inv.rec.judge == nil {
		return
	}
	if f := first.schedPart(); f.judged == nil {
		f.judged = make(chan struct{})
	}
	c.schedPart().judgeAfter = first
}

// passedJudge says that c has passed the judge, or will not reach it: a
// call that waits to come after it (judgeAfter) goes on.
func (c *Call) passedJudge() {
	if c.sched != nil && c.sched.judged != nil {
		close(c.sched.judged)
	}
}

// executed is called when the tool of a traced call returned (or
// panicked).
func (c *Call) executed() {
	if j := c.inv.rec.judge; j != nil && c.effect != nil {
		j.after(c)
	}
	if j := c.inv.rec.judge; j != nil && j.reads != nil {
		switch c.op.Kind {
		case KindRead:
			j.readAfter(c)
		case KindWrite:
			j.reads.writeEnds()
		}
	}
}

// redelivers says the scenario delivers the whole invocation again, so
// that every write before the fault repeats.
func redelivers(kind string) bool {
	return kind == ScenarioCrashRestart || kind == ScenarioDuplicateSeq || kind == ScenarioDuplicateConcurrent
}

// duplicates adds the duplicate_write and not_idempotent findings of a
// scenario, one per op and identity repeated, but for a later duplicate of
// an op declared idempotent in a redelivery, which follows from the first.
func (s *Suite) duplicates(res *Result, tr *Trace, sc Scenario, namesOf func() renaming, add func(Finding)) {
	baseEnd := ""
	if s.base != nil {
		baseEnd = s.base.end
	}
	var baseTrace *Trace
	if s.base != nil {
		baseTrace = s.base
	}
	var un *untraced
	if sc.Kind != ScenarioBaseline {
		// Without the baseline's changes that were a failed call's
		// effect landing late: the agent's, not the world's (landedlate.go).
		un = untracedIn(withoutLateGaps(baseTrace, lateLandings(baseTrace)), s.cfg.settle != nil)
		if un != nil && !tr.endStill && len(tr.passed) > 0 && tr.end != "" {
			// This run's end never held still, and went through these
			// states as it was read: places of them that changed twice
			// or more by themselves are restless too (untraced.own).
			un.own = append(slices.Clone(tr.passed), tr.end)
		}
	}
	var baseWin map[string][2]string // nil, read as empty, without State: no map made for each scenario
	if hasWindows(baseTrace) {
		baseWin = windows(baseTrace)
	}
	if len(baseWin) > 0 {
		// The baseline's windows (State's snapshots around each write)
		// in this scenario's names.
		baseWin = namesOf().windows(baseWin)
	}
	if len(s.serial) > 0 {
		if baseWin == nil {
			baseWin = map[string][2]string{}
		}
		baseWin = withWindows(baseWin, s.serial)
	}
	if len(baseWin) > 0 && sc.Kind != ScenarioBaseline {
		tr.withRare().lone = &s.lone
	}
	found := judgeRepeatsIn(s.found[:0], tr, tr.end, baseEnd, baseWin, un, sc.Kind == ScenarioBaseline, false, baseTrace)
	if len(baseWin) > 0 && sc.Kind != ScenarioBaseline {
		s.lone.record(tr)
	}
	late := lateLandings(tr)
	found = addLateLandings(found, tr, late)
	if notes := lateInPlace(tr, late); len(notes) > 0 {
		res.Inconclusive = true // a failed write's effect may have landed late (landedlate.go)
		tr.Notes = append(tr.Notes, notes...)
	}
	if crashFired(tr) {
		for i := range tr.Ops {
			if o := &tr.Ops[i]; o.Repeat == "" && strings.HasPrefix(o.StateError, settleTimeout) {
				res.Inconclusive = true // a repeat left unjudged (judgeRepeatsIn)
			}
		}
	}
	if tr.unsettled {
		res.Inconclusive = true // a repeat left unjudged (an end never held still), or an end no traced call explains (judgeRepeatsIn)
	}
	ndup := countCode(found, CodeDuplicateWrite)
	if ndup > 0 {
		res.Duplicates = slices.Grow(res.Duplicates, ndup)
	}
	// Every op a scenario repeated is a problem of its own, named in the
	// report's problems: a redelivery (or a crash's restart) repeats
	// every write of the invocation, and each unkeyed one is a duplicate
	// with its own fix. They used to fold into the first, whose message
	// said "their duplicates follow from this one": untrue of writes not
	// declared idempotent (keying the first leaves the others), and the
	// problems list never named the later ops, so a newcomer learnt of
	// three bugs in three rounds of fix and rerun (red team rtV #9). A
	// later duplicate of an op declared idempotent does follow from an
	// earlier one: a set or a drain does its work again only on what the
	// earlier duplicate left (a drain runs the job queued twice), and
	// keying that one absorbs it; it folds into the first, as before.
	fold := redelivers(sc.Kind)
	lead := -1
	for i := range found {
		f := &found[i]
		if f.Code != CodeDuplicateWrite {
			continue
		}
		d := Duplicate{Op: f.Ops[0], Args: tr.argsOf(f.Calls[0]), Identity: f.Identities[0], Count: len(f.Calls), Calls: f.Calls}
		res.Duplicates = append(res.Duplicates, d)
		if o := traceOp(tr, f.Calls[len(f.Calls)-1]); fold && lead >= 0 && o != nil && o.Idempotent {
			found[lead].Follows = append(found[lead].Follows, f.Ops[0]+" for identity "+f.Identities[0])
			f.Code = "" // folded into the lead
			continue
		}
		f.Details = duplicateDetails(d)
		if differ, names := differingArgs(tr, f.Calls); differ != "" {
			f.Message += argsAdvice(tr, f.Calls, differ, names) // rmw.go
		}
		if lead < 0 {
			lead = i
		}
	}
	if lead >= 0 && len(found[lead].Follows) > 0 {
		f := &found[lead]
		f.Message += "; the redelivery repeated later writes declared idempotent too, which did their work again on what this duplicate left, and follow from it (keyed, this one leaves them nothing to redo): " + strings.Join(f.Follows, "; ")
	}
	if kept := len(found) - countCode(found, ""); kept > 1 {
		// Room for them all at once: appended one by one (add), a
		// redelivery's ten findings grew the list four times, 44
		// allocations and about 10 us (CPU profile) of the ten-write
		// suite.
		res.Findings = slices.Grow(res.Findings, kept)
	}
	for _, f := range found {
		if f.Code != "" {
			add(f)
		}
	}
	// Emptied for the next scenario: add kept copies, and what the
	// findings point to belongs to this scenario's result.
	clear(found)
	s.found = found[:0]
}

// opsByID returns the calls of tr with the ids, in their order, each the
// first of its id, as traceOp finds them, in one pass over the trace; ok
// is false where an id names no call (or there are more than 8 ids).
func opsByID(tr *Trace, ids []string) (ops [8]*Operation, ok bool) {
	if len(ids) > len(ops) {
		return ops, false
	}
	left := len(ids)
	for i := 0; i < len(tr.Ops) && left > 0; i++ {
		o := &tr.Ops[i]
		for j, id := range ids {
			if ops[j] == nil && o.ID == id {
				ops[j] = o
				left--
			}
		}
	}
	return ops, left == 0
}

// differingArgs says in which arguments the calls ids of one op and
// identity differ, with their values in order (status: "processing",
// "shipped"), and names them; "" when they are the same.
func differingArgs(tr *Trace, ids []string) (string, []string) {
	if len(ids) < 2 {
		return "", nil
	}
	var (
		first  Args
		differ bool
	)
	if ops, ok := opsByID(tr, ids); ok {
		// The calls found in one pass over the trace, not one a call:
		// 10 us of the ten-write suite's 75 findings (argsOf).
		first = ops[0].Args
		for _, o := range ops[1:len(ids)] {
			differ = differ || !sameArgs(first, o.Args)
		}
	} else {
		first = tr.argsOf(ids[0])
		for _, id := range ids[1:] {
			differ = differ || !sameArgs(first, tr.argsOf(id))
		}
	}
	if !differ {
		return "", nil // most repeats: the same call again, nothing encoded
	}
	var out, names []string
	for i, name := range first.Names {
		if i >= len(first.Values) {
			break
		}
		vals := []string{}
		same := true
		for _, id := range ids {
			a := tr.argsOf(id)
			if i >= len(a.Values) {
				return "", nil
			}
			v := string(appendValue(nil, a.Values[i]))
			if len(vals) > 0 && v != vals[0] {
				same = false
			}
			if !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		if !same {
			out = append(out, name+": "+strings.Join(vals, ", "))
			names = append(names, name)
		}
	}
	return strings.Join(out, "; "), names
}

func countCode(fs []Finding, code string) int {
	n := 0
	for _, f := range fs {
		if f.Code == code {
			n++
		}
	}
	return n
}

// leaveOut removes from each group the calls out says are no execution of
// it (out is given the group as it was and the call's index in the trace).
// A group's slice is copied only when a call is left out: most keep all.
func leaveOut(groups [][]int, out func(idx []int, i int) bool) {
	for p, idx := range groups {
		var kept []int
		for n, i := range idx {
			if out(idx, i) {
				if kept == nil {
					kept = append(make([]int, 0, len(idx)-1), idx[:n]...)
				}
				continue
			}
			if kept != nil {
				kept = append(kept, i)
			}
		}
		if kept != nil {
			groups[p] = kept
		}
	}
}

// byServer reports whether c was made by a goroutine of a server in the
// process serving the agent, not by the agent's own: a consumer Setup
// started, with a context that does not come from the agent's
// (callRare.bySetupServer), or a handler that took the run from the
// request (runtime.Served, runtime.Resolve).
func (c *Call) byServer() bool {
	return c.rec.rare != nil && c.rec.rare.bySetupServer || isServed(c.Context)
}

// heldSettleNote says that the Settle before repeat c, made by a server
// of the world (Call.byServer), did not see the world quiet (err), and
// that c was judged all the same.
func heldSettleNote(c *Call, err string) string {
	return fmt.Sprintf("the Settle before %s's repeat at %s ran on the goroutine of a server of the world serving the delivery (a consumer Setup started, or a handler given the run by runtime.Resolve), and did not see the world quiet while the harness held that call: %s. The work the world had pending may be that call's own (its message, acknowledged once the handler returns), which cannot end before the call runs. No Settle ran after it; the repeat was judged by its window where that changed the state, and otherwise by whether the run's end, which the Settle saw quiet, is the baseline's. If the Settle waits for nothing the handler holds, raise its bound",
		c.op.Name, shortSite(siteOf(c.pc)), err)
}
