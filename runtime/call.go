package runtime

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Call is one traced call in progress. Generated wrappers get it from Begin
// and report to it; it is also the context.Context the tool receives, so that
// MarkReplayed can find it.
//
// The methods of a Call from a wrapper whose run is not active do nothing.
type Call struct {
	context.Context
	op  *Op
	inv *invocation
	pc  uintptr
	gid uint64 // the calling goroutine, under a real-time scheduler

	// buf holds the arguments of small calls, so the caller's slice never
	// escapes and costs no allocation.
	buf [4]any
	// strs holds the first string arguments a wrapper handed over unboxed
	// (BeginArgs), which buf's values point to: written once, before any
	// other goroutine has the call.
	strs [2]string
	// canon holds the canonical identity and entity of small calls: their
	// strings share its bytes, which are never written again. Its last
	// words hold the first number arguments handed over unboxed, as strs
	// the strings (canonWords): 8-byte aligned, as it follows strs.
	canon [64]byte

	mu  sync.Mutex
	rec callRecord // expanded into an Operation when the trace is read

	obs    *observed   // a call outside any run, seen by the Observer (observer.go)
	effect *callEffect // what the State judge saw, if any
	parent *Call       // the call of the same run this one was made inside of (Operation.Parent)

	sched *callSched // what a gate (scheduler, lockstep) keeps of the call, if any
}

// fault returns the fault planned for this call, if any: the run's, which
// targets one call (numberLocked).
func (c *Call) fault() FaultKind {
	if !c.rec.planned {
		return FaultNone
	}
	return c.inv.rec.fault.Kind
}

// passThrough is the Call returned when no run claims a call.
var passThrough = &Call{}

// Value returns the call itself for the runtime's key and otherwise asks the
// parent context.
func (c *Call) Value(key any) any {
	switch key.(type) {
	case callKey:
		return c
	case enclosingKey:
		if c.inv != nil { // a call of a run, not one observed outside any
			return c
		}
	}
	return c.Context.Value(key)
}

// Active reports whether a run claimed the call: false for the call Begin
// returns when no run is active or the context carries none, whose methods
// do nothing.
func (c *Call) Active() bool { return c.inv != nil }

// Op returns the descriptor of the op being called.
func (c *Call) Op() *Op { return c.op }

// ID returns the call's id in the trace ("<invocation>:<op>#<k>").
func (c *Call) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.idLocked()
}

// idLocked builds the id from the invocation and occurrence; it is made on
// demand so that recording a call costs no string building.
func (c *Call) idLocked() string {
	if c.rec.Occurrence <= 0 || c.inv == nil {
		return ""
	}
	return strconv.Itoa(c.inv.n) + ":" + c.op.Name + "#" + strconv.Itoa(int(c.rec.Occurrence))
}

// args returns the call's recorded arguments.
func (c *Call) args() Args {
	return Args{Names: c.op.Params, Values: c.values()}
}

// values returns the recorded argument values, as they were when the call
// began (keepArgs): in c.buf, or in the rare part for a call with more than
// it holds. It is read under c.mu or by the call's own goroutine (the rare
// part is made only by it).
func (c *Call) values() []any {
	if x := c.rec.rare; x != nil && x.values != nil {
		return x.values
	}
	return c.buf[:c.rec.nvals:c.rec.nvals]
}

// Begin opens a traced call of op with the recorded argument values args
// (parameter order, context excluded, redacted values already replaced by
// Redacted), the identity values and the entity values (nil: the identity for
// writes, nothing for reads). ctx is the tool's context, or nil for a tool
// without one. It returns the Call and the context to pass to the tool.
//
// The arguments are recorded as they are when Begin is called, as the
// identity is: a pointer, map or slice the caller changes afterwards (a
// request struct reused for the next call) does not change the record.
// Args describes what the record holds.
//
// Begin is called only by generated code, and only when Enabled is true.
// Wrappers generated since BeginArgs call that instead.
//
//go:noinline
func Begin(ctx context.Context, op *Op, args, identity, entity []any) (*Call, context.Context) {
	ret, site := framePCs() // Begin has a frame of its own: it is never inlined
	return begin(ctx, op, &callArgs{vals: args, identity: identity, entity: entity}, ret, site)
}

// BeginArgs is Begin for a wrapper that hands over its arguments as Args,
// so that its strings and numbers are recorded unboxed, without an
// allocation; its identity and its entity are arguments of its own,
// args[identity.From:identity.To] and args[entity.From:entity.To] (the
// zero ArgSpan: none). It is called only by generated code, and only when
// Enabled is true.
//
//go:noinline
func BeginArgs(ctx context.Context, op *Op, args []Arg, identity, entity ArgSpan) (*Call, context.Context) {
	ret, site := framePCs()
	return begin(ctx, op, &callArgs{typed: args, idSpan: identity, entSpan: entity}, ret, site)
}

// callArgs is what Begin or BeginArgs was given to record.
type callArgs struct {
	vals, identity, entity []any // Begin's
	typed                  []Arg // BeginArgs'
	idSpan, entSpan        ArgSpan
}

// boxed returns a's values, identity and entity as Begin is given them,
// for a call no run records (an observer's), in buf when they fit: as the
// wrapper's []any for Begin was, the list is on the stack, and only its
// strings and numbers are boxed.
func (a *callArgs) boxed(buf *[4]any) (vals, identity, entity []any) {
	if a.typed == nil {
		return a.vals, a.identity, a.entity
	}
	if len(a.typed) <= len(buf) {
		vals = buf[:len(a.typed)]
	} else {
		vals = make([]any, len(a.typed))
	}
	for i := range a.typed {
		vals[i] = a.typed[i].boxed()
	}
	return vals, a.idSpan.of(vals), a.entSpan.of(vals)
}

