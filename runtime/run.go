package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/agentidem/agentidem-go/internal/bubble"
)

// errCrashed ends an invocation that kept calling tools after its injected
// crash.
var errCrashed = fmt.Errorf("invocation crashed: %w", context.Canceled)

// errAbandoned is the outcome of an invocation left running after a stall.
var errAbandoned = errors.New("abandoned after a stall: the agent did not return")

// recorder is the state of one active run: the trace being written, the
// planned fault, the gate.
//
// It is 552 bytes: with the 8-byte header the allocator puts before an
// object above 512 bytes that holds pointers, that is within the 576-byte
// size class, and 24 bytes more take the 640-byte one (64 bytes a
// scenario). What few runs record is in rare (recRare): in the recorder,
// it took the 768-byte class.
// Put a new field where padding is (beside the bools), or check the size.
type recorder struct {
	name  string
	fault Fault
	// faultErr gives the error the agent sees for the fault (FaultError).
	faultErr func(op string, kind FaultKind) error
	gate     Gate
	// base is the clock reading the times of calls are offsets from (now).
	base time.Time

	// sched is the gate when it is a scheduler; calls are then numbered
	// at their start gate.
	sched *scheduler

	// goroutines, when not nil, collects the goroutines that made calls
	// (the baseline does, to tell a serial agent from a parallel one).
	goroutines map[uint64]bool
	roots      []uint64 // the invocations' own goroutines, when goroutines is kept
	// pre, when not nil, holds the goroutines there before the first
	// delivery began, after Setup (a baseline's, a crash's): written
	// before any delivery, only read after (invocation.owns).
	pre map[uint64]bool

	// world tells the scenario's goroutines from the rest of the process
	// (real-time quiescence, stall reports, attribution of calls whose
	// context carries no run).
	world *world

	// progress counts events (calls, gate arrivals and releases,
	// returns); a scenario whose count stops moving for stallAfter is
	// stalled. seenProgress and seenAt belong to the goroutine that
	// watches.
	//
	// A call of a crashed invocation is no progress: refused (or its
	// goroutine ended), it does nothing, and a loop that makes it again
	// and again (a bus redelivering a message the crashed delivery
	// published, a retry middleware) held both the crash's idle watch
	// and the stall watch off for good (red team rtY #5). recRare's
	// deadCalls counts them, for the stall's message (deadCallsNote).
	progress     atomic.Int64
	stallAfter   time.Duration
	seenProgress int64
	seenAt       time.Time
	// abandoned, when not nil, is closed when a stalled scenario gives up
	// on its agent: invocations waited for inline return at once.
	abandoned chan struct{}
	// aborted is set when the harness gave up on the scenario (abort): an
	// invocation that begins after it begins cancelled.
	aborted atomic.Bool
	// carries is set once Token named a context of the run: a server in
	// the process may serve its deliveries after they return, and each
	// delivery is held open until a Settle sees the world quiet
	// (holdCarried).
	carries atomic.Bool

	mu               sync.Mutex
	seq              int
	calls            [][]*Call // in the order they began, in chunks (addCall)
	ncalls           int
	occ              []opCount      // calls so far per op name (occurrences)
	occIndex         map[string]int // the index of each name in occ, past 16 names
	faultNote        string
	panics           []Panic
	errs             []string
	invs             int
	current          *invocation // the newest invocation, for calls without a context
	all              []*invocation
	pending          int         // deliveries of a concurrent scenario started, not yet in all: in flight all the same (lookup)
	fired, crashed   bool        // beside unstopped: see the size note above
	unstopped        bool        // a call after the crash could not be stopped (Call.stopIfCrashed)
	heldPastDeadline bool        // a call's context ended while a gate held it (Call.endedAtGate)
	apart            bool        // the concurrent deliveries ran apart for a wait of the world's (lockstep.Wait)
	heldAny          atomic.Bool // a call's deadline ran out at a gate (Call.endedAtGate)
	// lostRequest is, for a lost_response, which of the faulted call's
	// write requests loses its answer (Scenario.request), set before the
	// run begins: in the padding after heldAny.
	lostRequest int32
	notes       []string
	impure      string                // why the agent cannot run in a bubble, if seen
	detached    map[string]detachedBy // call sites that passed a context without the run, and who, while only one kind did (noteDetached)
	amidClosed  bool                  // closeAmid was called: lateAmid tells no more
	// rare holds what few runs record (recRare), made on first use
	// under mu.
	rare *recRare

	judge *judge // the State judge, when State is given
	id    uint64 // the run's number in the process (runs)
	// late counts the calls made after the run ended by goroutines its
	// agent left running (late.go); nil outside a suite.
	late *lateCalls
	// stopped is set when the run ends (stop): its trace is read, and it
	// records no further call.
	stopped atomic.Bool
	// afterReturn is set when a call was made after its invocation had
	// returned, by a goroutine the agent left running (the gated baseline
	// waits for it: Suite.leavesCallers).
	afterReturn atomic.Bool
	// block holds the Calls not yet handed out (newCall).
	block   atomic.Pointer[callBlock]
	blocked int       // the size of the last block, under mu
	secrets secretSet // the values of redacted parameters (Call.Redact)
	// ids are the ids of calls the suite's traces made (Call.idIn); nil
	// outside a suite.
	ids *callIDs
}

// recRare is what few runs record, apart from the recorder (recorder.rare):
// 192 bytes every scenario allocated, and with them the recorder took the
// 768-byte size class where it now takes the 576-byte one.
type recRare struct {
	untied                    []string   // write requests through Transport no call could be tied to (untied.go)
	crashEnded                []string   // goroutines the crash ended that the invocation had started, where (Call.stopIfCrashed)
	crashEnds                 []crashEnd // the stacks of the goroutines the crash ended (crashlock.go)
	crashLock                 string     // why a stall is the suite's own: a lock the crash left held (lockLeftByCrash), a transaction left open (txLeftByCrash)
	refused                   []string   // calls that could not be attributed to a run
	refusedOps                []string   // their ops
	unattributed, unattribOps []string   // Trace.Unattributed, and their ops
	amidLate, amidLateOps     []string   // Trace.amidLate, and their ops
	// afterReturnOps names the ops of the calls made after their
	// invocation had returned (recorder.afterReturn).
	afterReturnOps []string
	// tokens are the tokens of the run's contexts that are done, which
	// Token keeps until the run stops (keepToken).
	tokens []string
	// deadCall is the first call a crashed invocation made and had
	// refused, as the stall's message names it (deadCallsNote).
	deadCall  string
	deadCalls int
	// held counts the invocations of r.all that holdCarried waited for.
	held int
	// carriedLag is, plus one nanosecond, the longest time from a
	// delivery's return to a call a server in the process made for it
	// with the run carried (Resolve): a consumer of a bus whose publisher
	// does not wait for the handler. Zero for none (holdCarried).
	carriedLag time.Duration
	// carriedRestless says a delivery holdCarriedStill held was let go
	// before the state held still.
	carriedRestless bool
	// world counts the calls that workers Setup started made during the
	// run without the agent's context (worldWorker): the world's, untraced.
	world *lateCalls
	// backoffs are the goroutines seen in an API client's retry back-off
	// (retryBackoff) once no progress had been made for half the stall
	// bound, at backoffsAt (noteBackoffs): one still there when the
	// scenario stalls has slept that long at least.
	backoffs   map[uint64]bool
	backoffsAt time.Time
	// slowStall says the stall's every blocked goroutine slept in a retry
	// back-off (onlyRetryWaits): an inconclusive scenario, not a failed one.
	slowStall bool
	// deadlock is what the stall watch saw of the scenario's goroutines
	// in a stretch without progress (deadlock.go).
	deadlock *deadlockWatch
	// moved is the run's fault moved off a call that failed by itself
	// (movedFault).
	moved *movedFault
}

// noRare is the recRare of a run that recorded none of it: only read.
var noRare recRare

// rareLocked returns r's rare part, making it; r.mu is held.
func (r *recorder) rareLocked() *recRare {
	if r.rare == nil {
		r.rare = new(recRare)
	}
	return r.rare
}

// odd returns r's rare part to read, noRare if it has none; r.mu is held.
func (r *recorder) odd() *recRare {
	if r.rare == nil {
		return &noRare
	}
	return r.rare
}

// invocation is one delivery of the agent within a run.
type invocation struct {
	rec    *recorder
	n      int
	cancel context.CancelFunc
	// dead is set when a crash was injected: the worker is gone, so no
	// later call of this invocation may execute.
	dead atomic.Bool
	// returned is set when the agent func returned, at returnedAt (Unix
	// nanoseconds, set first).
	returned   atomic.Bool
	returnedAt atomic.Int64
	// awaited and finished belong to the world's accounting of the
	// harness's goroutines, under its lock (quietgates.go): a goroutine
	// blocks until the invocation returns, and its goroutine returned.
	awaited, finished bool
	// gid is the invocation's goroutine; callbacks says context.AfterFunc
	// callbacks may run for it (cancelled). Both are written under the
	// recorder's lock before the goroutine ends.
	gid       uint64
	callbacks bool
	// callers are the other goroutines that made its calls and descend
	// from its goroutine (noteCaller), listed as roots while it runs and
	// as ended after; strangers made its calls without descending from it
	// (a worker pool started in Setup). Under the recorder's lock; closed
	// once its goroutine returned and callers moved to ended.
	callers, strangers []uint64
	closed             bool
	// self is the invocation's goroutine while it runs its agent func,
	// set before the func starts: most calls are made on it, and
	// noteCaller knows them without a lookup.
	self atomic.Uint64
	// failed counts its writes whose answer was an error or never came:
	// from the first on, each write records the path it was called
	// through (Call.notePath).
	failed atomic.Int32
	// err and panicked are the agent func's outcome, written by the
	// invocation's goroutine before it closes its done channel and read
	// after (invokeNumbered): here, not in variables the goroutine's
	// closure shares, which cost two allocations an invocation.
	err      error
	panicked bool
	// ctx is the context its agent func runs with, here rather than boxed
	// into an allocation of its own as an interface value: 55 allocations
	// of the ten-write suite's 3,573.
	ctx invContext
	// halted is cancelled when the harness ends the invocation (halt),
	// made when a carried run asks (haltContext); halting is set then.
	halted  atomic.Pointer[invHalt]
	halting atomic.Bool
}

// noteCaller is called for each call the invocation's context attributes
// to it. A goroutine the invocation's goroutine started (a framework's
// goroutine per tool call, as the Anthropic SDK's tool runner has) is
// listed as the invocation's, as a root is: a goroutine it starts and
// leaves (a fire-and-forget audit write, calling without the agent's
// context) is then told by it even after it exited, whose link to the
// invocation no later stack dump shows. Its parent is read from its own
// stack, once per goroutine and invocation.
func (inv *invocation) noteCaller() {
	gid := goroutineID()
	if gid == inv.self.Load() {
		return // the invocation's goroutine
	}
	if _, ok := roots.Load(gid); ok {
		return // the invocation's goroutine, or one noted already
	}
	r := inv.rec
	r.mu.Lock()
	seen := inv.closed || slices.Contains(inv.callers, gid) || slices.Contains(inv.strangers, gid)
	r.mu.Unlock()
	if seen {
		return
	}
	p, ok := roots.Load(ownParent())
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case inv.closed:
	case ok && p == inv:
		inv.callers = append(inv.callers, gid)
		roots.Store(gid, inv)
	default:
		inv.strangers = append(inv.strangers, gid)
	}
}

