package runtime

import (
	"slices"
	"time"
)

// Status says whether a call's effect happened.
type Status string

const (
	// StatusSuccess: the tool ran and returned no error. For a write, the
	// effect happened (unless Replayed).
	StatusSuccess Status = "success"
	// StatusFailed: the tool returned an error, panicked, or never ran.
	StatusFailed Status = "failed"
	// StatusRunning: the call had not finished when the trace was taken.
	StatusRunning Status = "running"
)

// Observation says what the agent saw of a call.
type Observation string

const (
	// ObservationReceived: the agent got the tool's own answer.
	ObservationReceived Observation = "received"
	// ObservationLost: the tool ran but its answer was lost (timeout, crash).
	ObservationLost Observation = "lost"
	// ObservationFailed: the agent got an error from a call that did not take effect.
	ObservationFailed Observation = "failed"
)

// Operation is one recorded call of an annotated tool. The JSON names follow
// the trace of the AgentIdem report.
type Operation struct {
	// ID is stable across runs of the same schedule: "<invocation>:<op>#<k>".
	ID   string `json:"id"`
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// viaAdapter says Site is a framework adapter's line, the same for
	// every call of the tool (adapterSite). It sits in the padding after
	// Kind, where it costs no byte (see more).
	viaAdapter bool
	// noError says its op has no error result (Op.NoError): no fault but
	// a crash can fire on it, and the plan gives it no other (plan).
	noError bool
	Args    Args `json:"args"`
	// Identity is the canonical JSON of the identity (writes), "" for reads.
	Identity string `json:"identity,omitempty"`
	// IdentityError says why the identity could not be computed.
	IdentityError string `json:"identity_error,omitempty"`
	// IdentityPanic lists the identity or entity expressions that
	// panicked when the call began, each "identity=EXPR panicked: VALUE".
	IdentityPanic []string `json:"identity_panic,omitempty"`
	// After lists the ops this one must follow (its after= declaration).
	After []string `json:"after,omitempty"`
	// Entity is the canonical JSON of what the op touches.
	Entity      string      `json:"entity,omitempty"`
	Result      any         `json:"result,omitempty"`
	Error       string      `json:"error,omitempty"`
	Status      Status      `json:"status"`
	Observation Observation `json:"observation"`
	// Replayed says an idempotent sink answered from a stored result: not a
	// second effect.
	Replayed bool `json:"replayed,omitempty"`
	// Idempotent says the op is declared idempotent (Op.Idempotent).
	Idempotent bool `json:"idempotent,omitempty"`
	// Repeat says how a write that repeated an earlier one of the same op
	// and identity was judged: RepeatAbsorbed (no further effect, never a
	// duplicate), RepeatUpdate or RepeatDuplicate; "" for a first
	// execution. JudgedBy says what decided it (JudgedByState, ...).
	Repeat   string `json:"repeat,omitempty"`
	JudgedBy string `json:"judged_by,omitempty"`
	// StateChange is, with State, the difference the call made to the
	// world's snapshot, in words; StateError says why it could not be
	// taken. Overlapped says another write was in flight with the call, so
	// its own snapshots could not tell its effect apart.
	StateChange string `json:"state_change,omitempty"`
	StateError  string `json:"state_error,omitempty"`
	Overlapped  bool   `json:"overlapped,omitempty"`
	// Fault is the fault injected into this call, if any.
	Fault FaultKind `json:"fault,omitempty"`
	// Panic holds the panic value and stack when the tool panicked.
	Panic *Panic `json:"panic,omitempty"`
	// Invocation numbers the delivery of the agent that made the call (1, 2).
	Invocation int `json:"invocation"`
	// Occurrence is k for the k-th call of this op in the run.
	Occurrence int `json:"occurrence"`
	// Seq is the call's start order in the run (0-based).
	Seq int `json:"seq"`
	// Parent is the ID of the call this one was made inside of: a tool
	// that calls another tool with the context it was given (directly, or
	// handing it to a goroutine). "" for a call the agent made itself.
	// A call and its parent are never in flight together as a batch is.
	Parent string `json:"parent,omitempty"`
	// StartTick and EndTick are the scheduler's logical clock at the
	// release of the call's start and finish gates (interleaving scenarios
	// only): the call is in flight between them.
	StartTick int `json:"start_tick,omitempty"`
	EndTick   int `json:"end_tick,omitempty"`
	// Batch numbers the calls that were in flight together (from 1); 0
	// means the call was alone or no scheduler ran.
	Batch int `json:"batch,omitempty"`
	// Detached says the tool got a context that does not come from the
	// agent's: the call was attributed by the goroutine that made it.
	Detached bool `json:"detached,omitempty"`
	// Site identifies the call site (file:line of the agent's call), used to
	// tell retries of one call apart from distinct calls.
	Site        string    `json:"site,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	CompletedAt time.Time `json:"completed_at,omitzero"`

	// more holds what few calls record and no report writes (opMore),
	// nil for most: one pointer where its fields took 48 bytes, so that
	// an Operation is 496 bytes, not 544, and the trace's []Operation
	// the ten-write agent's suite allocates 7% smaller (the traces'
	// operations were a third of the suite's bytes).
	more *opMore
}

// opMore is the part of an Operation that few calls record. It is never
// written once an Operation points to it (withMore copies it first):
// copies of an Operation share it, as they shared its fields' values.
type opMore struct {
	// view is what the State judge had seen of the call when the trace
	// was read (callEffect.record), nil without State.
	view *effectView
	// path is the call's site and the frames above it, where recorded
	// (callRare.path).
	path []uintptr
	// served is the ID of the call whose HTTP request this one, made by
	// an HTTP handler of this process, serves (callRare.served): like
	// Parent, it was not in flight beside that call but inside it
	// (nestingOf). Not written: a report read back has no batches to
	// number.
	served string
	// sent lists the HTTP requests the call sent through Transport
	// (callRare.sent), written as the operation's http_requests.
	sent []sentRequest
}

// effect returns what the State judge had seen of the call when the
// trace was read (callEffect.record), nil without State.
func (o *Operation) effect() *effectView {
	if o.more == nil {
		return nil
	}
	return o.more.view
}

// sent returns the HTTP requests the call sent through Transport
// (opMore.sent), nil for most.
func (o *Operation) sent() []sentRequest {
	if o.more == nil {
		return nil
	}
	return o.more.sent
}

// path returns the call's site and the frames above it, where recorded
// (callRare.path).
func (o *Operation) path() []uintptr {
	if o.more == nil {
		return nil
	}
	return o.more.path
}

// served returns the ID of the call whose HTTP request this one serves
// (opMore.served), or "".
func (o *Operation) served() string {
	if o.more == nil {
		return ""
	}
	return o.more.served
}

// withMore points o to m, a zero opMore, holding what o's held, and
// returns it for the caller to write: an opMore another copy of o may
// share is never written.
func (o *Operation) withMore(m *opMore) *opMore {
	if o.more != nil {
		*m = *o.more
	}
	o.more = m
	return m
}

// effectView is a copy of what the State judge saw of a call and of the
// cluster of calls it overlapped with, taken under the judge's lock when
// the trace is read: a goroutine the agent left behind may still be
// calling tools, and closing clusters, while the trace is judged.
type effectView struct {
	order         int  // 1 for the first write the run executed, ...
	seen, settled bool // see stateSeen, stateSettled
	// heldSettle says the Settle before the repeat failed while the
	// harness held it, on a server's goroutine (callEffect.heldSettle).
	heldSettle bool
	// carriedAlone says no Settle closed the call's window, nor one of
	// a call around it: its context came from Resolve and no traced call
	// was around it (callEffect.carried).
	carriedAlone bool
	// The cluster's snapshots before and after it, its error, and how
	// many distinct calls it held; inCluster is false without one.
	inCluster            bool
	before, after, clErr string
	clusterKeys          int
	// others says another invocation ran its own code, untraced, at
	// some moment of the cluster (cluster.others).
	others bool
	// cluster is the n of the call's window (cluster.n); in, for a call
	// made inside another with a window of its own, the n of the cluster
	// that window lies in (callEffect.in), else 0.
	cluster, in int
	// outerQuiet says the call was made inside another (or serves its
	// request) whose window held it whole, was let settle and saw no
	// change (callEffect.outer).
	outerQuiet bool
}

// stateSeen reports whether the call ran alone between snapshots of the
// world: its effect is the difference between them (stateWindow).
func (o *Operation) stateSeen() bool { e := o.effect(); return e != nil && e.seen }

// heldSettle reports whether the Settle before the repeat failed while
// the harness held it, on a server's goroutine (callEffect.heldSettle).
func (o *Operation) heldSettle() bool { e := o.effect(); return e != nil && e.heldSettle }

// stateSettled reports whether the world was let settle around the call
// (Settle).
func (o *Operation) stateSettled() bool { e := o.effect(); return e != nil && e.settled }

// stateWindow returns the snapshots before and after the cluster of the
// call: for a call that ran alone (stateSeen), before and after it.
func (o *Operation) stateWindow() (before, after string) {
	e := o.effect()
	return e.before, e.after
}

// execOrder is, with State, the order in which the call began to run among
// the run's writes (1 for the first); 0 without State.
func (o *Operation) execOrder() int {
	e := o.effect()
	if e == nil {
		return 0
	}
	return e.order
}

// Effective reports whether the call is a write whose effect happened here
// (not replayed by the sink, not a repeat absorbed without effect).
func (o *Operation) Effective() bool {
	return o.Kind == KindWrite && o.Status == StatusSuccess && !o.Replayed && o.Repeat != RepeatAbsorbed
}

// Panic is a recovered panic with the goroutine's stack.
type Panic struct {
	Op    string `json:"op,omitempty"`
	Value string `json:"value"`
	Stack string `json:"stack"`
	// exited: the tool has no error result, and the suite ended the
	// goroutine that called it (Call.Recover).
	exited bool
}

// Trace is everything one run recorded, in start order.
type Trace struct {
	// ID names the run: the scenario's full name in a report.
	ID string `json:"id"`
	// Name is the suite's (the agent's) name; JSON target, as in the
	// AgentIdem report.
	Name string `json:"target"`
	// StartedAt and CompletedAt bracket the run.
	StartedAt   time.Time   `json:"started_at"`
	CompletedAt time.Time   `json:"completed_at"`
	Ops         []Operation `json:"operations"`
	// Panics lists panics in tools or in the agent itself.
	Panics []Panic `json:"panics,omitempty"`
	// Errors lists problems of the run itself (a call refused because it
	// could not be attributed to one run).
	Errors []string `json:"errors,omitempty"`
	// Fault is the fault planned for this run, and Fired whether it fired.
	Fault *Fault `json:"fault,omitempty"`
	Fired bool   `json:"fired,omitempty"`
	// FaultNote says why a planned fault could not fire, if it did not.
	FaultNote string `json:"fault_note,omitempty"`
	// Invocations counts deliveries of the agent in this run.
	Invocations int `json:"invocations"`
	// Notes says how the harness ran what the agent did, where that is
	// worth knowing (a concurrent delivery that went on alone because the
	// other was blocked outside any gate).
	Notes []string `json:"notes,omitempty"`
	// Detached lists the call sites that passed the tool a context that
	// does not come from the agent's; Refused the calls that could not be
	// attributed to a run at all. Unattributed lists the calls made
	// during the run, without its context, by a goroutine another agent's
	// ended run started (a worker pool two tests share): they may have
	// served this run, which could not tell, and did not trace them.
	Detached     []string `json:"detached,omitempty"`
	Refused      []string `json:"refused,omitempty"`
	Unattributed []string `json:"unattributed,omitempty"`

	end string // the State snapshot at the end of the run, if any
	// endSettled says end was taken once a Settle saw the world quiet.
	endSettled bool
	// endStill says end was read again, without a Settle, and had held
	// still (judge.still); landedAfter is how long after the first end
	// snapshot the state last changed.
	endStill bool
	// worldLive says, of the baseline, that Setup left a goroutine
	// running (judge.worldLive).
	worldLive   bool
	landedAfter time.Duration
	// passed holds, in the baseline's trace, the states the end went
	// through after the agent returned, before the last, while it was read
	// again (judge.passed).
	passed []string
	// unsettled says a repeat was left unjudged because an end could not
	// say what the agent left: it had not held still (neverStillNote), or
	// it was read before the world's own change landed (beforeTheWorldNote);
	// or that the end differs from the baseline's in a way the traced
	// calls do not explain (unexplainedEnd). The scenario is inconclusive.
	unsettled bool
	// returned is the State snapshot taken when the last delivery had
	// returned, before the run waited for what the agent left running
	// (judge.noteReturn): equal to end, nothing changed the state after.
	returned string
	// gaps are the changes of the State snapshot outside every traced
	// write (judge.gaps); traceRare.gapsAt says when each began.
	gaps [][2]string
	// rare holds what few runs record (traceRare), nil for most: in the
	// Trace, its 96 bytes took every scenario's trace from the 416-byte
	// size class to the 512-byte one.
	rare *traceRare
}

// traceRare is what few traces hold (Trace.rare). It is written only while
// the trace is made, before the suite judges it.
type traceRare struct {
	// lone is the suite's record of writes that ran alone, in the
	// scenarios judged before this one (untouchedend.go); set on a
	// scenario's trace while it is judged, with State.
	lone *loneWindows
	// refusedOps and unattributedOps name the op of each entry of Refused
	// and Unattributed: a finding's Ops, which group them (GroupKey).
	refusedOps, unattributedOps []string
	// amidLate lists the calls that goroutines an earlier run of the
	// suite left running made during this run, with that run's context
	// (lateAmid), and amidLateOps their ops.
	amidLate, amidLateOps []string
	// handlerSites are the entries of Detached where only handlers of
	// this process serving the agent's requests passed such a context
	// (recorder.noteDetached).
	handlerSites []string
	// serverSites are the entries of Detached where only goroutines
	// Setup started, serving a delivery that waited for them, passed
	// such a context (recorder.noteDetached).
	serverSites []string
	// worldOps and worldSites are the ops and call sites of the calls
	// that workers Setup started made during the run without the agent's
	// context: the world's, run untraced (worldWorker).
	worldOps, worldSites []string
	// gapsAt holds, for each of Trace.gaps, when it began
	// (judge.gapsAt): in the rare part, as few runs' state changes
	// outside their traced writes.
	gapsAt []int
	// worldLag is, in the baseline's trace, how long its world took to
	// carry out by itself what the calls set going (judge.worldLag).
	worldLag time.Duration
	// lateLag is, in the baseline's trace, how long after the last
	// traced write returned its state changed outside every window, with
	// no goroutine of Setup's running (judge.lateLag).
	lateLag time.Duration
	// endBusy is where a goroutine Setup started was still at work
	// (asleep, running) when the wait for the run's end ran out
	// (judge.busyAt): what it carries out may land after the end.
	endBusy string
	// worldAfterReturn says, of the baseline, that the world changed the
	// state after its agent returned, not its own code
	// (judge.worldAfterReturn).
	worldAfterReturn bool
	// reread lists the repeats judged a read-modify-write done again
	// (rmw.go): their other arguments are the second effect, not what
	// tells two effects apart.
	reread []string
	// baseLooked says, of a baseline whose Setup left goroutines running
	// with no Settle given, that they were looked at once its end was
	// read; baseBusy is where one was at work then, "" if none was
	// (worldAtRest). callLag is the longest time a window of it took from
	// its start to close on a change (judge.callLag).
	baseLooked bool
	baseBusy   string
	callLag    time.Duration
	// baseParked is where a goroutine of Setup's running the user's code
	// was blocked then (world.setupParked), "" if none was.
	baseParked string
	// lateRepeated says the state of a run that repeated a write changed
	// after its last write returned (judge.late): where the baseline's
	// never did, the ends cannot say what the repeats did (latelook.go).
	lateRepeated bool
	// endUnread says the run stalled, and its end was never read: a
	// repeat its window showed changing nothing is not judged by counting
	// (judgeRepeatsIn).
	endUnread bool
	// carriedRestless says a delivery that carried the run was let go,
	// with no Settle given, before the state held still (holdCarriedStill):
	// a server in the process may still have been at work for it.
	carriedRestless bool
}

// noTraceRare is the traceRare of a trace that has none: only read.
var noTraceRare traceRare

// odd returns t's rare part to read, noTraceRare when it has none.
func (t *Trace) odd() *traceRare {
	if t.rare == nil {
		return &noTraceRare
	}
	return t.rare
}

// withRare returns t's rare part to write, making it; only while t is
// made.
func (t *Trace) withRare() *traceRare {
	if t.rare == nil {
		t.rare = new(traceRare)
	}
	return t.rare
}

// Calls returns the operations of the op named name.
func (t *Trace) Calls(name string) []Operation {
	var out []Operation
	for _, o := range t.Ops {
		if o.Name == name {
			out = append(out, o)
		}
	}
	return out
}

// Effects counts the effective executions (see Operation.Effective) of the
// op named name.
func (t *Trace) Effects(name string) int {
	n := 0
	for i := range t.Ops {
		if t.Ops[i].Name == name && t.Ops[i].Effective() {
			n++
		}
	}
	return n
}

// EffectsFor counts the effective executions of op name with the given
// canonical identity (as Canonical returns it).
func (t *Trace) EffectsFor(name, identity string) int {
	n := 0
	for i := range t.Ops {
		if t.Ops[i].Name == name && t.Ops[i].Identity == identity && t.Ops[i].Effective() {
			n++
		}
	}
	return n
}

// callRecord is what a Call records while it runs: only what the call
// itself learns. What its Op says (name, kind, parameter names, after=), its
// invocation's number, its id and site are read when the trace is, and
// expand turns the record into an Operation then. Fields named as in
// Operation hold the same values.
type callRecord struct {
	Identity, Entity string
	Result           any
	Error            string
	// start and end are the call's start and completion times as offsets
	// from the run's clock base (recorder.now); end is set when ended is.
	start, end      int64
	Occurrence, Seq int32
	// StartTick and EndTick fit an int32 as Seq does: with an int each,
	// a Call was 376 bytes and a block of maxCallBlock held 32, 33 now.
	StartTick, EndTick int32
	status             callStatus
	observation        callObservation
	ended              bool
	planned            bool // the run's fault targets this call (Call.fault)
	faulted            bool // and it was injected
	Replayed, Detached bool
	// nvals counts the argument values in Call.buf (Call.values).
	nvals uint8
	// returned says Finish was called. Only the goroutine that runs the
	// call (Begin, Start, Finish, Recover) reads or writes it: no lock.
	returned bool
	rare     *callRare
}

// callRare holds what few calls record, allocated on first use (Call.rare).
type callRare struct {
	values   []any  // the arguments of a call with more than Call.buf holds
	heldPast string // the gate at which its deadline ran out (Call.endedAtGate)
	// heldStart is how long the start gate held a call whose context had
	// a deadline, when that was a tenth of what the deadline left it or
	// more, and heldBudget what the deadline left it on arrival
	// (Call.heldAtStart).
	heldStart, heldBudget time.Duration
	identityError         string
	identityPanic         []string
	panic                 *Panic
	viaHTTP               uint64 // the HTTP handler of this process the call was made for (lookup)
	// bySetupServer says a goroutine Setup started made the call, serving
	// a delivery that waits for it, with a context that does not come
	// from the agent's (lookup's setupServer): a consumer of the world's
	// bus. A Settle that fails on its goroutine, before its repeat, is
	// not held against the repeat (judge.before).
	bySetupServer bool
	// served is the call of the invocation whose HTTP request the handler
	// serves (recorder.servedCall), or nil.
	served *Call
	// path is the call site and the frames above it, of a write that
	// failed or came after one that failed in its invocation (notePath).
	path []uintptr
	// sent lists the HTTP requests the call sent through Transport, in
	// the order sent; lostResponse says the lost_response fault took the
	// answer of one of them (transport.RoundTrip).
	sent         []sentRequest
	lostResponse bool
	// writes counts the write requests in sent: the lost_response of a
	// call's r-th (recorder.lostRequest) takes the answer of the r-th.
	writes int
	// more is the trace's opMore of the call, where it needs one: written
	// once, when the trace is read (expand), so that the path of a
	// failed write costs its Operation no allocation of its own (one
	// each in most fault scenarios).
	more opMore
}

// rare returns the call's rare part, making it; the caller holds c.mu or
// owns c alone.
func (c *Call) rare() *callRare {
	if c.rec.rare == nil {
		c.rec.rare = new(callRare)
	}
	return c.rec.rare
}

// callStatus is a Status in a byte; the zero value is StatusRunning.
type callStatus uint8

const (
	statusRunning callStatus = iota
	statusSuccess
	statusFailed
)

var statuses = [...]Status{statusRunning: StatusRunning, statusSuccess: StatusSuccess, statusFailed: StatusFailed}

// callObservation is an Observation in a byte; the zero value is "".
type callObservation uint8

const (
	observationNone callObservation = iota
	observationReceived
	observationLost
	observationFailed
)

var observations = [...]Observation{observationReceived: ObservationReceived, observationLost: ObservationLost, observationFailed: ObservationFailed}

// siteMemo holds the site of the call recorder.expand expanded last, and
// whether it is an adapter's (siteOf, adapterSite): a trace's calls come
// from a few lines, most from the line before's (a loop's), and the two
// lookups in sync.Maps were 1.2% of the CPU time of
// BenchmarkSuite/writes=10 (0.46 of 39.2 s of samples).
type siteMemo struct {
	pc      uintptr
	site    string
	adapter bool
}

func (m *siteMemo) of(pc uintptr) (string, bool) {
	if pc != m.pc {
		*m = siteMemo{pc, siteOf(pc), adapterSite(pc)}
	}
	return m.site, m.adapter
}

// expand writes the Operation c recorded into o, which is zero; the caller
// holds c.mu. Fields are set one by one, only where they are not zero: o
// is in a fresh trace, and a whole-struct copy would pay a write barrier
// over all of it while the GC runs.
func (c *Call) expand(r *recorder, o *Operation, site *siteMemo) {
	op, rec := c.op, &c.rec
	o.ID = c.idIn(r.ids)
	o.Name, o.Kind = op.Name, op.Kind
	o.Args = c.args()
	if rec.Identity != "" {
		o.Identity = rec.Identity
	}
	if op.After != nil {
		o.After = op.After
	}
	if rec.Entity != "" {
		o.Entity = rec.Entity
	}
	if rec.Result != nil {
		o.Result = rec.Result
	}
	if rec.Error != "" {
		o.Error = rec.Error
	}
	o.Status = statuses[rec.status]
	o.Observation = observations[rec.observation]
	o.Replayed = rec.Replayed
	o.Idempotent = op.Idempotent && op.Kind == KindWrite
	o.noError = op.NoError
	o.Invocation = c.inv.n
	o.Occurrence, o.Seq = int(rec.Occurrence), int(rec.Seq)
	o.StartTick, o.EndTick = int(rec.StartTick), int(rec.EndTick)
	o.Detached = rec.Detached
	o.StartedAt = r.at(rec.start)
	if rec.ended {
		o.CompletedAt = r.at(rec.end)
	}
	if rec.faulted {
		o.Fault = c.fault()
	}
	if x := rec.rare; x != nil {
		o.IdentityError, o.IdentityPanic, o.Panic = x.identityError, x.identityPanic, x.panic
		if served := c.parent == nil && x.served != nil; x.path != nil || served || x.sent != nil {
			m := &x.more
			m.path = x.path
			if served {
				m.served = x.served.idIn(r.ids)
			}
			m.sent = slices.Clone(x.sent)
			o.more = m
		}
	}
	if c.pc != 0 {
		o.Site, o.viaAdapter = site.of(c.pc)
	}
	if p := c.parent; p != nil {
		o.Parent = p.idIn(r.ids) // numbered: expand holds r.mu, and numbered every call first
	}
}