// begin is Begin and BeginArgs, given the return addresses framePCs read
// in them (callSite). It is called by those two only, directly: the
// callers of Begin's caller are found at the same depth from either.
//
//go:noinline
func begin(ctx context.Context, op *Op, a *callArgs, ret, site uintptr) (*Call, context.Context) {
	if inHook() {
		// State or Settle reading the world: not the agent's call.
		args, identity, entity := a.boxed(new([4]any))
		return observe(ctx, op, args, identity, entity, callSite(ret, site))
	}
	inv, outer, detached, viaHTTP, late, server := lookup(ctx, op)
	if inv == nil {
		if rc := receivedOf(ctx); rc != nil && endedRun(ctx) {
			// A server received the call on a context kept from a run
			// that has ended (a session connected with its context):
			// that run's late call, and one whose context carries no run
			// for the runs active now (Received).
			if late != nil {
				late.note(op, callSite(ret, site), isCarried(ctx))
			}
			inv, outer, detached, viaHTTP, late, server = lookup(rc.bare(), op)
		}
	}
	if inv == nil {
		// No run, or one that has ended (the call comes from a goroutine
		// its agent left running, which its suite reports: late.go): the
		// tool runs as in production.
		site := callSite(ret, site)
		if late != nil {
			late.note(op, site, isCarried(ctx))
		}
		args, identity, entity := a.boxed(new([4]any))
		return observe(ctx, op, args, identity, entity, site)
	}
	if !detached && ctx != nil {
		inv.noteCaller()
	}
	r := inv.rec
	// A call a server makes for a delivery that has returned, with the
	// run carried (Resolve), is the delivery's: not one of a goroutine
	// the agent left running (holdCarried waits for it).
	afterReturn := inv.returned.Load()
	if afterReturn && isCarried(ctx) {
		afterReturn = false
		r.noteCarriedAfter(inv)
	}
	if afterReturn {
		r.afterReturn.Store(true)
	}
	if !inv.dead.Load() {
		r.progress.Add(1) // a crashed invocation's call is refused: no progress (deadCalls)
	}
	parent := ctx
	if parent == nil {
		parent = context.Background()
	}
	c := r.newCall()
	c.Context, c.op, c.inv, c.parent = parent, op, inv, outer
	// The values are copied, not args kept: the caller's slice does not
	// escape, so the wrapper's []any{...} stays on its stack. What a value
	// points to is recorded as it is now (keepArgs, args.go): the agent
	// may reuse a request struct for its next call.
	identity, entity, canon := a.identity, a.entity, c.canon[:0:len(c.canon)]
	if a.typed != nil {
		var vals []any
		vals, canon = c.setArgs(a.typed)
		identity, entity = a.idSpan.of(vals), a.entSpan.of(vals)
		if !a.idSpan.unboxed(a.typed) || !a.entSpan.unboxed(a.typed) {
			// keepArgs would change what they are: the identity is
			// computed from the values the wrapper gave, as Begin's.
			identity, entity = slices.Clone(identity), slices.Clone(entity)
		}
		keepArgs(vals)
	} else if len(a.vals) <= len(c.buf) {
		c.rec.nvals = uint8(copy(c.buf[:], a.vals))
		keepArgs(c.buf[:c.rec.nvals])
	} else {
		x := c.rare()
		x.values = append([]any(nil), a.vals...)
		keepArgs(x.values)
	}
	c.pc = callSite(ret, site)
	if op.Kind == KindWrite && inv.failed.Load() > 0 {
		c.rare().path = c.path() // no other goroutine has c yet
	}
	// c is zero (newCall): set only what is not. What the op says (name,
	// kind, parameter names, after=) is read from it when the trace is.
	c.rec.start = r.now()
	c.computeIdentity(canon, identity, entity)
	c.rec.Seq = -1
	if viaHTTP != 0 {
		x := c.rare() // before any other goroutine has c
		x.viaHTTP = viaHTTP
		if outer == nil {
			x.served = r.servedCall(inv, c)
		}
	}
	// The calling goroutine is read once: for the baseline's count, the
	// real-time scheduler's gates (Wait), and the calls made inside this
	// one without its context (openOn).
	gid := goroutineID()
	c.gid = gid
	if detached {
		c.rec.Detached = true
		if c.pc != 0 {
			by := byAnyone
			switch {
			case viaHTTP != 0:
				by = byHandler
			case server:
				by = bySetupServer
			}
			r.noteDetached(agentSite(c.pc), by)
		}
		if server && viaHTTP == 0 {
			c.rare().bySetupServer = true // before any other goroutine has c
		}
		if c.parent == nil {
			// A tool calling a tool with context.Background(): the
			// call its goroutine is inside of is its outer call, as
			// the context would have said.
			c.parent = r.openOn(gid, inv)
		}
	}
	r.mu.Lock()
	if r.stopped.Load() {
		// The run ended since lookup found it (stop takes r.mu): its
		// trace was read, and the call is late, as one made after.
		r.mu.Unlock()
		inv.endIfCrashed(ctx)
		r.late.note(op, c.pc, isCarried(ctx))
		args, identity, entity := a.boxed(new([4]any))
		return observe(ctx, op, args, identity, entity, c.pc)
	}
	if r.goroutines != nil {
		r.goroutines[gid] = true
	}
	if afterReturn && !slices.Contains(r.odd().afterReturnOps, op.Name) {
		x := r.rareLocked()
		x.afterReturnOps = append(x.afterReturnOps, op.Name)
	}
	r.addCall(c)
	if r.gate == nil {
		// Under a gate (a scheduler, the lockstep), calls are numbered
		// when their start gate opens, so numbers follow the schedule,
		// not goroutine luck. Here no one else has c yet: c.mu is not
		// needed.
		r.numberNew(c)
	}
	r.mu.Unlock()
	if ctx == nil {
		return c, nil
	}
	return c, c
}

// canonWords is how many number arguments the end of Call.canon holds,
// at most: the identity keeps 48 bytes before them.
const canonWords = 2

// setArgs records args, a call's arguments as BeginArgs was given them,
// and returns the values recorded: in c.buf, or in the rare part for a
// call with more than it holds, as Begin's. The first strings are kept in
// c.strs and the first numbers at the end of c.canon (the rest are boxed,
// as the wrapper would have boxed them for Begin), and it returns the
// part of c.canon left for the identity; only the call's own goroutine
// has c yet.
func (c *Call) setArgs(args []Arg) (vals []any, canon []byte) {
	if len(args) <= len(c.buf) {
		c.rec.nvals = uint8(len(args))
		vals = c.buf[:len(args)]
	} else {
		vals = make([]any, len(args))
		c.rare().values = vals
	}
	ns, nw := 0, 0
	for i := range args {
		a := &args[i]
		switch {
		case a.typ == nil:
			vals[i] = a.v
		case a.str && ns < len(c.strs):
			c.strs[ns] = a.s
			vals[i] = packAny(a.typ, unsafe.Pointer(&c.strs[ns]))
			ns++
		case !a.str && nw < canonWords:
			nw++
			w := (*uint64)(unsafe.Pointer(&c.canon[len(c.canon)-8*nw]))
			*w = a.word
			vals[i] = packAny(a.typ, unsafe.Pointer(w))
		default:
			vals[i] = a.boxed()
		}
	}
	return vals, c.canon[: 0 : len(c.canon)-8*nw]
}