// endIfCrashed ends the calling goroutine, about to make a call with ctx
// of inv's after inv's run ended, where inv crashed and the goroutine
// descends from inv's own (a notification a tool sent from a goroutine of
// its own, that had not called yet): the crash ends it at its later call,
// as during the run (stopIfCrashed), since in production the process died
// with it. Left to call, it was a late call of the scenario, which it made
// inconclusive. A server's handler serving the call (Served) goes on.
func (inv *invocation) endIfCrashed(ctx context.Context) {
	self := inv.self.Load()
	if !inv.dead.Load() || self == 0 || isServed(ctx) {
		return
	}
	if _, _, leftBy, _ := attribute([]*recorder{inv.rec}, goroutineID()); leftBy == self {
		goruntime.Goexit()
	}
}

// owns reports whether goroutine gid is the invocation's: its own, or one
// that descends from it, even through goroutines that have exited (a
// stack snapshot's links, those the world learned, and the goroutines of
// ended invocations: attribute). A goroutine started before the invocation
// began (a pool's worker that Setup or the test started), or descending
// from one (a goroutine such a pool starts per job), is not, whatever
// context it calls with.
//
// When the links break at a goroutine that has exited (a spawner the
// agent started, which started the caller and returned), the goroutines
// there before the first delivery (recorder.pre) tell: that goroutine was
// started since, and, with no other invocation, Setup or ended run to
// claim it and no goroutine there before on the way, the caller is the
// invocation's. Known limit: so is a goroutine that a worker Setup
// started runs through such a spawner. A goroutine whose parent is not
// known at all (one time.AfterFunc started) is not the invocation's.
func (inv *invocation) owns(gid uint64) bool {
	if x, ok := roots.Load(gid); ok {
		return x == inv
	}
	got, late, leftBy, _ := attribute([]*recorder{inv.rec}, gid)
	pre := inv.rec.pre
	if got != nil || late != nil || leftBy != 0 || pre == nil {
		return got == inv
	}
	alive, parent := map[uint64]bool{}, map[uint64]uint64{}
	snapshotSome(func(id, p uint64) bool {
		alive[id] = true
		if p != 0 {
			parent[id] = p
		}
		return false
	})
	last := gid // where the links end
	for p, i := gid, 0; p != 0 && i < 64; p, i = parent[p], i+1 {
		if pre[p] {
			return false
		}
		last = p
	}
	return !alive[last]
}

// ownParent returns the goroutine that created the calling one, from its
// own stack (cheaper than a dump of every goroutine), or 0.
func ownParent() uint64 {
	bp := stackBufs.Get().(*[]byte)
	defer stackBufs.Put(bp)
	b := (*bp)[:goruntime.Stack(*bp, false)]
	i := bytes.LastIndex(b, []byte(" in goroutine "))
	if i < 0 {
		return 0
	}
	rest := b[i+len(" in goroutine "):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	id, _ := strconv.ParseUint(string(rest[:j]), 10, 64)
	return id
}

// cancelled cancels the invocation's context once the agent returned, in
// the invocation's goroutine (gid), as a server cancels a request's when
// its handler returns. A callback the agent registered with
// context.AfterFunc (releasing a lock, closing a session) then runs in a
// goroutine that this one creates, as it does for a context the agent
// cancels itself (a deferred cancel of context.WithTimeout): so the
// callbacks descend from the invocation, and a tool they call without its
// context is still its call. callbacks is set when one may run, and the
// harness then waits for them (settleAfterFuncs): when the process created
// a goroutine since the invocation's goroutine began (created, from
// runtime/metrics' count, which never misses one), other than those the
// harness started through the world (harness, read with created). The number of live
// goroutines cannot tell: another goroutine exiting meanwhile (another
// test's, the delivery before this one) hides a callback from it, and its
// calls were then reported late in CI. The price is a stack snapshot per
// invocation of an agent that starts goroutines (an HTTP client's
// connections). Where the runtime does
// not count created goroutines, the number is all there is: it rose across
// the cancel, or is above running, the number before the invocation
// started, plus this goroutine.
func (inv *invocation) cancelled(gid uint64, running int, created uint64, harness int) {
	before := goruntime.NumGoroutine()
	inv.cancel()
	var callbacks bool
	w := inv.rec.world
	if w != nil && created != 0 {
		// The goroutines the harness started meanwhile (the other
		// delivery's, in duplicate_delivery/concurrent) are not the
		// invocation's: counted, every such delivery took a stack
		// snapshot for nothing.
		now, made, ok := w.createdCount()
		callbacks = !ok || now-created > uint64(made-harness)
	} else if now, ok := goroutinesCreated(); ok && created != 0 {
		callbacks = now > created
	} else {
		after := goruntime.NumGoroutine()
		callbacks = after > before || after > running+1
	}
	inv.rec.mu.Lock() // an abandoned invocation returns while deliver reads r.all
	inv.gid = gid
	inv.callbacks = callbacks
	inv.rec.mu.Unlock()
}

// callKey finds the call a context belongs to (MarkReplayed).
type callKey struct{}

// enclosingKey finds, in one walk up a call's context, what it was made
// in: the call of a run it was made inside of (a *Call: a tool calling a
// tool with its context), or else the invocation that made it (an
// *invocation, from the invocation's context, invContext).
type enclosingKey struct{}

// invContext is the context an invocation runs with.
type invContext struct {
	context.Context
	inv *invocation
}

func (c invContext) Value(key any) any {
	if _, ok := key.(enclosingKey); ok {
		return c.inv
	}
	return c.Context.Value(key)
}

// global holds the active recorders, for calls of tools that take no
// context.Context.
var global struct {
	mu   sync.Mutex
	recs []*recorder
	// judging are the runs of suites that have stopped and still read
	// the world (the State judge's end, the invariants): a late call
	// that lands meanwhile is theirs to hear of (lateAmid) until
	// closeAmid.
	judging []*recorder
}

func newRecorder(name string, f Fault, g Gate) *recorder {
	return newRecorderAt(name, f, g, time.Now())
}

// newRecorderAt is newRecorder with its clock's base read by the caller
// (Suite.run's start: a time.Now less a scenario, which reads two clocks),
// in the goroutine that records, before its first call: any earlier time
// serves, now's offsets from it being exact either way.
func newRecorderAt(name string, f Fault, g Gate, base time.Time) *recorder {
	r := &recorder{id: runs.Add(1), name: name, fault: f, gate: g, base: base}
	if s, ok := g.(*scheduler); ok {
		r.sched = s
		s.rec = r
	}
	return r
}

// now returns the time of an event of the run as an offset from r.base,
// which at turns back into a time.Time when the trace is read: one read of
// the monotonic clock, where time.Now reads the wall clock too. Inside a
// testing/synctest bubble the offset is taken on the bubble's clock (a
// goroutine's bubble cannot change between its calls), as time.Now would.
func (r *recorder) now() int64 {
	return int64(time.Since(r.base))
}

// at returns the time now returned d for: the wall-clock time, with the
// monotonic reading time.Now would have given it. A negative offset from
// a base with a monotonic reading was taken in a synctest bubble, whose
// times have none (time.Since fell back to the wall clocks).
func (r *recorder) at(d int64) time.Time {
	t := r.base.Add(time.Duration(d))
	if d < 0 {
		t = t.Round(0)
	}
	return t
}

// maxCallBlock is the most Calls one allocation of newCall holds: as many
// as fill 12 KiB, one of the allocator's size classes, so that the largest
// blocks waste little room.
const maxCallBlock = 12 << 10 / int(unsafe.Sizeof(Call{}))

// callBlock is a block of Calls that newCall hands out in turn: next
// counts those claimed, and may run past the end. It is an allocation of
// its own, for each block and for each recorder handed spare Calls
// (useSpare): about 60 a suite of the ten-write agent, 1.7% more than with
// the block under r.mu, for one lock a call fewer.
type callBlock struct {
	calls []Call
	next  atomic.Int64
}

// newCall returns a zero Call from the recorder's current block, so that
// most calls cost no allocation of their own. Blocks grow from 2 to
// maxCallBlock Calls: a short run keeps little memory alive (a trace's
// strings may share a Call's bytes, see canonicalInto).
//
// A Call is claimed with one atomic add, and r.mu is taken only to make
// a block: Begin takes r.mu once a call, where taking it here too was a
// second lock and unlock for every call.
func (r *recorder) newCall() *Call {
	for {
		if b := r.block.Load(); b != nil {
			if i := b.next.Add(1) - 1; i < int64(len(b.calls)) {
				return &b.calls[i]
			}
		}
		r.mu.Lock()
		if b := r.block.Load(); b == nil || b.next.Load() >= int64(len(b.calls)) {
			r.blocked = min(max(2*r.blocked, 2), maxCallBlock)
			r.block.Store(&callBlock{calls: make([]Call, r.blocked)})
		}
		r.mu.Unlock()
	}
}

// takeBlock takes the Calls of r's block not handed out yet; r.mu is
// held. A newCall that loaded the block before finds none left in it.
func (r *recorder) takeBlock() []Call {
	b := r.block.Swap(nil)
	if b == nil {
		return nil
	}
	n := int64(len(b.calls))
	return b.calls[min(b.next.Swap(n), n):]
}

// opCount counts the calls of the ops of one name in a run.
type opCount struct {
	name string
	n    int
}

// spareCalls is what was left of a finished recorder's block of Calls, for
// the suite's next recorder: a scenario makes few calls, and each one
// starting from a block of 2 that doubles left most of its last block
// unused.
type spareCalls struct {
	block   []Call
	blocked int
	// calls and names are the most calls and op names a recorder of the
	// suite has listed so far: the next one sizes its lists to them
	// (useSpare). Grown from nothing, the list of calls took three
	// allocations of its chunks and three of the list of chunks for the
	// 22 calls of a redelivery of the ten-write agent, and the counts by
	// name two.
	calls, names int
	// ids are the suite's ids of calls (Call.idIn), made by its first
	// recorder.
	ids *callIDs
}

// takeSpare hands r's unused Calls to the next recorder (useSpare). r
// makes new blocks for any call it still records (a goroutine the agent
// left behind), so that no Call is handed out twice.
func (r *recorder) takeSpare() spareCalls {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := spareCalls{block: r.takeBlock(), blocked: r.blocked, calls: r.ncalls, names: cap(r.occ), ids: r.ids}
	if len(r.calls) > 0 {
		sp.calls = max(sp.calls, cap(r.calls[0])) // the size r was given
	}
	return sp
}

// useSpare makes r hand out the Calls sp holds before it makes a block,
// and sizes its lists as sp says; r has recorded nothing yet.
func (r *recorder) useSpare(sp spareCalls) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(sp.block) > 0 {
		r.block.Store(&callBlock{calls: sp.block})
		r.blocked = sp.blocked
	}
	if sp.calls > 0 {
		r.calls = [][]*Call{make([]*Call, 0, min(sp.calls, 1024))}
	}
	if sp.names > 0 {
		r.occ = make([]opCount, 0, sp.names)
	}
	r.ids = sp.ids
	if r.ids == nil {
		r.ids = &callIDs{}
	}
}

