package runtime

import (
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"
)

// crashEnd is a goroutine of a crashed delivery that the suite ended at a
// later call (Call.stopIfCrashed): which delivery, and the program
// counters of its stack when it was ended, innermost first, read as
// functions and lines (frames) only where a stall asks (lockLeftByCrash).
type crashEnd struct {
	gid      uint64
	delivery int
	pcs      []uintptr
	op       string  // the op of the call the crash ended it at
	pc       uintptr // that call's site (siteOf), read where a note names it
}

// endedByCrash records the stack of the calling goroutine, which the crash
// of delivery n is about to end with runtime.Goexit: the evidence a stall
// of the restart on a lock is read against (lockLeftByCrash). Once per
// goroutine the crash ends, in a crash scenario only. The stack is kept as
// program counters: read as functions and lines at once, it was 6% of the
// naive refund's suite (CPU profile, GOMAXPROCS=1), for a stall that
// almost never comes. The goroutine is kept for the process too
// (keepCrashOrigin): a database/sql transaction it began and left open
// outlives the scenario (crashtx.go). op and pc are the call the crash
// ends it at.
func (r *recorder) endedByCrash(n int, op string, pc uintptr) {
	var pcs [64]uintptr
	e := crashEnd{gid: goroutineID(), delivery: n, op: op, pc: pc}
	e.pcs = append([]uintptr(nil), pcs[:goruntime.Callers(2, pcs[:])]...)
	r.mu.Lock()
	x := r.rareLocked()
	x.crashEnds = append(x.crashEnds, e)
	r.mu.Unlock()
	keepCrashOrigin(e, r.name, r.fault)
}

// frames returns the functions on e's stack and their lines ("file:line"),
// innermost first.
func (e *crashEnd) frames() (funcs, sites []string) {
	if len(e.pcs) == 0 {
		return nil, nil
	}
	frames := goruntime.CallersFrames(e.pcs)
	for {
		f, more := frames.Next()
		funcs = append(funcs, f.Function)
		sites = append(sites, f.File+":"+strconv.Itoa(f.Line))
		if !more {
			return funcs, sites
		}
	}
}

// lockLeftByCrash says, when the evidence is there, that the stall of a
// crash scenario is the suite's own: a goroutine of a later delivery is
// blocked on a sync.Mutex or sync.RWMutex, taken in a function F, and the
// suite ended a goroutine of the crashed delivery (runtime.Goexit, where a
// real crash ends the process) while F was on its stack, past the lock:
// the lock it most likely held, which a Goexit does not release unless a
// defer does, and a real crash releases with the process (a red team's
// agent, rtK mutexcrash: a mutex held across a retry loop, unlocked
// without defer). Who holds a sync.Mutex is not recorded anywhere, so the
// evidence is the function, not the lock: an F that took the lock and
// released it before the call the crash stopped, with another goroutine
// holding it, reads the same (a known limit). A stall of a scenario with
// no crash, or of a restart blocked on anything else, is not this, nor one
// where a goroutine of the scenario was running, asleep or waiting for the
// network, which may be what it waits for.
// It returns "" when the evidence is not there.
func (r *recorder) lockLeftByCrash(gs []gInfo) string {
	r.mu.Lock()
	ends := r.odd().crashEnds
	r.mu.Unlock()
	if len(ends) == 0 || r.world == nil {
		return ""
	}
	for i := range gs {
		// A goroutine that may go on by itself, or waits for the
		// network, may be what the scenario waits for: not this.
		g := &gs[i]
		if g.bystander() {
			continue
		}
		if busy, _ := g.busy(time.Time{}); busy || g.state == "IO wait" {
			return ""
		}
	}
	for i := range gs {
		g := &gs[i]
		switch g.state {
		case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock":
		default:
			continue
		}
		caller := -1 // the frame that called Lock
		for j, f := range g.funcs {
			if !strings.HasPrefix(f, "sync.") && !strings.HasPrefix(f, "runtime.") && !strings.HasPrefix(f, "internal/sync.") {
				caller = j
				break
			}
		}
		if caller < 0 {
			continue
		}
		d := r.world.invocationOf(g.id)
		for _, e := range ends {
			if d == 0 || d == e.delivery || aliveIn(gs, e.gid) {
				continue
			}
			funcs, sites := e.frames()
			for j, f := range funcs {
				if f != g.funcs[caller] || !pastIn(sites[j], g.files[caller]) {
					continue
				}
				lock := strings.TrimSuffix(strings.TrimSuffix(g.state, ".Lock"), ".RLock")
				return fmt.Sprintf("delivery %d (goroutine %d) is blocked on a %s at %s, in %s, and the suite had ended goroutine %d of the crashed delivery %d (runtime.Goexit, at its call after the crash) in that same function, at %s, past where it takes the lock: the crashed delivery most likely held the lock then, and nothing released it (a %s is released only by its Unlock, which runs at a Goexit only if deferred); a real crash ends the process, and the lock with it, so the suite could not test the restart, and the scenario is inconclusive; unlock with defer (defer mu.Unlock() right after mu.Lock()), so that the lock is released however the function ends",
					d, g.id, lock, shortSite(g.files[caller]), shortFunc(f), e.gid, e.delivery, shortSite(sites[j]), lock)
			}
		}
	}
	return ""
}