// computeIdentity records the canonical identity and entity of c, in b
// (c.canon, or the part of it setArgs left) when they fit.
func (c *Call) computeIdentity(b []byte, identity, entity []any) {
	if c.op.Kind == KindWrite {
		var id string
		var err error
		id, b, err = canonicalInto(b, identity)
		if err != nil {
			c.rare().identityError = unencodable(identity, err, c.op.RedactIdentity)
		}
		c.rec.Identity = c.digest(id)
	}
	switch {
	case entity != nil:
		if e, _, err := canonicalInto(b, entity); err == nil {
			c.rec.Entity = c.digest(e)
		}
	case c.op.Kind == KindWrite:
		c.rec.Entity = c.rec.Identity
	}
}

// canonicalInto is Canonical appending to b, which the caller never writes
// again below its returned length: the string shares b's bytes, so a small
// identity costs no allocation. It returns the rest of b for the next value.
func canonicalInto(b []byte, vals []any) (string, []byte, error) {
	out, err := appendCanonicalList(b, vals)
	if err != nil && len(vals) != 1 {
		return "", b, err
	}
	s := unsafe.String(unsafe.SliceData(out), len(out))
	if cap(out) == cap(b) && len(out) > 0 {
		// Still in b: the next value goes after this one.
		return s, out[len(out):], err
	}
	return s, b, err
}

// unencodable says which identity value could not be encoded, and why.
// A redacted identity names the type only.
func unencodable(vals []any, err error, redacted bool) string {
	for _, v := range vals {
		if _, e := Canonical(v); e != nil {
			if redacted {
				return fmt.Sprintf("a value of type %T cannot be encoded as JSON", v)
			}
			return fmt.Sprintf("a value of type %T cannot be encoded as JSON (%v)", v, e)
		}
	}
	if redacted {
		return "the identity cannot be encoded as JSON"
	}
	return errorText(err)
}

// digest hides an identity built from redacted parameters.
func (c *Call) digest(s string) string {
	if !c.op.RedactIdentity || s == "" {
		return s
	}
	return keyedDigest(s)
}

// Start is called before the tool runs. It waits at the scheduler's start
// gate, then injects a failure before the operation if one is planned for
// this call; a non-nil error is to be returned to the agent without calling
// the tool.
func (c *Call) Start() error {
	if c.inv == nil {
		return nil
	}
	r := c.inv.rec
	if err := c.stopIfCrashed(); err != nil {
		return err
	}
	if r.gate != nil {
		live := c.live()
		var (
			arrived  time.Time
			deadline time.Time
		)
		if live {
			if d, ok := c.Context.Deadline(); ok {
				arrived, deadline = time.Now(), d
			}
		}
		r.gate.Wait(c, PointStart)
		if live {
			c.endedAtGate("start")
		}
		if !arrived.IsZero() {
			c.heldAtStart(arrived, deadline)
		}
		if c.sched != nil && c.sched.judged != nil {
			defer c.passedJudge()
		}
		// A call held at its gate when a sibling's crash fired was never
		// sent: a dead worker does not send it later.
		if err := c.stopIfCrashed(); err != nil {
			return err
		}
	}
	f := c.fault()
	if f != FaultBefore && f != FaultConflict && f != FaultLostRequest {
		if r.world != nil && c.op.Kind == KindWrite {
			gid := c.bodyGoroutine()
			r.world.takeRetrying(gid) // a back-off before the body is not its
		}
		c.executing()
		return nil
	}
	if c.op.NoError {
		r.noteUnfired(fmt.Sprintf("%s has no error result: a failure cannot be injected into it", c.op.Name))
		c.executing()
		return nil
	}
	err := c.injected(f)
	text := errorText(err) // FaultError's error may panic in Error: not under the lock
	c.notePath(c.path())
	c.mu.Lock()
	c.rec.status = statusFailed
	c.rec.observation = observationFailed
	c.rec.faulted = true
	c.rec.Error = text
	c.rec.end, c.rec.ended = r.now(), true
	c.mu.Unlock()
	r.markFired()
	if r.world != nil {
		r.world.body(c.gid, false) // the tool does not run
	}
	if sch, ok := r.gate.(*scheduler); ok && sch != nil {
		// The failure is the call's answer: it comes back when the call
		// finishes, as a refusal, a conflict or a timeout comes back
		// from a service while the other calls of its batch run, not
		// before they start. Returned at the start gate, it reached an
		// agent that cancels its batch at the first error (errgroup)
		// before the calls that sort after this one in the listed
		// schedule had started, and whether their effects were seen
		// depended on the names of the ops.
		sch.Wait(c, PointFinish)
	}
	return err
}