// untilCallsEnd waits, up to grace, until the calls of r that began and
// have not ended by now have.
func (r *recorder) untilCallsEnd(grace time.Duration) {
	ended := func(c *Call) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.rec.ended
	}
	var running []*Call
	r.mu.Lock()
	for _, chunk := range r.calls {
		for _, c := range chunk {
			if !ended(c) {
				running = append(running, c)
			}
		}
	}
	r.mu.Unlock()
	deadline := time.Now().Add(grace)
	for pause := 50 * time.Microsecond; len(running) > 0 && time.Now().Before(deadline); pause = min(2*pause, 2*time.Millisecond) {
		time.Sleep(pause)
		running = slices.DeleteFunc(running, ended)
	}
}

// addCall appends c to r.calls; r.mu is held. The chunks double up to
// 1024 calls and are never copied.
func (r *recorder) addCall(c *Call) {
	n := len(r.calls)
	if n == 0 || len(r.calls[n-1]) == cap(r.calls[n-1]) { // a first chunk may be there (useSpare)
		r.calls = append(r.calls, make([]*Call, 0, min(max(r.ncalls, 8), 1024)))
		n++
	}
	r.calls[n-1] = append(r.calls[n-1], c)
	r.ncalls++
}

// start makes the recorder active in the process.
func (r *recorder) start() {
	global.mu.Lock()
	global.recs = append(global.recs, r)
	global.mu.Unlock()
	activeRuns.Add(1)
}

// noteReturned marks inv returned, now.
func (inv *invocation) noteReturned() {
	inv.returnedAt.Store(time.Now().UnixNano())
	inv.returned.Store(true)
}

// noteCarriedAfter notes a call made for inv, which returned, by a server
// in the process with the run carried (Resolve): how long after the return
// (recorder.carriedLag).
func (r *recorder) noteCarriedAfter(inv *invocation) {
	lag := time.Duration(max(time.Now().UnixNano()-inv.returnedAt.Load(), 0)) + 1
	r.mu.Lock()
	if x := r.rareLocked(); lag > x.carriedLag {
		x.carriedLag = lag
	}
	r.mu.Unlock()
}

// stop makes the recorder inactive: a goroutine the agent left behind that
// calls a tool with the run's context from now on runs it as in
// production (Begin).
func (r *recorder) stop() {
	// Under r.mu: a call that found the run active and records under it
	// (Begin, refuse) either lands before the trace is read or sees the
	// run stopped.
	r.mu.Lock()
	r.stopped.Store(true)
	r.mu.Unlock()
	global.mu.Lock()
	for i, x := range global.recs {
		if x == r {
			global.recs = append(global.recs[:i], global.recs[i+1:]...)
			break
		}
	}
	if r.late != nil {
		global.judging = append(global.judging, r)
	}
	global.mu.Unlock()
	activeRuns.Add(-1)
	r.dropTokens()
}

// closeAmid ends what lateAmid tells r, once its run has read the world for
// the last time, and returns what it was told (Trace.amidLate).
func (r *recorder) closeAmid() (notes, ops []string) {
	r.mu.Lock()
	notes, ops = slices.Clone(r.odd().amidLate), slices.Clone(r.odd().amidLateOps)
	r.amidClosed = true
	r.mu.Unlock()
	global.mu.Lock()
	global.judging = slices.DeleteFunc(global.judging, func(x *recorder) bool { return x == r })
	global.mu.Unlock()
	return notes, ops
}

// invoke runs fn as a new invocation of the agent, recovering a panic of the
// agent itself into the trace. It reports whether fn returned normally.
func (r *recorder) invoke(ctx context.Context, fn func(context.Context) error) (err error, panicked bool) {
	r.mu.Lock()
	r.invs++
	n := r.invs
	r.mu.Unlock()
	return r.invokeNumbered(ctx, fn, n)
}

// invokeNumbered is invoke with the invocation number chosen by the caller;
// the caller has counted it in r.invs.
func (r *recorder) invokeNumbered(ctx context.Context, fn func(context.Context) error, n int) (error, bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inv := &invocation{rec: r, n: n, cancel: cancel}
	// Set before the invocation is listed: restartOf hands a listed
	// invocation's ctx to a handler that Resolve serves (carry.go), and
	// set after, it raced with that read (-race, 2 of 16 runs of
	// TestRedeliveredMessageOfACrashedDeliveryIsTheRestarts).
	inv.ctx = invContext{ctx, inv}
	r.mu.Lock()
	if n > r.invs {
		r.invs = n
	}
	r.current = inv
	r.all = append(r.all, inv)
	if r.pending > 0 {
		r.pending--
	}
	r.mu.Unlock()
	if r.aborted.Load() {
		cancel() // abort ran before this invocation was listed
	}
	ctx = &inv.ctx

	// The agent runs in a goroutine of its own, so that runtime.Goexit
	// (a crashed invocation's next call, a tool without an error result
	// that panicked) ends it and not the harness. Its results are read
	// only after done is closed.
	done := make(chan struct{})
	w := r.world
	// The goroutines alive before the invocation starts: more after it
	// returned means something may still run on its behalf
	// (invocation.cancelled).
	running := goruntime.NumGoroutine()
	root := func() {
		defer close(done)
		if w != nil {
			defer w.returned(inv)
		}
		defer r.progress.Add(1)
		gid := goroutineID()
		var (
			created uint64
			harness int
		)
		if w != nil {
			created, harness, _ = w.createdCount()
		} else {
			created, _ = goroutinesCreated()
		}
		r.mu.Lock()
		if r.goroutines != nil {
			// The invocation's own goroutine has returned once done is
			// closed: it is no leak even if it has not exited yet.
			r.roots = append(r.roots, gid)
		}
		r.mu.Unlock()
		if r.world != nil {
			r.world.root(gid, n)
		}
		roots.Store(gid, inv)
		inv.self.Store(gid)
		defer func() {
			// Listed as ended before it stops being a root: a goroutine
			// it started, calling in between, must find it as one or
			// the other (lateCaller caches what it found). So are the
			// goroutines it started that made its calls (noteCaller).
			r.mu.Lock()
			inv.closed = true
			callers := inv.callers
			r.mu.Unlock()
			e := endedInvocation{r.id, int32(n), r.late != nil}
			ended.add(gid, e)
			for _, c := range callers {
				ended.add(c, e)
			}
			roots.Delete(gid)
			for _, c := range callers {
				roots.Delete(c)
			}
		}()
		returned := false
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				if e, ok := r.exitingByCrash(gid); ok {
					// Raised by a deferred function the crash's Goexit
					// ran; recovered, the Goexit goes on.
					r.droppedCrashPanic(e, v)
					inv.err = errCrashed
					return
				}
				if inv.dead.Load() {
					// The delivery crashed, and its own code went on
					// where the crash did not stop it: a goroutine
					// of it that made no call since (a collector
					// reading the answers of goroutines the crash
					// ended, which never sent them). A crashed
					// process runs nothing after the crash: an
					// agent_panic on a correct fan-out, in every
					// crash_restart (red team rS #2b).
					r.addNoteOnce(fmt.Sprintf("after the crash of delivery %d, its own code went on where the crash did not stop it (a goroutine of it that made no call since, such as one collecting the answers of goroutines the crash ended, which never sent them) and panicked: %v; a crashed process runs nothing after the crash, so this is no finding of the agent's, and the restart is what the scenario judges", inv.n, v))
					inv.err = errCrashed
					return
				}
				r.addPanic(Panic{Value: fmt.Sprint(v), Stack: string(debug.Stack())})
				inv.panicked = true
				inv.err = fmt.Errorf("agent panicked: %v", v)
				return
			}
			if inv.dead.Load() {
				// The crashed invocation tried another call and was
				// stopped there, as a dead worker would be.
				inv.err = errCrashed
				return
			}
			// runtime.Goexit: a tool without an error result panicked.
			inv.panicked = true
			inv.err = fmt.Errorf("agent goroutine exited (runtime.Goexit)")
		}()
		defer inv.noteReturned()
		defer inv.cancelled(gid, running, created, harness)
		inv.err = fn(ctx)
		returned = true
	}
	if w == nil {
		goInvocation(root) // its stack grown (growStack)
	} else {
		w.startRoot(root)
		w.await(inv)
		defer w.awoken(inv)
	}
	// A crashed invocation that waits for goroutines the crash ended is
	// taken as gone once it can no longer act (crash_idle.go).
	var (
		crashTick <-chan time.Time
		cw        crashWatch
		self      uint64
	)
	if w != nil && r.fault.Kind == FaultCrash {
		var t *time.Ticker
		if bubble.In() {
			// A ticker belongs to the bubble it was made in, as
			// callHook's timers do: none from the pool.
			t = time.NewTicker(crashPoll)
			defer t.Stop()
		} else {
			// From a pool, reset: a ticker made for each delivery of
			// a crash scenario was two allocations and most of a
			// microsecond (the ten-write suite's 20: 40 allocations),
			// and seldom ticks, the invocation returning first.
			t = crashTickers.Get().(*time.Ticker)
			t.Reset(crashPoll)
			defer func() {
				t.Stop()
				crashTickers.Put(t)
			}()
		}
		crashTick, self = t.C, goroutineID()
	}
	for {
		select {
		case <-crashTick:
			if cw.gone(r, inv, self) {
				return errCrashed, false
			}
		case <-done:
			if _, lockstep := r.gate.(*lockstep); r.sched == nil && !lockstep && inv.callbacks {
				// Under a scheduler, the callbacks' calls wait at its gates,
				// which it opens only once this goroutine waits too: the
				// wait would hold the run up to afterFuncGrace, and the
				// scheduler does not end the run before they are quiet. In
				// lockstep, deliver waits once both deliveries returned.
				settleAfterFuncs([]uint64{inv.gid})
			}
			return inv.err, inv.panicked
		case <-r.abandoned:
			// The scenario stalled and the agent did not return after its
			// context was cancelled: it is left running (stallWatch).
			return errAbandoned, false
		}
	}
}

// crashTickers are stopped tickers for the deliveries of crash scenarios
// (invokeNumbered), outside a bubble.
var crashTickers = sync.Pool{New: func() any {
	t := time.NewTicker(time.Hour)
	t.Stop()
	return t
}}

