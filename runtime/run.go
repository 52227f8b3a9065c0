package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// errCrashed ends an invocation that kept calling tools after its injected
// crash.
var errCrashed = fmt.Errorf("invocation crashed: %w", context.Canceled)

// recorder is the state of one active run: the trace being written, the
// planned fault, the gate.
type recorder struct {
	name  string
	fault Fault
	gate  Gate
	clock func() time.Time

	// sched is the gate when it is a scheduler; calls are then numbered
	// at their start gate.
	sched *scheduler

	// goroutines, when not nil, collects the goroutines that made calls
	// (the baseline does, to tell a serial agent from a parallel one).
	goroutines map[uint64]bool

	mu        sync.Mutex
	seq       int
	calls     []*Call
	occ       map[string]int
	fired     bool
	faultNote string
	panics    []Panic
	errs      []string
	invs      int
	current   *invocation // the newest invocation, for calls without a context
	crashed   bool
}

// invocation is one delivery of the agent within a run.
type invocation struct {
	rec    *recorder
	n      int
	cancel context.CancelFunc
	// dead is set when a crash was injected: the worker is gone, so no
	// later call of this invocation may execute.
	dead atomic.Bool
}

type invKey struct{}
type callKey struct{}

// global holds the active recorders, for calls of tools that take no
// context.Context.
var global struct {
	mu   sync.Mutex
	recs []*recorder
}

func newRecorder(name string, f Fault, g Gate) *recorder {
	r := &recorder{name: name, fault: f, gate: g, clock: time.Now, occ: map[string]int{}}
	if s, ok := g.(*scheduler); ok {
		r.sched = s
		s.rec = r
	}
	return r
}

// start makes the recorder active in the process.
func (r *recorder) start() {
	global.mu.Lock()
	global.recs = append(global.recs, r)
	global.mu.Unlock()
	activeRuns.Add(1)
}

// stop makes the recorder inactive.
func (r *recorder) stop() {
	global.mu.Lock()
	for i, x := range global.recs {
		if x == r {
			global.recs = append(global.recs[:i], global.recs[i+1:]...)
			break
		}
	}
	global.mu.Unlock()
	activeRuns.Add(-1)
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
func (r *recorder) invokeNumbered(ctx context.Context, fn func(context.Context) error, n int) (err error, panicked bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	inv := &invocation{rec: r, n: n, cancel: cancel}
	r.mu.Lock()
	if n > r.invs {
		r.invs = n
	}
	r.current = inv
	r.mu.Unlock()
	ctx = context.WithValue(ctx, invKey{}, inv)

	done := make(chan struct{})
	go func() {
		defer close(done)
		returned := false
		defer func() {
			if returned {
				return
			}
			if v := recover(); v != nil {
				r.addPanic(Panic{Value: fmt.Sprint(v), Stack: string(debug.Stack())})
				panicked = true
				err = fmt.Errorf("agent panicked: %v", v)
				return
			}
			if inv.dead.Load() {
				// The crashed invocation tried another call and was
				// stopped there, as a dead worker would be.
				err = errCrashed
				return
			}
			// runtime.Goexit: a tool without an error result panicked.
			panicked = true
			err = fmt.Errorf("agent goroutine exited (runtime.Goexit)")
		}()
		err = fn(ctx)
		returned = true
	}()
	<-done
	return err, panicked
}

func (r *recorder) addPanic(p Panic) {
	r.mu.Lock()
	r.panics = append(r.panics, p)
	r.mu.Unlock()
}

func (r *recorder) addError(msg string) {
	r.mu.Lock()
	r.errs = append(r.errs, msg)
	r.mu.Unlock()
}

// trace returns a snapshot of what was recorded.
func (r *recorder) trace() *Trace {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := &Trace{Name: r.name, Invocations: r.invs, Fired: r.fired, FaultNote: r.faultNote}
	if r.fault.Kind != FaultNone {
		f := r.fault
		t.Fault = &f
	}
	for _, c := range r.calls {
		r.numberLocked(c) // calls that never passed their start gate
	}
	t.Ops = make([]Operation, len(r.calls))
	for i, c := range r.calls {
		c.mu.Lock()
		c.idLocked()
		t.Ops[i] = c.rec
		c.mu.Unlock()
		if c.pc != 0 {
			t.Ops[i].Site = siteOf(c.pc)
		}
	}
	t.Panics = append([]Panic(nil), r.panics...)
	t.Errors = append([]string(nil), r.errs...)
	sort.SliceStable(t.Ops, func(i, j int) bool { return t.Ops[i].Seq < t.Ops[j].Seq })
	batches(t.Ops)
	return t
}

// lookup finds the invocation a call belongs to.
func lookup(ctx context.Context, op *Op) *invocation {
	if ctx != nil {
		if inv, ok := ctx.Value(invKey{}).(*invocation); ok {
			return inv
		}
		return nil
	}
	global.mu.Lock()
	defer global.mu.Unlock()
	switch len(global.recs) {
	case 0:
		return nil
	case 1:
		r := global.recs[0]
		r.mu.Lock()
		inv := r.current
		r.mu.Unlock()
		return inv
	}
	for _, r := range global.recs {
		r.addError(fmt.Sprintf("call of %s refused: it has no context.Context parameter and %d runs are active in this process, so it cannot be attributed; give the tool a context or do not run agents in parallel (t.Parallel)", op.Name, len(global.recs)))
	}
	return nil
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

// goroutineID returns the current goroutine's id, from its stack header.
func goroutineID() uint64 {
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
// running after grace, or "".
func stillAlive(ids map[uint64]bool, grace time.Duration) string {
	deadline := time.Now().Add(grace)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:goruntime.Stack(buf, true)]
		var alive []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			var id uint64
			if _, err := fmt.Sscanf(g, "goroutine %d ", &id); err == nil && ids[id] {
				alive = append(alive, g)
			}
		}
		if len(alive) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			sort.Strings(alive)
			return strings.Join(alive, "\n\n")
		}
		time.Sleep(time.Millisecond)
	}
}

// sites caches the file:line of call-site program counters.
var sites sync.Map // uintptr -> string

func siteOf(pc uintptr) string {
	if s, ok := sites.Load(pc); ok {
		return s.(string)
	}
	frame, _ := goruntime.CallersFrames([]uintptr{pc}).Next()
	s := frame.File + ":" + strconv.Itoa(frame.Line)
	sites.Store(pc, s)
	return s
}