// stopIfCrashed stops a call of an invocation that crashed: the call is
// recorded as never executed and the calling goroutine ends, as the crash
// of its worker would end it, when the goroutine is the invocation's (its
// own, or one that descends from it).
//
// A goroutine the invocation did not start (a worker of a pool that Setup
// or the test started, fed the agent's context over a channel) is not the
// invocation's to end: ending it would take the worker from every later
// scenario, and from the restart. Its call is refused instead, with an
// error that matches context.Canceled and ErrInjected (errCrashedCall),
// which stopIfCrashed returns for Start to give the wrapper; the goroutine
// goes on, and the trace notes it. A tool without an error result cannot
// be refused: its call runs, the trace notes why, and the scenario is
// inconclusive (recorder.unstopped). So is a call made with a context a
// server serves the agent's call with (Served): its goroutine is the
// server's, whatever the links of the goroutines say.
func (c *Call) stopIfCrashed() error {
	if !c.inv.dead.Load() {
		return nil
	}
	r := c.inv.rec
	gid := goroutineID()
	served := isServed(c.Context)
	owned := !served && c.inv.owns(gid)
	if !owned && c.op.NoError {
		r.mu.Lock()
		r.unstopped = true
		r.mu.Unlock()
		r.addNoteOnce(fmt.Sprintf("the crash of delivery %d could not stop its later call of %s at %s: the goroutine that made it (goroutine %d) does not descend from the invocation (a worker started by Setup, by the test or by an earlier run of the agent, or a time.AfterFunc callback, whose goroutine the Go runtime starts from whichever goroutine runs the timers), so it was not ended, and %s has no error result to refuse the call with; the call ran after the crash, which a crashed worker would not have made, so the scenario is inconclusive",
			c.inv.n, c.op.Name, shortSite(siteOf(c.pc)), gid, c.op.Name))
		return nil
	}
	c.mu.Lock()
	c.rec.status = statusFailed
	c.rec.observation = observationFailed
	c.rec.Error = errNotExecutedCrashed
	c.rec.end, c.rec.ended = r.now(), true
	c.mu.Unlock()
	if owned && !c.op.NoError && isWorkerCall(c.Context) && gid != c.inv.self.Load() {
		// A framework's worker (FrameworkCall): refused, not ended.
		if r.world != nil {
			r.world.body(c.gid, false) // the tool does not run
		}
		r.addNoteOnce(fmt.Sprintf("the crash of delivery %d refused its later call of %s at %s, made by goroutine %d, a worker the framework started for the call (its adapter says so: runtime.FrameworkCall): ended with runtime.Goexit, the worker would have left the framework a call that returned neither a result nor an error, which a framework reads as an empty answer (Eino, run with Stream, then reads a nil stream and panics in a goroutine of its own); the call was not executed and returned an error matching context.Canceled, and the framework went on with that error; the delivery's own goroutine is still ended at its next call",
			c.inv.n, c.op.Name, shortSite(siteOf(c.pc)), gid))
		return errCrashedCall
	}
	if owned {
		if gid != c.inv.self.Load() {
			// A goroutine the invocation started: it may be a worker that
			// later deliveries share (started once, on first use), which
			// the restart then waits for in vain (crashEnded).
			r.mu.Lock()
			x := r.rareLocked()
			x.crashEnded = append(x.crashEnded, fmt.Sprintf("goroutine %d, at its call of %s at %s", gid, c.op.Name, shortSite(siteOf(c.pc))))
			r.mu.Unlock()
		}
		r.endedByCrash(c.inv.n, c.op.Name, c.pc) // what it may hold (crashlock.go, crashtx.go)
		goruntime.Goexit()
	}
	if r.world != nil {
		r.world.body(c.gid, false) // the tool does not run
	}
	r.noteDeadCall(c, gid, served)
	if served {
		// Once per op and line, not per goroutine: a bus that delivers
		// the message again runs each delivery on a goroutine of its own.
		head := fmt.Sprintf("the crash of delivery %d stopped its later calls of %s at %s, made by goroutines of a server in the process serving the agent's call", c.inv.n, c.op.Name, shortSite(siteOf(c.pc)))
		r.addNoteOnceHead(head, fmt.Sprintf("%s (runtime.Served; the first by goroutine %d): that goroutine was not ended, as a server's handler outlives the crash of its client; the call was not executed and returned an error matching context.Canceled, and the handler went on to answer; a message the crashed delivery sent with its token (runtime.Token) and the bus delivers again is served as its restart's once the restart began (runtime.Resolve)",
			head, gid))
		return errCrashedCall
	}
	r.addNoteOnce(fmt.Sprintf("the crash of delivery %d stopped its later call of %s at %s, made by goroutine %d, which does not descend from the invocation (a worker started by Setup, by the test or by an earlier run of the agent, or a time.AfterFunc callback, whose goroutine the Go runtime starts from whichever goroutine runs the timers): that goroutine was not ended, as the invocation's own goroutines are, since later scenarios and the restart need it; the call was not executed and returned an error matching context.Canceled, and the goroutine went on",
		c.inv.n, c.op.Name, shortSite(siteOf(c.pc)), gid))
	return errCrashedCall
}

// noteDeadCall counts a call of a crashed invocation that was refused
// and goroutine gid goes on, and keeps the first one's description, for
// the stall's message (deadCallsNote).
func (r *recorder) noteDeadCall(c *Call, gid uint64, served bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.rareLocked()
	if x.deadCalls++; x.deadCalls != 1 {
		return
	}
	how := "a goroutine that does not descend from the delivery"
	if served {
		how = "a server's handler serving the delivery's request (runtime.Served, runtime.Resolve of its token)"
	}
	x.deadCall = fmt.Sprintf("%s at %s, made by goroutine %d, %s", c.op.Name, shortSite(siteOf(c.pc)), gid, how)
}

// deadCallsNote says, for a stall, how many calls the crash of delivery
// n refused, and the first: a loop that made them again and again (a bus
// redelivering a message the crashed delivery published, with its
// token), which is no progress; "" where it refused none.
func (r *recorder) deadCallsNote() string {
	n := 0
	r.mu.Lock()
	k, first := r.odd().deadCalls, r.odd().deadCall
	if k == 0 {
		r.mu.Unlock()
		return ""
	}
	for _, inv := range r.all {
		if inv.dead.Load() {
			n = inv.n
		}
	}
	r.mu.Unlock()
	return fmt.Sprintf("the crash of delivery %d refused %d calls made after it, the first %s: each did nothing, so a loop that makes them again (a message bus redelivering a message the crashed delivery published, a retry middleware) counted as no progress", n, k, first)
}

// Served returns ctx marked as the context a server in the process serves a
// call of the agent with: a handler of an MCP server that found the
// agent's context again from the call (adapters/mcp's Resolve), whose
// goroutine is the server's, though the run ctx carries is the agent's.
// When the invocation crashes, a call made with such a context is refused,
// with an error matching context.Canceled and ErrInjected, and its
// goroutine goes on, as a server's handler outlives the crash of its
// client; ended, as the invocation's own goroutines are, the handler never
// answered, and a session the deliveries shared could not be closed.
func Served(ctx context.Context) context.Context {
	if ctx == nil || isServed(ctx) {
		return ctx
	}
	return servedContext{ctx}
}

// FrameworkCall returns ctx marked as the context of a call that a
// framework makes from a worker goroutine of its own (Eino's ToolsNode
// runs the calls of one turn in goroutines it starts, and waits for them),
// for an adapter to pass to Begin. When the invocation crashed, a later
// call made with it from a goroutine other than the invocation's own is
// refused with an error matching context.Canceled and ErrInjected, as a
// call of a worker the invocation did not start is, instead of ending the
// goroutine with runtime.Goexit: a worker ended that way runs its
// deferred functions (the framework's "done" of the task) and leaves the
// framework a task with neither a result nor an error, which it takes for
// an empty answer and uses, in a goroutine no harness recovers (rtS #1's
// streaming calls: Eino read the nil stream of such a task and the test
// binary died). The error ends the framework's turn the way any tool
// error does. The invocation's own goroutine is still ended at its next
// call, and a tool without an error result cannot be refused: its
// worker is ended.
func FrameworkCall(ctx context.Context) context.Context {
	if ctx == nil || isWorkerCall(ctx) {
		return ctx
	}
	return workerContext{ctx}
}