// pastIn reports whether site is a later line of the file of site lock.
func pastIn(site, lock string) bool {
	file, line, ok := cutLine(site)
	lfile, lline, lok := cutLine(lock)
	return ok && lok && file == lfile && line > lline
}

func cutLine(site string) (string, int, bool) {
	i := strings.LastIndexByte(site, ':')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(site[i+1:])
	return site[:i], n, err == nil
}

// bystander reports whether g is no cause of a stall: parked at a gate,
// a wait of the harness's, a connection waiting for its peer (the goroutines
// world.blocked leaves out).
func (g *gInfo) bystander() bool {
	return g.atGate() || g.harnessWait() || g.state == "IO wait" && g.idleConnection() || g.has("(*persistConn).writeLoop") || g.has("(*connReader).backgroundRead")
}

// aliveIn reports whether goroutine id is among gs.
func aliveIn(gs []gInfo, id uint64) bool {
	for _, g := range gs {
		if g.id == id {
			return true
		}
	}
	return false
}

// shortFunc is f without its package path: mutexcrash.(*Agent).RunRetry.
func shortFunc(f string) string {
	if i := strings.LastIndexByte(f, '/'); i >= 0 {
		return f[i+1:]
	}
	return f
}

// exitingByCrash reports whether goroutine gid is one the crash ended
// (endedByCrash: Call.stopIfCrashed is ending it with runtime.Goexit), and
// if so which delivery's crash and at which call. A recover in the
// harness asks it: a panic raised while that goroutine unwinds comes
// from a deferred function that the Goexit ran, and a real crash runs
// none (droppedCrashPanic).
func (r *recorder) exitingByCrash(gid uint64) (crashEnd, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rare == nil {
		return crashEnd{}, false
	}
	for _, e := range r.rare.crashEnds {
		if e.gid == gid {
			return e, true
		}
	}
	return crashEnd{}, false
}

// droppedCrashPanic notes a panic v that a deferred function raised while
// goroutine e.gid unwound from the crash's runtime.Goexit, which the
// harness recovered and does not report: the suite's crash is a Goexit,
// which runs the goroutine's deferred functions, where the process's
// death runs none, and a deferred function written for a normal return
// may panic on a goroutine ended in mid-call (a red team's Eino agent
// run with Stream: the graph runner's deferred end-of-graph callback
// asserts a stream it never got, rtS #5). The panic cannot happen in
// production, so it is not the agent's finding; the note keeps it in
// sight. It is called in the deferred function that recovered v.
func (r *recorder) droppedCrashPanic(e crashEnd, v any) {
	at := ""
	if site := panicSite(); site != "" {
		at = " at " + site
	}
	r.addNoteOnce(fmt.Sprintf("the crash of delivery %d ended goroutine %d (runtime.Goexit, at its call after the crash), and a deferred function panicked while it unwound%s: %v; a real crash runs no deferred code, so the panic is the suite's own and is not reported as the agent's",
		e.delivery, e.gid, at, v))
}