// settleAfterFuncs waits for what cancelling a returned invocation's
// context started: the harness cancels it as a server cancels a request's
// when its handler returns, and a callback the agent registered with
// context.AfterFunc (releasing a lock, closing a session) then runs in a
// goroutine of its own, created by the goroutine that cancelled (one of
// parents: the invocations' own goroutines, invocation.cancelled). The tools it calls, with context.WithoutCancel(ctx), are the
// invocation's; without the wait, whether they landed before the run
// ended (traced) or after (late.go) was a race. The callers take the
// snapshot only where one may run (invocation.cancelled): for most agents
// it is not taken. A callback that runs longer than afterFuncGrace is
// left to late.go, which reports its calls as late.
//
// It waits as well, as long, for the goroutines the invocation's own
// goroutine started that were still running (or ready to run) when it
// returned, until they end or block: a tool call made in a goroutine the
// agent did not wait for (fire and forget) came before the run ended, or
// after, as the Go scheduler happened to run it, and the same agent was
// found unsafe on one run (duplicate_write) and inconclusive on the next
// (the call late, its fault not fired). One that blocks, or sleeps, before
// it calls is not waited for: its calls are late, as before.
func settleAfterFuncs(parents []uint64) {
	started, running := map[uint64]bool{}, map[uint64]bool{}
	for _, g := range snapshotSome(func(_, parent uint64) bool { return slices.Contains(parents, parent) }) {
		if !slices.Contains(parents, g.parent) || len(g.funcs) == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(g.funcs[len(g.funcs)-1], "created by context.(*afterFuncCtx).cancel"):
			started[g.id] = true
		case progressing(g.state):
			running[g.id] = true
		}
	}
	stillAlive(started, afterFuncGrace, nil)
	untilBlocked(running, afterFuncGrace)
}

// untilBlocked waits, up to grace, until none of the goroutines ids is
// running or ready to run: each has ended or blocks.
func untilBlocked(ids map[uint64]bool, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for pause := 50 * time.Microsecond; len(ids) > 0; pause = min(2*pause, time.Millisecond) {
		time.Sleep(pause)
		busy := false
		for _, g := range snapshotSome(func(id, _ uint64) bool { return ids[id] }) {
			if ids[g.id] && progressing(g.state) {
				busy = true
				break
			}
		}
		if !busy || time.Now().After(deadline) {
			return
		}
	}
}

// afterFuncGrace bounds settleAfterFuncs's wait.
const afterFuncGrace = 100 * time.Millisecond

func (r *recorder) addPanic(p Panic) {
	r.mu.Lock()
	r.panics = append(r.panics, p)
	r.mu.Unlock()
}

// didCrash reports whether a crash fault fired in the run.
func (r *recorder) didCrash() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.crashed
}

func (r *recorder) addError(msg string) {
	r.mu.Lock()
	r.errs = append(r.errs, msg)
	r.mu.Unlock()
}

// trace returns a snapshot of what was recorded.
func (r *recorder) trace() *Trace {
	t, calls := r.expand()
	if r.judge != nil {
		// After r.mu is let go: the judge's lock is held while State
		// runs, and nothing stops State from calling a traced tool.
		if !r.judge.record(calls, t.Ops, r.aborted.Load()) {
			t.Notes = append(t.Notes, "the State function or the Settle was still running, after the scenario stalled: what State saw of this scenario's writes is left out")
		}
	}
	// Calls are recorded in start order unless a scheduler numbered them
	// as it released them: most traces need no sort.
	for i := 1; i < len(t.Ops); i++ {
		if t.Ops[i].Seq < t.Ops[i-1].Seq {
			sort.SliceStable(t.Ops, func(i, j int) bool { return t.Ops[i].Seq < t.Ops[j].Seq })
			break
		}
	}
	batches(t.Ops)
	return t
}

// expand copies what was recorded into a trace, its ops in the order the
// calls were recorded in, and returns with it the calls, with State (for
// judge.record).
func (r *recorder) expand() (*Trace, []*Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &Trace{Name: r.name, Invocations: r.invs, Fired: r.fired, FaultNote: r.faultNote}
	if r.fault.Kind != FaultNone {
		f := r.fault
		t.Fault = &f
	}
	for _, chunk := range r.calls {
		for _, c := range chunk {
			r.numberLocked(c) // calls that never passed their start gate
		}
	}
	t.Ops = make([]Operation, r.ncalls)
	if r.ids != nil {
		r.ids.mu.Lock()
		defer r.ids.mu.Unlock()
	}
	var calls []*Call
	if r.judge != nil {
		calls = make([]*Call, 0, r.ncalls)
	}
	i := 0
	var site siteMemo
	for _, chunk := range r.calls {
		for _, c := range chunk {
			c.mu.Lock()
			c.expand(r, &t.Ops[i], &site)
			c.mu.Unlock()
			if r.judge != nil {
				calls = append(calls, c)
			}
			i++
		}
	}
	t.Panics = append([]Panic(nil), r.panics...)
	t.Errors = append([]string(nil), r.errs...)
	t.Notes = append([]string(nil), r.notes...)
	x := r.odd()
	t.Refused = append([]string(nil), x.refused...)
	t.Unattributed = append([]string(nil), x.unattributed...)
	if len(x.refusedOps) > 0 || len(x.unattribOps) > 0 {
		tx := t.withRare()
		tx.refusedOps = append([]string(nil), x.refusedOps...)
		tx.unattributedOps = append([]string(nil), x.unattribOps...)
	}
	if x.carriedRestless {
		t.withRare().carriedRestless = true
	}
	if l := x.world; l != nil {
		l.mu.Lock()
		if len(l.ops) > 0 {
			tx := t.withRare()
			tx.worldOps = slices.Clone(l.ops)
			for _, pc := range l.sites {
				tx.worldSites = append(tx.worldSites, shortSite(siteOf(pc)))
			}
		}
		l.mu.Unlock()
	}
	for site, by := range r.detached {
		t.Detached = append(t.Detached, site)
		switch by {
		case byHandler:
			tx := t.withRare()
			tx.handlerSites = append(tx.handlerSites, site)
		case bySetupServer:
			tx := t.withRare()
			tx.serverSites = append(tx.serverSites, site)
		}
	}
	sort.Strings(t.Detached)
	for i := range t.Ops {
		t.Ops[i].Result = encodable(t.Ops[i].Result)
	}
	return t, calls
}

// roots maps the goroutine of every running invocation to it, for calls
// whose context carries no run.
var roots rootTable

// rootTable is a map under a read-write lock, where a sync.Map made an
// entry (an allocation) for each invocation's Store: with the Delete, 1.3%
// of the ten-write suite's CPU profile (GOMAXPROCS=1, 55 invocations a
// suite; docs/performance.md, fourteenth sitting). Its reads are few: a
// call from a goroutine that is not its invocation's own, once per such
// goroutine (noteCaller), and the attribution of a call without a run.
type rootTable struct {
	mu sync.RWMutex
	m  map[uint64]*invocation
}

func (t *rootTable) Load(gid uint64) (*invocation, bool) {
	t.mu.RLock()
	inv, ok := t.m[gid]
	t.mu.RUnlock()
	return inv, ok
}

func (t *rootTable) Store(gid uint64, inv *invocation) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[uint64]*invocation{}
	}
	t.m[gid] = inv
	t.mu.Unlock()
}

func (t *rootTable) Delete(gid uint64) {
	t.mu.Lock()
	delete(t.m, gid)
	t.mu.Unlock()
}

// ended holds the goroutines of the invocations that returned most
// recently, with their run and number: a goroutine one of them left behind
// may call a tool after it returned, and belongs to that invocation, not to
// another of the run or of another run active then. Goroutine ids are
// never reused; the oldest are forgotten.
var ended endedRoots

// endedRoots keeps the ended goroutines in a ring alone, searched from the
// newest on a get: an add, at the end of every invocation, was a delete and
// an insert in a map of 4,096 entries, whose slots the suite's allocations
// had pushed out of the cache (16 µs of the ten-write suite's CPU profile,
// 55 adds, GOMAXPROCS=1), where a get comes only after a stack dump of the
// process (attribute, notStartedByAgent), which costs a hundred times a
// search of the ring.
type endedRoots struct {
	mu   sync.Mutex
	ring [4096]endedRoot
	next int
}

// endedRoot is a goroutine in ended, 0 for a slot never filled.
type endedRoot struct {
	gid uint64
	inv endedInvocation
}

// endedInvocation holds no pointer: the ring is 4,096 of them, which the
// GC would otherwise scan, with what they point to, at every cycle (a
// suite's own work is a few MB, so the cycles are many). A suite's run is
// told by its id (lateRuns).
type endedInvocation struct {
	run   uint64 // recorder.id
	n     int32
	suite bool // the run was a suite's: its late calls are counted (late.go)
}

func (e *endedRoots) add(gid uint64, inv endedInvocation) {
	e.mu.Lock()
	e.ring[e.next] = endedRoot{gid, inv}
	e.next = (e.next + 1) % len(e.ring)
	e.mu.Unlock()
}