type workerKey struct{}

type workerContext struct{ context.Context }

func (c workerContext) Value(key any) any {
	if _, ok := key.(workerKey); ok {
		return true
	}
	return c.Context.Value(key)
}

func isWorkerCall(ctx context.Context) bool {
	return ctx != nil && ctx.Value(workerKey{}) != nil
}

// servedKey marks a context Served returned.
type servedKey struct{}

type servedContext struct{ context.Context }

func (c servedContext) Value(key any) any {
	if _, ok := key.(servedKey); ok {
		return true
	}
	return c.Context.Value(key)
}

func isServed(ctx context.Context) bool {
	return ctx != nil && ctx.Value(servedKey{}) != nil
}

// errNotExecutedCrashed is the error of a call the crash of its
// invocation stopped (stopIfCrashed), as its trace records it.
const errNotExecutedCrashed = "not executed: the invocation had crashed"

// errCrashedCall is what a call of a crashed invocation returns when the
// goroutine that made it is not the invocation's (stopIfCrashed).
var errCrashedCall = fmt.Errorf(errNotExecutedCrashed+" (%w: %w)", ErrInjected, context.Canceled)

// Finish is called after the tool returned err and results (error excluded).
// It records the outcome, waits at the scheduler's finish gate, and applies a
// planned lost acknowledgement or crash: then it returns the error the agent
// must see instead of the tool's answer (the wrapper returns zero results with
// it). Otherwise it returns nil and the wrapper returns the tool's answer.
func (c *Call) Finish(err error, results ...any) error {
	if c.inv == nil {
		c.observeEnd(err)
		return nil
	}
	if !c.rec.returned {
		// (Set already by FinishLater, whose Finish may run while the
		// wrapper's Recover reads it: written only once.)
		c.rec.returned = true
	}
	r := c.inv.rec
	end := r.now()
	if r.world != nil && c.op.Kind == KindWrite && !c.op.Idempotent {
		if where := r.world.takeRetrying(c.bodyGoroutine()); where != "" {
			r.addNoteOnce(retriedInsideNote(c.op.Name, where))
		}
	}
	if err != nil {
		c.ranOutAfterGate()
		c.failedPastDeadline(err)
	}
	if err != nil || c.rec.planned {
		// An error, or a fault that loses the answer (a lost
		// acknowledgement, a crash): what the agent calls next is told
		// a retry or other work by the path (notePath).
		c.notePath(c.path())
	}
	// The error's text is read before the lock is taken: an Error method
	// may panic (a typed nil *MyErr returned as an error), and the panic
	// runs the wrapper's deferred Recover, which takes the lock.
	var text string
	if err != nil {
		text = errorText(err)
	}
	c.mu.Lock()
	if c.rec.status == statusFailed && c.rec.rare != nil && c.rec.rare.panic != nil {
		c.mu.Unlock()
		return nil
	}
	switch len(results) {
	case 0:
	case 1:
		c.rec.Result = results[0]
	default:
		c.rec.Result = results
	}
	if err != nil {
		c.rec.status = statusFailed
		c.rec.observation = observationFailed
		c.rec.Error = text
		if c.rec.planned && c.lostAppliedLocked() {
			// The service applied the request whose answer the
			// lost_response fault dropped, and the tool failed on
			// that: its effect happened, and its answer was lost, as
			// after a lost acknowledgement (resent.go).
			c.rec.status = statusSuccess
			c.rec.observation = observationLost
		}
	} else {
		c.rec.status = statusSuccess
		c.rec.observation = observationReceived
	}
	c.rec.end, c.rec.ended = end, true
	c.mu.Unlock()
	r.progress.Add(1)
	c.executed()

	if r.gate != nil {
		// A deadline that runs out while the finish gate holds the answer
		// is noted only if the agent gave up on the call and made it
		// again (recorder.retriedPastDeadline): the answer is the tool's,
		// and an agent that waits for it acts on it as in production.
		live := c.live()
		r.gate.Wait(c, PointFinish)
		if live {
			c.endedAtGate("finish")
		}
		if r.judge != nil {
			r.judge.afterGate(c)
		}
	}
	f := c.fault()
	switch f {
	case FaultLostAck, FaultCrash:
	case FaultLostResponse:
		c.lostNone()
		return nil
	default:
		return nil
	}
	if err != nil {
		what := "its acknowledgement could not be lost"
		if f == FaultCrash {
			what = "no crash could follow its success"
		}
		r.moveFault(c, fmt.Sprintf("%s failed by itself (%v), so %s; no later call of %s with its identity succeeded in this delivery, where the fault would have moved", c.op.Name, err, what, c.op.Name))
		return nil
	}
	if f == FaultLostAck && c.op.NoError {
		r.noteUnfired(fmt.Sprintf("%s has no error result: its acknowledgement cannot be lost", c.op.Name))
		return nil
	}
	r.movedFired(c, f)
	ierr := c.injected(f)
	c.mu.Lock()
	c.rec.observation = observationLost
	c.rec.faulted = true
	c.mu.Unlock()
	r.markFired()
	if f == FaultCrash {
		r.mu.Lock()
		r.crashed = true
		r.mu.Unlock()
		c.inv.dead.Store(true)
		c.inv.halt()
	}
	return ierr
}

// FinishLater is called, instead of Finish, by an adapter whose tool
// answered with a stream that its producer may still be writing (Eino's
// streamable tools: the tool returns a reader at once and a goroutine of
// its own does the work, a POST, then sends the result). The tool's effect
// may come after the tool returns, so its answer is the end of the stream:
// the adapter reads the stream to its end and then calls Finish, from the
// goroutine that read it, and applies what Finish returns (a lost
// acknowledgement, a crash) to the stream it hands on. Had Finish run when
// the stream opened, a planned lost acknowledgement closed the stream
// before the producer's POST, and the retry's single effect was judged an
// absorbed repeat of an agent that is not safe (rtS #1).
//
// It tells the deferred Recover that the call is not unwound when the
// function that called Start returns without Finish, and keeps the
// call's path for a retry to be told by (Finish, from another goroutine,
// cannot read it). Call it from the goroutine that called Start, after
// the tool returned without error, and call Finish exactly once after.
func (c *Call) FinishLater() {
	if c.inv == nil {
		return
	}
	if c.op.Kind == KindWrite {
		path := c.path()
		c.mu.Lock()
		if c.rare().path == nil {
			c.rec.rare.path = path
		}
		c.mu.Unlock()
	}
	c.rec.returned = true
}