// get returns what the newest entry of gid says.
func (e *endedRoots) get(gid uint64) (endedInvocation, bool) {
	if gid == 0 {
		return endedInvocation{}, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := e.next - 1; i >= 0; i-- {
		if e.ring[i].gid == gid {
			return e.ring[i].inv, true
		}
	}
	for i := len(e.ring) - 1; i >= e.next; i-- {
		if e.ring[i].gid == gid {
			return e.ring[i].inv, true
		}
	}
	return endedInvocation{}, false
}

// runs numbers recorders (recorder.id).
var runs atomic.Uint64

// encodable returns v, or a string naming its type when JSON cannot encode
// it (a channel, NaN, an *http.Response): the report is always written.
func encodable(v any) any {
	switch v.(type) {
	case nil:
		return nil
	case string, int, int64, int32, uint, uint64, uint32, bool:
		// appendCanonical writes these without an error: a result of
		// one is not encoded to be dropped.
		return v
	}
	if alwaysJSON(reflect.TypeOf(v)) {
		return v
	}
	if _, err := appendCanonical(nil, v); err != nil {
		return fmt.Sprintf("<%T: not JSON: %v>", v, err)
	}
	return v
}

// lookup finds the invocation a call belongs to, and the call of it that
// it was made inside of (outer: its context comes from that call's). detached is true when the
// tool takes a context but the one it got does not come from the agent's
// (context.Background(), a context kept from elsewhere): the call is then
// attributed by the goroutine that made it. late is set, with inv nil,
// when the call comes from a goroutine a run that has ended left running
// (late.go), and the harness can tell: the call carries the ended run's
// own context, or it is made while no run is active. A call without the
// run's context, from such a goroutine, made while a run is active, is
// refused in the active runs: it may serve one of them (a worker an
// earlier invocation started and the agent reuses), and no run can tell.
func lookup(ctx context.Context, op *Op) (inv *invocation, outer *Call, detached bool, viaHTTP uint64, late *lateCalls, setupServer bool) {
	if ctx != nil {
		switch v := ctx.Value(enclosingKey{}).(type) {
		case *Call:
			inv, outer = v.inv, v
		case *invocation:
			inv = v
		}
		if inv != nil {
			if inv.rec.stopped.Load() {
				// The context of a run that has ended: a goroutine that
				// run left running, whose late call it is, or one an
				// invocation running now makes with a context kept from
				// that run (a client built once, with the first
				// request's ctx). That one is the running invocation's,
				// told by its goroutine, as a call with
				// context.Background() is (detached).
				if cur := claimedByGoroutine(); cur != nil {
					return cur, nil, true, 0, nil, false
				}
				inv.endIfCrashed(ctx)
				lateAmid(inv.rec, op)
				return nil, nil, false, 0, inv.rec.late, false
			}
			if cur := otherDelivery(inv); cur != nil {
				return cur, nil, true, 0, nil, false
			}
			return inv, outer, false, 0, nil, false
		}
	}
	recs := activeRecorders()
	if len(recs) == 0 {
		if watching.Load() == 0 {
			return nil, nil, false, 0, nil, false
		}
		// Between two scenarios of a suite: no run to claim the call,
		// but it may come from a goroutine an ended one left behind.
		return nil, nil, false, 0, lateCaller(), false
	}
	why, fix := "it has no context.Context parameter", "pass the agent's ctx to the tool"
	alone := "do not run agents whose tools lack a context in parallel (t.Parallel)"
	if ctx != nil {
		why = "its context.Context does not come from the agent's"
		if rc := receivedOf(ctx); rc != nil {
			// A server's, which every call has: the transport says
			// what it lacked.
			why, fix, alone = rc.why, rc.fix, "do not run such agents in parallel (t.Parallel)"
		}
	}
	gid := goroutineID()
	inv, left, leftBy, handler := attribute(recs, gid)
	live := 0 // the deliveries of the one active run in flight
	if left == hookCalls {
		return nil, nil, false, 0, nil, false // seeding the world in Setup's goroutines
	}
	if inv == nil && left == nil && leftBy == 0 && handler == 0 && receivedOf(ctx) == nil {
		if w := worldWorker(recs, gid); w != nil {
			return nil, nil, false, 0, w, false // the world's work, not the agent's call
		}
		// A goroutine Setup started that worldWorker left to the agent,
		// running no traced call and serving no HTTP request: a server
		// of the world (a message bus's subscription, a consumer)
		// serving a delivery that waits for its answer. The request
		// came over a transport that carries no Go context (the
		// agent's ctx could not reach it), unless the tool takes none.
		setupServer = ctx != nil && setupStartedIn(recs, gid) && !openOnAnyIn(recs, gid) && servedOverHTTP(gid) == 0
	}
	if left == timerCalls {
		for _, r := range recs {
			r.unattributable(op.Name, fmt.Sprintf("a call of %s was made during this run from a time.AfterFunc callback, and %s: the Go runtime does not record which goroutine set a timer, so the call cannot be told to be this run's (an earlier scenario's timer, or another test's, fires as well); it ran as in production, and was not traced, faulted or judged here; pass the agent's ctx into the callback", op.Name, why))
		}
		return nil, nil, false, 0, nil, false
	}
	if inv != nil && inv.rec.stopped.Load() {
		// An invocation its run abandoned (a stall), or a goroutine it
		// started: that run has ended.
		inv, left, leftBy = nil, inv.rec.late, 1 // 1: known to be left, by whom does not matter here
	}
	if left != nil || leftBy != 0 {
		return nil, nil, false, 0, leftCall(recs, left, op, why), false
	}
	if inv == nil && len(recs) == 1 {
		// No invocation's goroutine: the one invocation running is taken
		// to be the one the call serves (the newest, when none is). A
		// call made for an HTTP request to this process (a fake of the
		// service the agent calls) is marked: held at a gate, it excuses
		// a client waiting for an HTTP response from being busy
		// (world.quiet).
		//
		// The deliveries of a concurrent scenario are all in flight from
		// the moment they are started, listed or not: were one not yet
		// listed counted out, whether a call the other's request made
		// was told as that one's (traced, and held at the lockstep gate)
		// or refused would depend on which goroutine the Go scheduler
		// ran first, and so would the verdict.
		viaHTTP = handler
		r := recs[0]
		r.mu.Lock()
		inv = r.current
		live = r.pending
		for _, x := range r.all {
			if !x.returned.Load() {
				live++
				if r.pending == 0 {
					inv = x
				}
			}
		}
		r.mu.Unlock()
		if live > 1 {
			inv = nil // two deliveries at once: "the newest" would be a guess
		}
	}
	if inv == nil && live > 1 && handler == 0 {
		// A goroutine an HTTP handler of this process started (a webhook
		// answered 202, its work done after): it serves a request all the
		// same, even once the handler has returned, and the agent's ctx
		// could not reach it either. Told so, whether or not the handler
		// still runs at the moment of the call: a refusal (an error) on
		// some runs and an unattributed call (a warning) on others was a
		// verdict that changed from run to run.
		handler = servedOverHTTP(goroutineID())
	}
	if inv == nil && live > 1 && setupServer {
		// As a handler's, below, but whatever State says: the harness,
		// not the agent, could not tell whose the call is, and a
		// refusal failed a correct agent whose tool is served over
		// NATS request-reply (red team rtU #3). The message says how
		// to carry the run over such a transport.
		recs[0].unattributable(op.Name, fmt.Sprintf("a call of %s was made by a goroutine that Setup started (a server of the world: a message bus's subscription, a consumer, a pool's worker) while %d deliveries of this run were in flight together, with a context that does not come from the agent's: the request came over a transport that carries no Go context, so the call cannot be told to be either delivery's, and %s was not traced, faulted or judged here; carry the run: put runtime.Token(ctx) in the request (a message's headers, a job's payload) and take the handler's context from runtime.Resolve(ctx, token)", op.Name, live, op.Name))
		return nil, nil, false, 0, nil, true
	}
	if inv == nil && live > 1 && handler != 0 && recs[0].judge != nil {
		// With State, the world still judges what the handler's call
		// does: in the windows of the agent's writes whose requests it
		// serves, as an untraced effect of theirs. Only the handler's
		// own op goes unjudged: the scenario is inconclusive, and says
		// so, rather than failed for what the agent cannot change (its
		// ctx cannot cross HTTP, nor gRPC).
		recs[0].unattributable(op.Name, fmt.Sprintf("a call of %s was made by an HTTP or gRPC handler of this process while %d deliveries of this run were in flight together: the agent's ctx cannot cross the network, so the call cannot be told to be either's, and %s was not traced, faulted or judged here; State still judged the world it changed, in the windows of the agent's writes", op.Name, live, op.Name))
		return nil, nil, false, 0, nil, false
	}
	if inv == nil {
		refused := false
		whose := fmt.Sprintf("one invocation of one run (%d runs active in this process); %s, or %s", len(recs), fix, alone)
		if live > 1 {
			whose = fmt.Sprintf("either of the %d deliveries of this run in flight together", live)
			if handler != 0 {
				whose += " (it serves an HTTP request to this process, or a gRPC call: the agent's ctx cannot cross the network, so the handler's calls cannot be told apart; the duplicate checks do not see them here; invariants on the world still do)"
			} else {
				whose += "; " + fix
				if ctx != nil && receivedOf(ctx) == nil {
					whose += ", or, where the request crosses a transport that carries no Go context (a message bus, a queue), carry the run: put runtime.Token(ctx) in the request (a message's headers, a job's payload) and take the handler's context from runtime.Resolve(ctx, token)"
				}
			}
		}
		for _, r := range recs {
			if r.refuse(op.Name, fmt.Sprintf("call of %s refused: %s, and the goroutine that made it does not descend from %s", op.Name, why, whose)) {
				refused = true
			}
		}
		if !refused && watching.Load() > 0 {
			// Every run ended meanwhile: as between two scenarios.
			return nil, nil, false, 0, lateCaller(), false
		}
		return nil, nil, false, 0, nil, false
	}
	return inv, nil, ctx != nil, viaHTTP, nil, setupServer && ctx != nil
}

// setupStartedIn reports whether goroutine gid descends from a goroutine
// that Setup of one of the runs recs ran in (world.setupStarted).
func setupStartedIn(recs []*recorder, gid uint64) bool {
	for _, r := range recs {
		if r.world != nil && r.world.setupStarted(gid) {
			return true
		}
	}
	return false
}

// openOnAnyIn reports whether goroutine gid runs a traced call of one of
// the runs recs now (recorder.openOnAny): a call it makes is made inside
// that one, not served over a transport.
func openOnAnyIn(recs []*recorder, gid uint64) bool {
	for _, r := range recs {
		if r.openOnAny(gid) {
			return true
		}
	}
	return false
}

// servedCall returns the call of inv whose HTTP request a handler of this
// process serves by making call c (lookup's viaHTTP, no call in its
// context): the innermost of inv's calls in flight, when they are one
// chain, each made inside the next (a tool waiting for the response);
// nil when none is in flight, several are side by side, the innermost
// one's goroutine is not waiting for an HTTP response, or another
// goroutine of inv is waiting for one too: nothing tells which request it
// serves.
func (r *recorder) servedCall(inv *invocation, c *Call) *Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var open []*Call
	for _, chunk := range r.calls {
		for _, o := range chunk {
			if o == c || o.inv != inv {
				continue
			}
			o.mu.Lock()
			ended := o.rec.ended
			o.mu.Unlock()
			if !ended {
				open = append(open, o)
			}
		}
	}
	var inner *Call
	for _, o := range open {
		if inner == nil || o.madeInside(inner) {
			inner = o
		}
	}
	for _, o := range open {
		if o != inner && !inner.madeInside(o) {
			return nil
		}
	}
	if inner == nil {
		return nil
	}
	// The request came from inner's tool only if its goroutine waits for
	// the answer: an agent that sends a request of its own beside a call
	// in flight (the call on one goroutine, the request on another) has
	// the two side by side. When the tool waits for an answer of another
	// service (a mail it sends) while another goroutine of the invocation
	// waits for this one's, the request may be either's, and crediting the
	// handler's call to the tool hid a second mail (red team T2): the
	// handler's call is then a write of its own. A goroutine in the
	// client's round trip waits for the answer even when the transport
	// has just woken it (runnable, the request written): taken for busy,
	// it lost the handler's call on a loaded machine (1 suite in 20 under
	// two CPU hogs).
	all := snapshotSome(nil)
	parent := make(map[uint64]uint64, len(all))
	for _, g := range all {
		parent[g.id] = g.parent
	}
	root := inv.self.Load()
	ofInv := func(id uint64) bool {
		for i := 0; i < 64 && id != 0; i++ {
			if id == root {
				return true
			}
			id = parent[id]
		}
		return false
	}
	awaits := false
	for _, g := range all {
		if !g.inRoundTrip() {
			continue
		}
		switch {
		case g.id == inner.gid:
			awaits = true
		case root != 0 && ofInv(g.id):
			return nil
		}
	}
	if !awaits {
		return nil
	}
	return inner
}

// openOn returns the innermost call of inv that goroutine gid runs now
// (begun, not ended), or nil: a call that goroutine makes now is made
// inside it, whatever context it was given. The goroutine runs one call's
// tool at a time, so the latest begun of those not ended is the innermost.
func (r *recorder) openOn(gid uint64, inv *invocation) *Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.calls) - 1; i >= 0; i-- {
		chunk := r.calls[i]
		for j := len(chunk) - 1; j >= 0; j-- {
			c := chunk[j]
			if c.gid != gid || c.inv != inv {
				continue
			}
			c.mu.Lock()
			ended := c.rec.ended
			c.mu.Unlock()
			if !ended {
				return c
			}
		}
	}
	return nil
}