// Recover is deferred by generated wrappers. A panic in the tool is recorded
// in the trace with its stack. When errp is not nil (the tool has an error
// result) the wrapper returns a *PanicError through it; otherwise the
// goroutine ends with runtime.Goexit, so that the test binary survives.
// When the goroutine exits while the tool runs (runtime.Goexit: a crash
// ending it at a call made inside the tool, t.FailNow), the call is
// recorded as not finished, with its answer lost.
func (c *Call) Recover(errp *error) {
	v := recover()
	if v == nil {
		if c.inv != nil && !c.rec.returned {
			c.unwound()
		}
		return
	}
	if c.inv == nil {
		c.observePanic(v)
		panic(v)
	}
	r := c.inv.rec
	if e, ok := r.exitingByCrash(goroutineID()); ok {
		// A deferred function panicked while the crash's Goexit, at a
		// call made inside this tool, unwound it: the suite's, not the
		// tool's. Recovered, the Goexit goes on.
		r.droppedCrashPanic(e, v)
		if !c.rec.returned {
			c.unwound()
		}
		return
	}
	p := Panic{Op: c.op.Name, Value: fmt.Sprint(v), Stack: string(debug.Stack()), exited: errp == nil}
	c.mu.Lock()
	c.rec.status = statusFailed
	c.rec.observation = observationFailed
	c.rec.Error = "panic: " + p.Value
	c.rare().panic = &p
	c.rec.end, c.rec.ended = r.now(), true
	c.mu.Unlock()
	c.executed()
	r.addPanic(p)
	if r.world != nil {
		r.world.body(c.gid, false)
	}
	if errp != nil {
		*errp = &PanicError{Op: c.op.Name, Value: v}
		return
	}
	goruntime.Goexit()
}

// bodyGoroutine is the goroutine the call's tool body runs on: the one
// that began it (Start and Finish are called from it).
func (c *Call) bodyGoroutine() uint64 {
	if c.gid != 0 {
		return c.gid
	}
	return goroutineID()
}

// retriedInsideNote is the note on a write whose tool body was seen in its
// client's retry back-off (world.takeRetrying): the client sent a request
// of the write again inside the call, below the boundary where the suite
// injects its faults, which never meet that retry. A write whose first
// request was applied and whose answer was lost (a 5xx or a timeout after
// the service committed) is applied twice so, in production as under test,
// and no scenario shows it: a red team's DynamoDB ADD behind idem.Do,
// re-sent by the AWS SDK's retryer after a 500, credited twice on every
// run of a SAFE suite (rtR #1). Said only where the back-off was seen: a
// stack snapshot the suite took while it waited for the scenario to go
// quiet (a call of another delivery, or of the same turn, held at its
// gate) caught the body in it. A write alone in its round (a baseline's
// only call) is not looked at while it runs: a watch that looked at it
// after 20, 40, 80 ms ... caught more, but its timers' goroutines, started
// behind the census's back (census.go), cost later scenarios a stack dump
// each. A note, not a finding: the
// re-sent request may have been refused before it was applied, or be
// idempotent at the service.
func retriedInsideNote(op, where string) string {
	return fmt.Sprintf("a call of %s (a write) was seen "+retriedInsideMark+" (%s): the client sends a request again below the boundary where the suite injects faults, so no scenario tested that retry; a write whose first request was applied and whose answer was lost (a 5xx or a timeout after the service committed) is applied twice that way: turn the client's retries off for this write (aws-sdk-go-v2: retry.AddWithMaxAttempts(retryer, 1) in the operation's options; go-retryablehttp: RetryMax 0), or make the request idempotent at the service (an idempotency key, a conditional write such as DynamoDB's ConditionExpression), or declare the op idempotent if it is; to test that retry, wrap the tool's HTTP client with runtime.Transport, whose lost_response scenario drops the answer to the write's first request after the service got it", op, where)
}

// retriedInsideMark is the words retriedInside finds the note by.
const retriedInsideMark = "in its client's retry back-off inside its tool body"

// pathFrames is how many frames a call's path holds: its site and the
// frames above it (a registry's entry, its dispatch, the agent). pathWalk
// is how many runtime.Callers reads to find the site among them.
const (
	pathFrames = 5
	pathWalk   = 9
)

// path returns the path of call c: its call site and the return addresses
// of the frames above it. It is called by begin, Start and Finish,
// directly, and only for a write that failed or follows one that failed
// in its invocation.
//
// The return addresses are read off the frame pointers (fpCallers), a few
// nanoseconds, where runtime.Callers took most of a microsecond: after a
// failed write, every later write of its invocation records its path, and
// in a suite that fails each write in turn that was 4% of the suite's time.
// The frame pointers give one address per frame of machine code, where
// runtime.Callers gives one per function, inlined ones too. The site
// (c.pc, the return address into the agent's code) is among both, so a
// path is read off the frame pointers whenever the site is within
// pathWalk frames, as it is for every call from one line of the agent:
// paths compared with each other are read the same way. runtime.Callers
// is left for platforms without fpCallers, and a site it alone finds.
//
//go:noinline
func (c *Call) path() []uintptr {
	if c.pc == 0 {
		return nil
	}
	var pcs [pathWalk]uintptr
	n := fpCallers(pcs[:])
	for i, pc := range pcs[:n] {
		if pc == c.pc {
			return append([]uintptr(nil), pcs[i:min(n, i+pathFrames)]...)
		}
	}
	n = goruntime.Callers(1, pcs[:])
	for i, pc := range pcs[:n] {
		if pc == c.pc {
			return append([]uintptr(nil), pcs[i:min(n, i+pathFrames)]...)
		}
	}
	return nil
}

// notePath records the path of a write the agent may retry (its answer was
// an error, or a planned fault may lose it), and says so to the
// invocation, whose later writes record theirs: identity_unstable tells a
// retry (the same path) from other work called through one line of a
// dispatcher (a tool registry), where only the frames above the site
// differ.
func (c *Call) notePath(path []uintptr) {
	if c.op.Kind != KindWrite {
		return
	}
	c.mu.Lock()
	if c.rare().path == nil {
		c.rec.rare.path = path
	}
	c.mu.Unlock()
	c.inv.failed.Add(1)
}