// otherDelivery returns the invocation of inv's run, other than inv, that
// the calling goroutine belongs to, when inv crashed or returned, or nil:
// a context kept from an earlier delivery (a client built once, with the
// first request's ctx) used by the next one, the restart after a crash
// among them. Counted as the crashed delivery's, the restart's call was
// refused, the restart's repeat was never made, and its duplicate went
// unseen. The goroutine tells: an invocation's own goroutine at once;
// one that descends from it (attribute) only where inv crashed, since
// that asks for a stack snapshot.
func otherDelivery(inv *invocation) *invocation {
	dead := inv.dead.Load()
	if !dead && !inv.returned.Load() {
		return nil
	}
	if x, ok := roots.Load(goroutineID()); ok {
		if cur := x; cur != inv && cur.rec == inv.rec {
			return cur
		}
		return nil
	}
	if !dead {
		return nil
	}
	if cur := claimedByGoroutine(); cur != nil && cur != inv && cur.rec == inv.rec {
		return cur
	}
	return nil
}

// activeRecorders returns a copy of the recorders of the runs active now.
func activeRecorders() []*recorder {
	global.mu.Lock()
	defer global.mu.Unlock()
	return append([]*recorder(nil), global.recs...)
}

// claimedByGoroutine returns the invocation of an active run that the
// calling goroutine is or descends from (attribute), or nil: none, one
// an ended run left (its late calls), or one of Setup.
func claimedByGoroutine() *invocation {
	recs := activeRecorders()
	if len(recs) == 0 {
		return nil
	}
	inv, left, leftBy, _ := attribute(recs, goroutineID())
	if inv == nil || left != nil || leftBy != 0 || inv.rec.stopped.Load() {
		return nil
	}
	return inv
}

// leftCall handles a call without the run's context from a goroutine an
// ended run left running, made while runs are active (recs), and returns
// the late calls to count it in, or nil. left are the ended run's late
// calls: nil for a run outside any suite, reported once its suite's
// report was taken.
//
// The call may serve an active run of the same agent (a worker an earlier
// invocation started and the agent reuses), and nothing tells: it is
// refused in those runs, as an error naming the scenario that left the
// goroutine. Runs of the same agent are the same suite's; for a run
// outside any suite (RunTraced), every other run outside one. The runs of
// other suites are other agents', but a goroutine one agent started may
// serve another all the same (a worker pool two tests share, started by
// whichever used it first): in those runs the call is unattributed, a
// warning that makes the scenario inconclusive. With no run of its own
// agent active, the call is also the ended run's late call, as between
// two scenarios (nobody's once its report was taken).
func leftCall(recs []*recorder, left *lateCalls, op *Op, why string) *lateCalls {
	origin := "a run that has ended"
	var suite *lateWatch
	if left != nil {
		suite = left.suite
		if left.scenario != "" {
			origin = "scenario " + left.scenario
			if suite != nil {
				origin += " of " + suite.name
			}
			origin += ", whose run has ended,"
		}
	}
	refused := false
	for _, r := range recs {
		var same bool
		if left == nil {
			same = r.late == nil
		} else {
			same = r.late != nil && suite != nil && r.late.suite == suite
		}
		if same {
			// A run that ended meanwhile (the left goroutine's own,
			// among them) refuses nothing: the call is then late.
			if r.refuse(op.Name, fmt.Sprintf("call of %s refused: %s, and the goroutine that made it was started by an invocation of %s and left running (a worker the agent started once and reuses, or a goroutine it did not wait for): no run can tell which invocation the call serves, so it is none of them; pass the agent's ctx to the tool, and wait for the goroutines the agent starts before it returns", op.Name, why, origin)) {
				refused = true
			}
			continue
		}
		r.unattributable(op.Name, fmt.Sprintf("a call of %s was made during this run by a goroutine another agent's run started (%s), and %s: if it served this agent (a worker pool both use), this run did not see it, and its verdict is incomplete; pass the agent's ctx to the tool", op.Name, strings.TrimSuffix(origin, ","), why))
	}
	if refused {
		return nil
	}
	return left
}

// attribute finds the invocation whose goroutine tree the calling
// goroutine (gid) belongs to, from the "created by ... in goroutine N" links of a
// stack snapshot. If the tree is that of an invocation of a run that has
// ended, it returns that invocation's goroutine as leftBy instead, with, for
// a suite's run, the run's late calls (reported, counting nothing, once its
// suite's report was taken). If the tree is that of a Setup or Teardown
// still running, late is hookCalls (Suite.callHook). handler, when not 0,
// is the goroutine running the HTTP handler of this process that the
// calling goroutine serves: itself, or an ancestor (http.TimeoutHandler, a
// handler handing the work to a goroutine).
func attribute(recs []*recorder, gid uint64) (inv *invocation, late *lateCalls, leftBy uint64, handler uint64) {
	if inv, ok := roots.Load(gid); ok {
		return inv, nil, 0, 0
	}
	all := snapshotGoroutines()
	parent := make(map[uint64]uint64, len(all))
	var handlers map[uint64]bool
	for i := range all {
		g := &all[i]
		if g.parent != 0 {
			parent[g.id] = g.parent
		}
		if g.httpHandler() {
			if handlers == nil {
				handlers = map[uint64]bool{}
			}
			handlers[g.id] = true
		}
	}
	for id, i := gid, 0; id != 0 && i < 64 && handlers != nil; id, i = parent[id], i+1 {
		if handlers[id] {
			handler = id
			break
		}
	}
	for _, r := range recs {
		if r.world != nil {
			r.world.ours(all, 0) // learn the links while they are visible
		}
	}
	for id, i := parent[gid], 0; id != 0 && i < 64; id, i = parent[id], i+1 {
		if inv, ok := roots.Load(id); ok {
			return inv, nil, 0, 0
		}
		if isHookRoot(id) {
			return nil, hookCalls, 0, handler
		}
		if e, ok := ended.get(id); ok {
			// Left behind by an invocation that returned: its own if its
			// run is still active, nobody's otherwise.
			for _, r := range recs {
				if r.id == e.run {
					if inv := r.invocation(int(e.n)); inv != nil {
						return inv, nil, 0, 0
					}
				}
			}
			if e.suite {
				// Counted until its suite's report, and nobody's after.
				return nil, lateRuns.get(e.run), id, handler
			}
			return nil, nil, id, handler
		}
	}
	for _, r := range recs {
		if r.world == nil {
			continue
		}
		if n := r.world.invocationOf(gid); n > 0 {
			if inv := r.invocation(n); inv != nil {
				return inv, nil, 0, 0
			}
		}
	}
	if fromTimer(all, parent, gid) {
		return nil, timerCalls, 0, handler
	}
	return nil, nil, 0, handler
}

// worldWorker returns the world calls of the active run whose scenario's
// Setup started goroutine gid (world.setupStarted), or nil. Such a
// goroutine, calling without the agent's context, is a worker of the
// world (a job queue's, draining what the agent's traced call queued):
// its call is work the world does for the agent, after the agent asked,
// not a call the agent makes, and no delivery can make it by itself.
// Taken for the one invocation running (lookup's fallback), it was
// traced as the agent's: faults were planned on it that never fired in
// a scenario whose worker took its job later, it was held at a gate that
// the Settle waited behind (the Settle waits for the worker, the worker
// for its gate) until the Settle's bound, and every repeat went unjudged,
// a buggy agent passing as inconclusive (red team rtR #4, #8). It runs as
// in production instead, untraced and ungated, and State judges what it
// changes; the suite says so once (Suite.visibility).
//
// Not a worker's call: one made inside a traced call of an active run
// the goroutine runs now (a pool of Setup's running an agent's tool,
// which calls another with context.Background(): openOn), one made for
// an HTTP request to this process (a server Setup started, whose handler,
// or a goroutine it started, serves the agent's request), nor one made
// while a delivery waits, outside any gate, on a channel, a lock or the
// network outside any traced call of its own (agentWaits): a server of
// Setup's that the agent sends a request to over a channel and waits for
// (TestServerSetupStartedServesTheAgent) makes the call the agent asked
// for, in its turn, on every delivery, and is told as before. A worker's
// job is done while the delivery that queued it has returned, waits at a
// gate (its enqueue held at its finish gate), or runs on. The caller has
// checked a server's received context.
func worldWorker(recs []*recorder, gid uint64) *lateCalls {
	for _, r := range recs {
		if r.world == nil || !r.world.setupStarted(gid) {
			continue
		}
		for _, o := range recs {
			if o.openOnAny(gid) {
				return nil
			}
		}
		if servedOverHTTP(gid) != 0 || r.agentWaits(gid) {
			return nil
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		x := r.rareLocked()
		if x.world == nil {
			x.world = &lateCalls{}
		}
		return x.world
	}
	return nil
}

// agentWaits reports whether a delivery of the run that has not returned
// has a goroutine (its own, or one of the user's code it started) blocked
// outside the harness's gates, and outside any traced call it runs, on a
// channel, a lock or a condition: what it waits for may be the answer
// goroutine gid, a goroutine of the world, is working on. One that waits
// inside a traced call of its own (a publish waiting for the broker's
// acknowledgement) is not counted: the agent's act is that call, and a
// goroutine of the world calling meanwhile does the world's work (a
// queue's consumer taking what the publish stored: told as the agent's,
// faults were planned on it and the concurrent delivery could not place
// it, red team rtU #5), or serves the call's request, whose effect State
// judges in the call's window all the same. One asleep, waiting for
// network I/O, at a gate or in the harness's part of a call (a Settle it
// runs) waits for no goroutine of the world. One running or ready to run
// is given up to agentWaitsGrace to block, return or reach a gate: a
// client that has just handed its request to the server (a send on an
// unbuffered channel) is runnable for a moment before it waits for the
// answer. One still running then is
// taken to wait, as the call was told before (the agent's).
func (r *recorder) agentWaits(gid uint64) bool {
	deadline := time.Now().Add(agentWaitsGrace)
	for pause := 50 * time.Microsecond; ; pause = min(2*pause, time.Millisecond) {
		waits, moving := r.agentWaitsNow(gid)
		if waits || !moving {
			return waits
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(pause)
	}
}

// agentWaitsGrace bounds agentWaits' wait for a delivery's goroutine to
// block, return or reach a gate.
const agentWaitsGrace = 250 * time.Millisecond

// agentWaitsNow is one look of agentWaits: whether a goroutine of a live
// delivery waits now, and whether one is running or ready to run.
func (r *recorder) agentWaitsNow(gid uint64) (waits, moving bool) {
	w := r.world
	// Read before the stacks: a call open now that has ended when the
	// stacks are read ended in between, and a goroutine the stacks show
	// waiting in its tool's body (a publish waiting for its broker's
	// acknowledgement) waited inside it. Read after, the call a
	// goroutine waited in had often ended by then: at GOMAXPROCS=2 the
	// acknowledgement came meanwhile, and the consumer's call was the
	// agent's in 2 suites of 8.
	inCall := r.openGoroutines()
	all := snapshotGoroutines()
	w.ours(all, 0)
	for i := range all {
		g := &all[i]
		if g.id == gid || len(g.funcs) == 0 || g.atGate() || g.has("agentidem-go/runtime.(*Call).") || harnessFrame(g.funcs[0]) {
			continue
		}
		n := w.invocationOf(g.id)
		if n == 0 {
			continue
		}
		if inv := r.invocation(n); inv == nil || inv.returned.Load() {
			continue
		}
		if !w.isRoot(g.id) && !g.runsUserCode() {
			continue // a library's loop (an HTTP connection's) waits for its own
		}
		if inCall[g.id] {
			// It waits inside a traced call of its own (a publish
			// waiting for its broker's acknowledgement): the agent's
			// act is that call, traced, faulted and judged in its
			// window, and the goroutine of the world calling now is
			// doing the world's work meanwhile (a queue's consumer
			// taking the message, red team rtU #5), or serves that
			// call's request, which no stack tells apart.
			continue
		}
		switch st := strings.TrimSuffix(g.state, " (durable)"); {
		case progressing(st):
			moving = true
		case st == "chan receive", st == "chan send", st == "select", st == "sync.Cond.Wait", st == "semacquire",
			strings.HasPrefix(st, "sync."), strings.HasPrefix(st, "chan receive"), strings.HasPrefix(st, "select"):
			return true, moving
		}
	}
	return false, moving
}

// harnessFrame reports whether f, a goroutine's innermost function, is the
// harness's own: a delivery's goroutine waiting for its agent to return.
func harnessFrame(f string) bool {
	for _, p := range []string{"(*recorder).", "(*Suite).", "(*world).", "(*invocation).", "(*scheduler).", "(*lockstep)."} {
		if strings.HasPrefix(f, "github.com/agentidem/agentidem-go/runtime."+p) {
			return true
		}
	}
	return false
}

// openGoroutines returns the goroutines that run a call of the run now
// (begun, not ended), or nil when none does.
func (r *recorder) openGoroutines() map[uint64]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var open map[uint64]bool
	for _, chunk := range r.calls {
		for _, c := range chunk {
			c.mu.Lock()
			ended := c.rec.ended
			c.mu.Unlock()
			if !ended {
				if open == nil {
					open = map[uint64]bool{}
				}
				open[c.gid] = true
			}
		}
	}
	return open
}

// openOnAny reports whether goroutine gid runs a call of the run now
// (begun, not ended).
func (r *recorder) openOnAny(gid uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, chunk := range r.calls {
		for _, c := range chunk {
			if c.gid != gid {
				continue
			}
			c.mu.Lock()
			ended := c.rec.ended
			c.mu.Unlock()
			if !ended {
				return true
			}
		}
	}
	return false
}

// hookCalls stands for the calls of a goroutine a running Setup or
// Teardown started: the hook's, counted nowhere.
var hookCalls = &lateCalls{closed: true}

// timerCalls stands for the calls of a goroutine that a time.AfterFunc
// timer started, or that descends from one (fromTimer): the Go runtime
// records no goroutine as its creator, so nothing tells which run, if any,
// set the timer. Taken for the one invocation running, a reminder an
// earlier scenario (or another test) set with context.Background() was
// a second notify of this scenario's.
var timerCalls = &lateCalls{closed: true}

// fromTimer reports whether goroutine gid, or the first of its ancestors
// whose creator is unknown, was started by time.AfterFunc ("created by
// time.goFunc", with no goroutine named).
func fromTimer(all []gInfo, parent map[uint64]uint64, gid uint64) bool {
	top := gid
	for i := 0; i < 64 && parent[top] != 0; i++ {
		top = parent[top]
	}
	for i := range all {
		if g := &all[i]; g.id == top {
			return g.parent == 0 && len(g.funcs) > 0 && strings.HasPrefix(g.funcs[len(g.funcs)-1], "created by time.goFunc")
		}
	}
	return false
}

// invocation returns the run's invocation numbered n, or nil.
func (r *recorder) invocation(n int) *invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, inv := range r.all {
		if inv.n == n {
			return inv
		}
	}
	return nil
}

// refuse records the refusal of a call of op in the run, and reports
// whether it did: a run that has ended records nothing, and the call is
// not refused in it.
func (r *recorder) refuse(op, msg string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped.Load() {
		return false
	}
	x := r.rareLocked()
	x.refused = append(x.refused, msg)
	x.refusedOps = append(x.refusedOps, op)
	r.errs = append(r.errs, msg)
	return true
}

// lateAmid tells the runs of ended's suite that are active or still read
// the world (global.judging), other than ended, that
// a goroutine ended left running calls op now, with ended's context: the
// call is ended's late call, and runs as in production (lookup). Its
// effect lands in whatever world the agent's goroutine reaches, and a
// Setup that builds each scenario's world anew and hands it to the agent
// through a variable (a closure's, a package's) hands it the world of the
// scenario running now: a change no call of that run made, in the
// windows its State judge reads (a reminder an earlier scenario's
// goroutine sends 2 ms later, landing inside a keyed retry's window, was
// a duplicate_write of the retry). Runs of other suites are other
// agents', with worlds of their own.
func lateAmid(ended *recorder, op *Op) {
	l := ended.late
	if l == nil || l.suite == nil || op.Kind != KindWrite {
		return // a read changes no world
	}
	global.mu.Lock()
	recs := append(slices.Clone(global.recs), global.judging...)
	global.mu.Unlock()
	for _, r := range recs {
		if r == ended || r.late == nil || r.late.suite != l.suite {
			continue
		}
		r.mu.Lock()
		if !r.amidClosed {
			x := r.rareLocked()
			x.amidLate = append(x.amidLate, fmt.Sprintf("a call of %s was made during this run by a goroutine that scenario %s left running, with that run's context: it ran as in production, and what it changed landed in the world this run's State and invariants read (the world Setup built for this scenario, reached through a variable the goroutine reads when it runs), where it cannot be told from this run's own effects", op.Name, l.scenario))
			x.amidLateOps = append(x.amidLateOps, op.Name)
		}
		r.mu.Unlock()
	}
}

// unattributable notes a call of op the run could not tell was its own
// (Trace.Unattributed), unless the run has ended.
func (r *recorder) unattributable(op, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped.Load() {
		return
	}
	x := r.rareLocked()
	x.unattributed = append(x.unattributed, msg)
	x.unattribOps = append(x.unattribOps, op)
}

// detachedBy says who passed a context without the run at a call site
// (noteDetached).
type detachedBy uint8

const (
	byAnyone      detachedBy = iota
	byHandler                // an HTTP or gRPC handler of this process (lookup's viaHTTP)
	bySetupServer            // a goroutine Setup started, serving a delivery that waits (lookup's setupServer)
)

// noteDetached records that a call from site passed a context without the
// run, made by by: an HTTP or gRPC handler of this process (lookup's
// viaHTTP), with its request's context, or a goroutine Setup started that
// serves a waiting delivery (a message bus's subscription): the agent's
// ctx cannot cross the network or the bus, and the warning says so
// instead of asking for it (red team rtN F8, rtU #3). A site some other
// kind of call passed such a context from is told as any other.
func (r *recorder) noteDetached(site string, by detachedBy) {
	r.mu.Lock()
	if r.detached == nil {
		r.detached = map[string]detachedBy{}
	}
	if was, seen := r.detached[site]; !seen {
		r.detached[site] = by
	} else if was != by {
		r.detached[site] = byAnyone
	}
	r.mu.Unlock()
}

// addNoteOnce adds msg to the trace's notes unless it is there.
func (r *recorder) addNoteOnce(msg string) {
	r.mu.Lock()
	if !slices.Contains(r.notes, msg) {
		r.notes = append(r.notes, msg)
	}
	r.mu.Unlock()
}

// addNoteOnceHead adds msg unless a note that begins with head is there.
func (r *recorder) addNoteOnceHead(head, msg string) {
	r.mu.Lock()
	if !slices.ContainsFunc(r.notes, func(n string) bool { return strings.HasPrefix(n, head) }) {
		r.notes = append(r.notes, msg)
	}
	r.mu.Unlock()
}

func (r *recorder) addNote(msg string) {
	r.mu.Lock()
	r.notes = append(r.notes, msg)
	r.mu.Unlock()
}

// stalled reports whether no progress was made for stallAfter. Only the
// goroutine that watches the scenario calls it.
func (r *recorder) stalled() bool {
	if r.stallAfter <= 0 {
		return false
	}
	p, now := r.progress.Load(), time.Now()
	if p != r.seenProgress || r.seenAt.IsZero() {
		r.seenProgress, r.seenAt = p, now
		r.mu.Lock()
		if r.rare != nil {
			r.rare.backoffs, r.rare.backoffsAt = nil, time.Time{}
			if r.rare.deadlock != nil {
				*r.rare.deadlock = deadlockWatch{} // deadlock.go
			}
		}
		r.mu.Unlock()
		return false
	}
	if now.Sub(r.seenAt) >= r.stallAfter/2 {
		r.noteBackoffs()
	}
	return now.Sub(r.seenAt) >= r.stallAfter || r.provenDeadlock(now)
}

// noteBackoffs records, once per stretch without progress, the scenario's
// goroutines in an API client's retry back-off: a stall message can then
// say how long one has slept at least. A stack dump shows that a goroutine
// waits on a back-off's timer, not for how long (the delay argument is
// printed as an inaccurate register value), so the length is told from two
// looks.
func (r *recorder) noteBackoffs() {
	r.mu.Lock()
	done := !r.odd().backoffsAt.IsZero()
	r.mu.Unlock()
	if done || r.world == nil {
		return
	}
	at, seen := time.Now(), map[uint64]bool{}
	for _, g := range r.world.ours(r.world.snapshot(), goroutineID()) {
		if _, ok := g.retryWaiting(); ok {
			seen[g.id] = true
		}
	}
	r.mu.Lock()
	r.rareLocked().backoffs, r.rareLocked().backoffsAt = seen, at
	r.mu.Unlock()
}