// unwound records a call whose tool never returned because its goroutine
// exited (runtime.Goexit) while it ran: the crash of its invocation ending
// the goroutine at a later call made inside the tool, or a t.FailNow in
// it. The tool may have had its effect; its answer never came. The State
// judge's window of the call closes here, so that the call is not in
// flight for the rest of the run.
func (c *Call) unwound() {
	r := c.inv.rec
	c.mu.Lock()
	if c.rec.ended {
		c.mu.Unlock()
		return
	}
	c.rec.status = statusFailed
	c.rec.observation = observationLost
	c.rec.Error = "not finished: its goroutine exited while the tool ran"
	if c.inv.dead.Load() {
		c.rec.Error = "not finished: the invocation crashed while the tool ran"
	}
	c.rec.end, c.rec.ended = r.now(), true
	c.mu.Unlock()
	r.progress.Add(1)
	c.executed()
	if r.world != nil {
		r.world.body(c.gid, false)
	}
}

func (c *Call) markReplayed() {
	c.mu.Lock()
	c.rec.Replayed = true
	c.mu.Unlock()
}

func (r *recorder) markFired() {
	r.mu.Lock()
	r.fired = true
	r.mu.Unlock()
}

func (r *recorder) noteUnfired(note string) {
	r.mu.Lock()
	if r.faultNote == "" {
		r.faultNote = note
	}
	r.mu.Unlock()
}

// number gives c its occurrence, sequence number, id and planned fault.
func (r *recorder) number(c *Call) {
	r.mu.Lock()
	r.numberLocked(c)
	r.mu.Unlock()
}

func (r *recorder) numberLocked(c *Call) {
	if c.rec.Seq >= 0 {
		return
	}
	k, seq, planned := r.nextNumber(c.op)
	planned = planned || r.takeMovedLocked(c)
	c.mu.Lock()
	c.rec.Occurrence, c.rec.Seq, c.rec.planned = k, seq, planned
	c.mu.Unlock()
}

// numberNew is numberLocked for a call that Begin has not returned yet.
func (r *recorder) numberNew(c *Call) {
	c.rec.Occurrence, c.rec.Seq, c.rec.planned = r.nextNumber(c.op)
	c.rec.planned = c.rec.planned || r.takeMovedLocked(c)
}

// movedFault is a fault that follows a success (a lost acknowledgement, a
// crash) whose call failed by itself: it moves to the next call of the
// same op with the same identity in the same delivery, and on until one
// succeeds (recorder.moveFault).
//
// A red team's agent (rtX #5) charges with an idempotency key through a
// tool whose request times out after 50 ms, against a service that
// applies the first charge and answers it after 150 ms, and answers 409
// "in progress" to a request whose key is in flight; the agent retries on
// both. In the baseline its second charge succeeded; under the fault
// scenarios, with the gates' timing, the second got 409 and the third
// succeeded, and lost_acknowledgement/charge#2 and crash_restart/charge#2
// were inconclusive on every run, with a fault_not_triggered warning, for
// a correct agent. The fault follows a success by definition: the first
// later success of that call (its retry) is where it belongs.
type movedFault struct {
	inv      *invocation
	op       string
	identity string
	from     []string // the calls it was on that failed by themselves, in order
	note     string   // the fault note set when it first moved
	pending  bool     // waiting for the next such call (takeMovedLocked)
}

// moveFault moves the fault of c, which failed by itself, to the next
// call of its op with its identity in its delivery; note says why it did
// not fire on c, the fault note if none does.
func (r *recorder) moveFault(c *Call, note string) {
	id := c.ID()
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.rareLocked()
	if x.moved == nil {
		x.moved = &movedFault{inv: c.inv, op: c.op.Name, identity: c.rec.Identity, note: note}
		if r.faultNote == "" {
			r.faultNote = note
		}
	}
	x.moved.from = append(x.moved.from, id)
	x.moved.pending = true
}

// takeMovedLocked reports whether a moved fault falls on c: the next call
// of its op with its identity in its delivery, numbered after the call it
// moved from failed. The numbering follows the gates' order, so a replay
// that meets the same failures puts it on the same call. r.mu is held.
func (r *recorder) takeMovedLocked(c *Call) bool {
	m := r.odd().moved
	if m == nil || !m.pending || m.op != c.op.Name || m.inv != c.inv || m.identity != c.rec.Identity {
		return false
	}
	m.pending = false
	return true
}

// movedFired is called when fault f fires on c: if it was moved there, the
// fault note is dropped and the trace says which call the fault fell on.
func (r *recorder) movedFired(c *Call, f FaultKind) {
	r.mu.Lock()
	m := r.odd().moved
	if m == nil || m.inv != c.inv || m.op != c.op.Name {
		r.mu.Unlock()
		return
	}
	if r.faultNote == m.note {
		r.faultNote = ""
	}
	from := strings.Join(m.from, ", then ")
	r.mu.Unlock()
	r.addNote(fmt.Sprintf("the %s planned on %s fell on %s: %s failed by itself, and a fault that follows a success moves to the first later call of the op with the same identity in the same delivery that succeeds (its retry)",
		f, from, c.ID(), from))
}

// nextNumber counts a call of op: its occurrence (among the calls of ops
// of its name), its sequence number, and whether the run's fault targets
// it. r.mu is held.
func (r *recorder) nextNumber(op *Op) (k, seq int32, planned bool) {
	name := op.Name
	n := r.occurrences(name)
	*n++
	seq = int32(r.seq)
	r.seq++
	return int32(*n), seq, r.fault.Kind != FaultNone && r.fault.Op == name && r.fault.Occurrence == *n
}

// occurrences returns the count of calls of ops named name so far. A run
// calls few ops: their counts are found by a scan, and by a map once there
// are more than 16. r.mu is held.
func (r *recorder) occurrences(name string) *int {
	if r.occIndex != nil {
		if i, ok := r.occIndex[name]; ok {
			return &r.occ[i].n
		}
	} else {
		for i := range r.occ {
			if r.occ[i].name == name {
				return &r.occ[i].n
			}
		}
	}
	if r.occIndex == nil && len(r.occ) >= 16 {
		r.occIndex = make(map[string]int, 2*len(r.occ))
		for i, c := range r.occ {
			r.occIndex[c.name] = i
		}
	}
	r.occ = append(r.occ, opCount{name: name})
	if r.occIndex != nil {
		r.occIndex[name] = len(r.occ) - 1
	}
	return &r.occ[len(r.occ)-1].n
}