// describeStall says what is blocked and where: the scenario's goroutines
// that are neither parked at a gate nor done, and the calls held at gates.
func (r *recorder) describeStall() string {
	var blocked, held []string
	advice := "raise the bound with StallTimeout if the agent is only slow"
	if r.world != nil {
		self := goroutineID()
		blocked = r.world.blocked(self)
		gs := r.world.ours(r.world.snapshot(), self)
		lock := r.lockLeftByCrash(gs)
		if lock == "" {
			lock = r.txLeftByCrash(gs) // crashtx.go
		}
		if lock != "" {
			r.mu.Lock()
			r.rareLocked().crashLock = lock
			r.mu.Unlock()
		}
		r.mu.Lock()
		backoffs, at := r.odd().backoffs, r.odd().backoffsAt
		r.mu.Unlock()
		advice = backoffAdvice(gs, backoffs, at)
		if advice == "" {
			advice = stallAdvice(gs, r.didCrash(), r.world.timedSelects(gs))
		}
	}
	if h, ok := r.gate.(interface{ held() []string }); ok {
		held = h.held()
	}
	idle := r.stallAfter
	if why, after := r.deadlockNote(); why != "" {
		// Decided before the bound: every goroutine waits for good
		// (deadlock.go), and what the looks saw is the advice.
		idle, advice = after, why
	} else if r.world != nil && len(held) == 0 && onlyRetryWaits(r.world.ours(r.world.snapshot(), goroutineID())) {
		advice += slowStallText // retrywait.go
		r.mu.Lock()
		r.rareLocked().slowStall = true
		r.mu.Unlock()
	}
	msg := fmt.Sprintf("scenario stalled: no progress for %s", idle)
	switch {
	case len(blocked) > 0 && len(held) > 0:
		msg += ": " + strings.Join(blocked, "; ") + ", while " + strings.Join(held, "; ")
	case len(blocked) > 0:
		msg += ": " + strings.Join(blocked, "; ")
	case len(held) > 0:
		msg += ": " + strings.Join(held, "; ")
	}
	if note := r.deadCallsNote(); note != "" {
		msg += "; " + note
	}
	return msg + "; the scenario was abandoned (" + advice + ")"
}

// stallAdvice says whether a longer StallTimeout may help a scenario whose
// goroutines gs stalled: only if one of them may go on by itself (running,
// asleep), or waits for the network, whose answer may be merely slow.
// Blocked on locks and channels, they wait for another goroutine: none of
// the scenario's can act, and the red team's stall of a mutex left held
// (rtK mutexcrash) was told to raise the bound, which could not help.
// crashed: the scenario crashed a delivery, which may have left held what a
// real crash leaves held as well.
//
// A wait for the network inside a SQL driver (inDatabaseDriver) is a
// statement waiting for the database's answer, and a statement that waits
// for a lock another transaction holds waits for good: the red team's
// agent held a row (SELECT ... FOR UPDATE in a transaction of its own)
// and called a tool that updates it in another, and was told to raise the
// bound "only if the answer is merely slow" of "a response body, a reply"
// (/tmp/rtP #5). Said only where every goroutine waiting for the network
// is in a driver: one waiting for an HTTP answer beside it may be merely
// slow.
//
// timed are the goroutines of gs in a select outside the agent's code
// (world.timedSelects), told as "goroutine N at file:line": such a select
// may have a timer among its cases, which no stack shows, and the server
// answers when it fires. A JetStream pull request with nats.go's default
// 30 s wait, answered by the in-process server at its expiry, was told
// that each goroutine waits for another and that a longer StallTimeout
// helps only if a goroutine outside the scenario ends the wait: untrue,
// and a longer bound did help (red team rtU #4).
func stallAdvice(gs []gInfo, crashed bool, timed []string) string {
	onNetwork, onDatabase := false, true
	for i := range gs {
		g := &gs[i]
		if g.bystander() {
			continue
		}
		busy, why := g.busy(time.Time{})
		switch {
		case busy && ioWaits[why], g.state == "IO wait":
			onNetwork = true
			onDatabase = onDatabase && g.state == "IO wait" && g.inDatabaseDriver()
		case busy:
			return "raise the bound with StallTimeout if the agent is only slow"
		}
	}
	switch {
	case onNetwork && onDatabase:
		return "it waits for the database: a statement that waits for a lock (a row locked by UPDATE or SELECT ... FOR UPDATE, an advisory or table lock) held by another transaction, possibly the agent's own left open across the tool call, waits for good, and a longer StallTimeout will not help: commit or roll back before calling a tool that writes the same rows, or make the write in that transaction (PostgreSQL's pg_locks shows who waits for whom); raise the bound only if the statement is merely slow"
	case onNetwork && crashed:
		return "it waits for the network: raise the bound with StallTimeout only if the answer is merely slow; if it waits for a lock or lease that the crashed delivery took in a service and never released (a lock with no expiry), it waits for good, after a real crash as well: give the lock a lease that expires, or let the restart take over what its earlier delivery holds"
	case onNetwork:
		return "it waits for the network: raise the bound with StallTimeout only if the answer is merely slow"
	}
	if len(timed) > 0 {
		who := "goroutine " + timed[0] + " waits in a select"
		if len(timed) > 1 {
			who = "goroutines " + strings.Join(timed[:min(3, len(timed))], ", ")
			if len(timed) > 3 {
				who += fmt.Sprintf(" and %d more", len(timed)-3)
			}
			who += " wait in selects"
		}
		return fmt.Sprintf("no goroutine of the scenario was running, asleep or waiting for the network as far as their stacks show, but %s outside the agent's code, which may have a timer among their cases that no stack shows: a library's timed long poll (a message broker's pull request, a queue's receive, which the server answers when its wait expires); if so, a StallTimeout longer than the client's poll, or a shorter poll, lets it end; if not, each goroutine waits for another (a lock, a channel, a condition)", who)
	}
	return "no goroutine of the scenario was running, asleep or waiting for the network: each waits for another goroutine (a lock, a channel, a condition), so a longer StallTimeout helps only if a goroutine outside the scenario ends that wait"
}

// backoffAdvice says, when a goroutine of gs sleeps in its API client's
// retry back-off (retryBackoff), that the scenario was not stuck: the
// service asked the client to wait (a 429's Retry-After, a throttle), and
// the client sends its request again when its timer fires; a longer
// StallTimeout lets it. seen are the goroutines that were in a back-off
// at at (recorder.noteBackoffs): one still there has slept since then at
// least. "" when none is in a back-off. A red team's openai-go client
// honouring a 429's Retry-After of 12 s was told that nothing was asleep
// and that a longer StallTimeout helps only if a goroutine outside the
// scenario ends the wait (rtS #10).
func backoffAdvice(gs []gInfo, seen map[uint64]bool, at time.Time) string {
	for i := range gs {
		g := &gs[i]
		why, ok := g.retryWaiting()
		if !ok {
			continue
		}
		how := "asleep"
		if seen[g.id] {
			how += fmt.Sprintf(" for %s at least", time.Since(at).Round(100*time.Millisecond))
		}
		if why == retryLoopWhy {
			return retryLoopAdvice(g, how) // retrywait.go
		}
		return fmt.Sprintf("goroutine %d was not stuck but %s in its API client's retry back-off (%s, at %s), waiting on a timer for as long as the service asked (a 429's Retry-After, a throttle) before it sends the request again: raise the bound with StallTimeout above that wait, or make the service in the test ask for a shorter one", g.id, how, backoffClient(g.funcs[0]), g.where())
	}
	return ""
}

// abort unblocks what the harness holds: gates open, invocations are
// cancelled.
func (r *recorder) abort() {
	r.aborted.Store(true)
	if r.judge != nil {
		r.judge.halt.stop() // a State waiting for what the agent holds (statebound.go)
	}
	if r.sched != nil {
		r.sched.stop()
	}
	if lk, ok := r.gate.(*lockstep); ok {
		lk.release()
	}
	r.mu.Lock()
	invs := append([]*invocation(nil), r.all...)
	r.mu.Unlock()
	for _, inv := range invs {
		inv.halt()
	}
}

// RunTraced runs fn once as a traced invocation named name and returns its
// trace and fn's error. A panic in fn or in a tool is recovered into
// Trace.Panics and reported as an error.
func RunTraced(ctx context.Context, name string, fn func(context.Context) error) (*Trace, error) {
	if fn == nil {
		panic("runtime: RunTraced with a nil func")
	}
	r := newRecorder(name, Fault{}, nil)
	r.start()
	err, _ := r.invoke(ctx, fn)
	r.stop()
	tr := r.trace()
	if err == nil && len(tr.Errors) > 0 {
		err = fmt.Errorf("%s", tr.Errors[0])
	}
	return tr, err
}

// stackGoroutineID returns the current goroutine's id, from its stack
// header: a traceback of the goroutine, a few µs on a shallow stack and
// tens on a deep one. goroutineID reads it in nanoseconds where it can.
func stackGoroutineID() uint64 {
	var buf [64]byte
	b := buf[:goruntime.Stack(buf[:], false)]
	b = b[len("goroutine "):]
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// stillAlive returns the stacks of the goroutines in ids that are still
// running after grace, or "". It looks at once, then after growing pauses
// (50µs up to 1ms): most goroutines are gone at the first look. A
// goroutine that idle says may stay counts as gone. One that is on its way
// (running, runnable, in a system call: waiting for nothing but a CPU) is
// waited for up to progressGrace: on a loaded machine a goroutine that
// made its last call and is about to return can wait longer than grace to
// be run, and was reported as left running.
func stillAlive(ids map[uint64]bool, grace time.Duration, idle func(*gInfo) bool) string {
	if len(ids) == 0 {
		return ""
	}
	start := time.Now()
	deadline := start.Add(grace)
	pause := 50 * time.Microsecond
	for {
		var alive []string
		onItsWay := true
		for _, g := range snapshotSome(func(id, _ uint64) bool { return ids[id] }) {
			if ids[g.id] && g.stack != "" && (idle == nil || !idle(&g)) {
				alive = append(alive, g.stack)
				onItsWay = onItsWay && progressing(g.state)
			}
		}
		if len(alive) == 0 {
			return ""
		}
		if now := time.Now(); now.After(deadline) && (!onItsWay || now.Sub(start) > progressGrace) {
			sort.Strings(alive)
			return strings.Join(alive, "\n\n")
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// progressGrace bounds stillAlive's wait for goroutines that wait for
// nothing but a CPU.
const progressGrace = 2 * time.Second

// progressing says whether a goroutine in state waits for nothing but to
// be run (or for the kernel).
func progressing(state string) bool {
	switch state {
	case "running", "runnable", "syscall", "preempted", "copystack", "GC assist wait", "GC assist marking":
		return true
	}
	return false
}

// growStack grows the stack of a goroutine that has just started, an
// invocation's, to 4 KB at once, while the goroutine has one frame below
// it. A new goroutine gets 2 KB (the Go runtime's starting size, which it
// adapts to the average stack it sees, most of them small), and the
// agent's first traced call outgrew it in Begin, six frames down, where
// the copy walks every frame and reads the pc tables of Begin, a long
// function, for its frame size: 4.3% of the CPU time of
// BenchmarkSuite/writes=10 with GOMAXPROCS=1 (runtime.newstack, 1.68 of
// 39.2 s of samples), once per invocation; from here, 3.0% (0.28 of 9.45
// s), and the suite took 3% less CPU (8 alternated runs). Every
// invocation makes a traced call (or has nothing to record), so the copy
// is made earlier, not added; 4 KB, because the harness's own path needs
// no more (Begin did not grow it again), and an agent that needs more
// grows it from there as before. It is called from the goroutine's first
// frame (goInvocation), not from the invocation's closure, whose defers
// made the copy read long tables: growStack and runtime.newstack 3.3% and
// 3.8% of that profile (8,000 suites), 2.0% and 1.8% from there.
//
//go:noinline
func growStack() byte {
	var b [3000]byte // past 2 KB: the stack doubles to 4 KB
	return b[growStackAt]
}

// growStackAt is the byte growStack reads, a variable, so that the
// compiler keeps its array.
var growStackAt = 0