// live reports whether the call's context has not ended.
func (c *Call) live() bool { return c.Context != nil && c.Context.Err() == nil }

// endedAtGate marks a call whose context's deadline ran out while its
// gate (where) held it: the harness's order took time the agent's
// deadline did not allow (a per-attempt timeout). If the call then fails
// (held at its start gate: Finish), or the agent makes it again (it gave
// up waiting: recorder.retriedPastDeadline), what the agent does next is
// not what it does in production, where nothing holds the call: the
// scenario is inconclusive (recorder.heldPastDeadline). Only
// a deadline counts: a context cancelled (by the agent, by an errgroup for
// a sibling's error, by the harness for a crash) ended by what happened,
// not by how long it took; and a tool that does its work all the same
// and answers without an error changed nothing the agent sees.
func (c *Call) endedAtGate(where string) {
	err := c.Context.Err()
	if !errors.Is(err, context.DeadlineExceeded) || c.inv.dead.Load() {
		return
	}
	c.mu.Lock()
	if x := c.rare(); x.heldPast == "" {
		x.heldPast = where
	}
	c.mu.Unlock()
	c.inv.rec.heldAny.Store(true)
}

// heldAtStart records how long the start gate held a call whose context
// has a deadline (it arrived at the gate at arrived), when that is a tenth
// or more of what the deadline left it then: the tool starts that much
// later than in production, where nothing holds it, with that much less
// of its deadline (ranOutAfterGate).
func (c *Call) heldAtStart(arrived, deadline time.Time) {
	held, budget := time.Since(arrived), deadline.Sub(arrived)
	if held <= 0 || budget <= 0 || held < budget/10 {
		return
	}
	c.mu.Lock()
	x := c.rare()
	x.heldStart, x.heldBudget = held, budget
	c.mu.Unlock()
}

// ranOutAfterGate marks a call that failed with its context's deadline run
// out in its tool, after the start gate held it a tenth or more of that
// deadline (heldAtStart), as endedAtGate marks one whose deadline ran out
// at the gate: the harness's order took the time the tool lacked (the
// tools of parallel calls run one after another under a schedule, where
// production runs them together), and what the agent does next (a retry
// middleware sending the call again) is not what it does in production.
// A red team's dispatcher (rtS #6: four 300 ms writes, a 500 ms deadline
// per attempt set before the call, a retry on timeouts) had its third
// and fourth calls time out in the tool and sent again, and the suite
// planned its faults on a baseline of six calls. A deadline that was short
// anyway (the gate held the call less than a tenth of it) is the agent's.
func (c *Call) ranOutAfterGate() {
	if !errors.Is(c.Context.Err(), context.DeadlineExceeded) || c.inv.dead.Load() {
		return
	}
	c.mu.Lock()
	if x := c.rec.rare; x != nil && x.heldPast == "" && x.heldStart > 0 {
		x.heldPast = fmt.Sprintf("start gate for %s of the %s its deadline left it, and the deadline ran out in the tool, which production starts at once", x.heldStart.Round(time.Millisecond), x.heldBudget.Round(time.Millisecond))
		c.inv.rec.heldAny.Store(true)
	}
	c.mu.Unlock()
}

// failedPastDeadline notes a call that failed (err, not nil) after its
// deadline ran out at a gate (endedAtGate).
func (c *Call) failedPastDeadline(err error) {
	c.mu.Lock()
	where := ""
	if x := c.rec.rare; x != nil {
		where = x.heldPast
	}
	c.mu.Unlock()
	if where == "" {
		return
	}
	r := c.inv.rec
	r.mu.Lock()
	r.heldPastDeadline = true
	r.mu.Unlock()
	r.addNoteOnce(gateDeadlineNote(c.op.Name, where, fmt.Sprintf("the call failed (%s)", clip(errorText(err), 120))))
}

// gateDeadlineNote is the trace's note for a call of op whose deadline ran
// out while the harness held it at its gate (where), and what followed.
func gateDeadlineNote(op, where, then string) string {
	ran := fmt.Sprintf("ran out while the harness held the call at its %s gate to follow the schedule", where)
	if strings.HasPrefix(where, "start gate for ") {
		ran = "ran short: the harness held the call at its " + where // ranOutAfterGate
		then += " (under a schedule the tools of parallel calls run one after another, so a deadline set before the call must cover the tools of the calls before it)"
	}
	return fmt.Sprintf("%s's deadline %s, and %s: what the agent did next (a retry, a turn given up) may not happen in production, where nothing holds the call; the scenario is inconclusive; give the agent's calls deadlines longer than the harness's gates take under test (milliseconds, more on a loaded machine), or none", op, ran, then)
}

// retriedPastDeadline returns the name of an op whose call's deadline ran
// out while a gate held it (endedAtGate), and that the same invocation
// then began again for the same identity, with the gate that held it: the
// agent gave up waiting (a select on the call's context, a goroutine per
// call) and retried what would have answered in time in production. ""
// if none.
func (r *recorder) retriedPastDeadline() (op, where string) {
	if !r.heldAny.Load() {
		return "", "" // no deadline ran out at a gate: most runs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	type key struct {
		inv    *invocation
		op, id string
	}
	type heldCall struct {
		start int64
		where string
	}
	var held map[key]heldCall // the first such call of each
	var all []*Call
	for _, chunk := range r.calls {
		for _, c := range chunk {
			c.mu.Lock()
			if x := c.rec.rare; x != nil && x.heldPast != "" && !c.rec.planned {
				// (A call the scenario's fault targets is made again
				// for the fault: that retry is the scenario's point.)
				if held == nil {
					held = map[key]heldCall{}
				}
				k := key{c.inv, c.op.Name, c.rec.Identity}
				if h, ok := held[k]; !ok || c.rec.start < h.start {
					held[k] = heldCall{c.rec.start, x.heldPast}
				}
			}
			c.mu.Unlock()
			all = append(all, c)
		}
	}
	if held == nil {
		return "", ""
	}
	for _, c := range all {
		c.mu.Lock()
		k, start := key{c.inv, c.op.Name, c.rec.Identity}, c.rec.start
		c.mu.Unlock()
		if h, ok := held[k]; ok && start > h.start {
			return c.op.Name, h.where
		}
	}
	return "", ""
}
