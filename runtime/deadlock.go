package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A scenario whose goroutines wait for each other for good (an agent that,
// after a tool's error, waits on a channel nobody sends on) made no
// progress, and the stall watch waited the whole stall bound to say so: 10
// s per scenario, three scenarios of a one-call agent 37 s, though the
// stall's own message already said that nothing of the scenario could act
// (red team rtV #15). A crashed delivery in that state is taken as gone in
// 200 ms (crash_idle.go).
//
// So the stall watch looks at the scenario's goroutines once it has made
// no progress for deadlockFirst, and decides the stall at once where the
// wait is proven to be for good: at each look, for deadlockIdle at least,
//   - no call of the run is in flight, and none is held at a gate;
//   - every goroutine of the scenario is blocked on a channel, a lock, a
//     condition or a wait group (no select: a case may be a timer or a
//     context's deadline), or is an idle connection of net/http, in the
//     same state at the same place at every look;
//   - the functions of the user's code on their stacks (and the one that
//     started each), and the functions those call, three calls deep, of
//     their own package or of another package of their module (found
//     through the file's imports and go.mod: deadlock_callees.go), set no
//     timer that could end the wait: no time.After, NewTimer, Tick,
//     NewTicker, AfterFunc, context.WithTimeout or WithDeadline, no
//     .Done() or .C receive, no clock's After; a wait in a library's code
//     on a channel is not judged (its timers are not read), nor one whose
//     source file cannot be read, nor one whose function calls a library's
//     function (or a method, where its file imports a library), whose
//     channel may be a timer's the suite did not read;
//   - the code of the scenario's traced calls and of its Setup functions,
//     read the same way, sets no timer that may still be pending, and can
//     be found (scenariocode.go);
//   - no goroutine outside the scenario (one of Setup's, another test's)
//     is running, asleep, in a system call, waiting for the network (but
//     for net/http's idle connections and listeners), or in a select or a
//     channel wait of the user's code or of a library's: any of those may
//     still wake it.
// Known limit: a timer made more than two calls away from the waiting
// function, or in a library's package reached only through a method of a
// type of the module's own (a field of it holding the library's value),
// is not seen: such a wait of more than deadlockIdle is taken for a
// deadlock.
// Nothing in the standard library lists pending timers, so a timer is ruled
// out by reading the code, not the runtime; where any of this does not hold,
// the stall waits for its bound as before. A slow agent is never stalled
// early: a goroutine that runs, sleeps, selects or reads cannot pass.

// deadlockFirst is how long a scenario must make no progress before its
// goroutines are first looked at; deadlockIdle, how long they must be seen
// waiting for good, at every look, before the stall is decided.
const (
	deadlockFirst = 300 * time.Millisecond
	deadlockIdle  = time.Second
)

// deadlockWatch is what the stall watch saw of a stretch without progress
// (recorder.provenDeadlock). Only the watching goroutine uses it.
type deadlockWatch struct {
	sig   string    // the goroutines, states and places at the last look
	since time.Time // when sig was first seen
	looks int       // looks that saw sig
	next  time.Time // when to look again
	// why says, once decided, what the looks saw, and idle how long the
	// scenario had made no progress then.
	why  string
	idle time.Duration
}

// provenDeadlock reports whether the scenario, without progress since
// r.seenAt, waits for good (see above); it looks at the goroutines at most
// every stallAfter/50, and less often while something of the process may
// act. Only the goroutine that watches the scenario calls it.
func (r *recorder) provenDeadlock(now time.Time) bool {
	if r.stallAfter < 3*deadlockIdle || r.world == nil || now.Sub(r.seenAt) < deadlockFirst {
		return false
	}
	r.mu.Lock()
	dw := r.rareLocked().deadlock
	if dw == nil {
		dw = new(deadlockWatch)
		r.rare.deadlock = dw
	}
	r.mu.Unlock()
	if now.Before(dw.next) {
		return false
	}
	sig, ok := r.waitsForGood()
	if !ok {
		// Something may act: look again later, and less often the longer
		// it goes on (a slow answer, a long sleep).
		dw.sig, dw.looks = "", 0
		dw.next = now.Add(max(deadlockFirst, now.Sub(r.seenAt)/4))
		return false
	}
	if sig != dw.sig {
		dw.sig, dw.since, dw.looks = sig, now, 0
	}
	dw.looks++
	dw.next = now.Add(max(r.stallAfter/50, 100*time.Millisecond))
	if dw.looks < 3 || now.Sub(dw.since) < deadlockIdle {
		return false
	}
	dw.idle = now.Sub(r.seenAt).Round(100 * time.Millisecond)
	dw.why = fmt.Sprintf("decided after %s, not the %s of StallTimeout: at %d looks over %s, every goroutine of the scenario waited on a channel, a lock or a condition at the same place, none running, asleep, in a select or waiting for the network, no code on their stacks, nor the calls and Setup of the scenario, sets a timer, and no goroutine outside the scenario was running, asleep or reading the network, so nothing was left to wake them: a deadlock",
		dw.idle, r.stallAfter, dw.looks, now.Sub(dw.since).Round(100*time.Millisecond))
	r.addNoteOnce(earlyStallNote) // scenariocode.go
	return true
}

// deadlockNote is what provenDeadlock saw, once it decided, and how long
// the scenario had made no progress; "" otherwise.
func (r *recorder) deadlockNote() (string, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if dw := r.odd().deadlock; dw != nil {
		return dw.why, dw.idle
	}
	return "", 0
}

// cancelGrace is how long a stalled scenario's agent is given to return
// once cancelled before it is left running: the stall bound, 2 s at most;
// 250 ms after a proven deadlock, where no goroutine of the scenario waits
// on its context or in a select, so cancelling it wakes none of them (a
// context.AfterFunc or a .Done() in their code keeps the stall from being
// proven).
func (r *recorder) cancelGrace() time.Duration {
	if why, _ := r.deadlockNote(); why != "" {
		return 250 * time.Millisecond
	}
	return min(r.stallAfter, 2*time.Second)
}

// foreverStates are the waits that only another goroutine ends.
var foreverStates = map[string]bool{
	"chan receive": true, "chan send": true, "chan receive (nil chan)": true, "chan send (nil chan)": true,
	"select (no cases)": true, "sync.Mutex.Lock": true, "sync.RWMutex.Lock": true, "sync.RWMutex.RLock": true,
	"sync.Cond.Wait": true, "sync.WaitGroup.Wait": true, "semacquire": true,
}

// waitsForGood takes one snapshot of every goroutine and reports whether
// the scenario's all wait for good (see above), with their signature.
func (r *recorder) waitsForGood() (string, bool) {
	if r.callsInFlight() {
		return "", false
	}
	self := goroutineID()
	all := snapshotGoroutines()
	ours := r.world.ours(all, self)
	mine := make(map[uint64]bool, len(ours))
	var sig strings.Builder
	waiting := 0
	for i := range ours {
		g := &ours[i]
		mine[g.id] = true
		switch {
		case g.atGate():
			return "", false
		case g.harnessWait(), g.state == "IO wait" && g.httpIdle(), g.has("(*persistConn).writeLoop"), g.has("(*connReader).backgroundRead"):
			continue
		}
		if !foreverStates[g.state] || g.state == "semacquire" && !g.peerSemaphore() {
			return "", false
		}
		if busy, _ := g.busy(time.Time{}); busy {
			return "", false
		}
		if !g.noTimerNear() {
			return "", false
		}
		waiting++
		fmt.Fprintf(&sig, "%d %s %s;", g.id, g.state, g.where())
	}
	if waiting == 0 || !r.scenarioCodeClear() { // scenariocode.go
		return "", false
	}
	for i := range all {
		g := &all[i]
		if mine[g.id] || g.id == self || g.runtimeWorker() || g.harnessWait() || len(g.funcs) > 0 && strings.HasPrefix(g.funcs[0], "testing.") {
			continue // the testing package's own waits: a test for its subtests, the main goroutine
		}
		switch g.state {
		case "IO wait":
			if !g.httpIdle() {
				return "", false // a reader that may bring what the agent waits for
			}
		case "running", "runnable", "syscall", "sleep", "preempted":
			return "", false
		case "select", "chan receive", "chan send":
			if g.runsTestCode() && (g.state == "select" || !g.noTimerNear()) {
				return "", false // a goroutine of the test's (Setup's) that may send on a timer
			}
			if g.inDependency() {
				return "", false // a library's loop (an in-process broker's delayed delivery), whose timers are not read
			}
			if busy, _ := g.busy(time.Time{}); busy {
				return "", false
			}
		}
	}
	return sig.String(), true
}

// runsTestCode reports whether a frame of g is the user's code (timerFrame),
// the test binary's generated main aside.
func (g *gInfo) runsTestCode() bool {
	for i := range g.funcs {
		if timerFrame(g.funcs[i], g.files[i]) == userCode && !strings.Contains(g.files[i], "_testmain.go:") {
			return true
		}
	}
	return false
}

// inDependency reports whether a frame of g is a dependency's code (a
// module's, not the standard library's nor the user's).
func (g *gInfo) inDependency() bool {
	for i := range g.funcs {
		if timerFrame(g.funcs[i], g.files[i]) == dependencyCode {
			return true
		}
	}
	return false
}

// httpIdle reports whether g, in IO wait, is one of net/http's idle
// connections or listeners: a server waiting for a request or a
// connection, a client's keep-alive connection waiting for the next
// response. Nothing comes on them unless a goroutine of the process asks.
// Other read loops (a message broker's client, a websocket) may bring what
// the agent waits for.
func (g *gInfo) httpIdle() bool {
	if g.has("ServeHTTP") || g.has("serverHandler") {
		return false
	}
	return g.has("net/http.(*conn).serve") || g.has("net/http.(*persistConn).readLoop") ||
		g.has("net.(*TCPListener).Accept") || g.has("net.(*TCPListener).accept") || g.has("net/http.(*Server).Serve")
}

// noTimerNear reports whether no function of the user's code on g's stack,
// nor the one that started g, sets a timer that could end g's wait
// (timerWords), as far as their source, read from disk, shows. A wait in
// a library's code on a channel, or in code whose source cannot be read,
// is not judged: false.
func (g *gInfo) noTimerNear() bool {
	user := 0
	for i := range g.funcs {
		file := g.files[i]
		switch timerFrame(g.funcs[i], file) {
		case dependencyCode:
			if user == 0 && strings.HasPrefix(g.state, "chan ") {
				return false // a library's channel: its timers are not read
			}
			continue
		case otherCode:
			continue
		}
		user++
		if user > 6 {
			break
		}
		text, ok := funcText(file)
		if !ok || timerWords(text) || calleeTimers(file, text) {
			return false
		}
	}
	return user > 0 || !strings.HasPrefix(g.state, "chan ")
}

// timerFrame is frameOf for noTimerNear: the frame that started g counts
// as its function's, and this module's own code (runtime, testkit) is the
// harness's, but for its tests, whose agents are the user's code.
func timerFrame(f, file string) int {
	f = strings.TrimPrefix(f, "created by ")
	own := strings.Contains(f, "agentidem-go/runtime.") || strings.Contains(f, "agentidem-go/testkit.") || strings.Contains(f, "agentidem-go/internal/")
	if own {
		if path, _, _ := strings.Cut(file, ":"); strings.HasSuffix(path, "_test.go") {
			return userCode
		}
		return otherCode
	}
	return frameOf(f, file)
}

// timerWords reports whether src, a function's text, sets or waits on a
// timer or a deadline.
func timerWords(src string) bool {
	for _, w := range [...]string{"time.After", "time.NewTimer", "time.Tick", "time.NewTicker", "AfterFunc", "WithTimeout", "WithDeadline", ".Done()", ".After(", "Timer", "Ticker", "time.Time", "Deadline"} {
		if strings.Contains(src, w) {
			return true
		}
	}
	// A receive from a timer's or a ticker's channel: t.C.
	for i := 0; ; {
		j := strings.Index(src[i:], ".C")
		if j < 0 {
			return false
		}
		i += j + 2
		if i >= len(src) || !isIdentByte(src[i]) {
			return true
		}
	}
}

func isIdentByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// sources caches the lines of the files funcText read.
var sources struct {
	mu    sync.Mutex
	lines map[string][]string // nil: not readable
}

// funcText returns the text of the top-level function (or declaration)
// that holds site, "file.go:N" as a stack shows it: from the line that
// starts it, at column 0, to the line that ends it.
func funcText(site string) (string, bool) {
	path, ln, ok := strings.Cut(site, ":")
	if !ok {
		return "", false
	}
	if i := strings.IndexByte(ln, ' '); i >= 0 {
		ln = ln[:i] // "29 +0x1d"
	}
	n, err := strconv.Atoi(ln)
	if err != nil || n < 1 {
		return "", false
	}
	sources.mu.Lock()
	lines, seen := sources.lines[path]
	if !seen {
		if b, err := os.ReadFile(path); err == nil {
			lines = strings.Split(string(b), "\n")
		}
		if sources.lines == nil {
			sources.lines = map[string][]string{}
		}
		sources.lines[path] = lines
	}
	sources.mu.Unlock()
	if n > len(lines) {
		return "", false
	}
	start := n - 1
	for start > 0 && !topLevel(lines[start]) {
		start--
	}
	if start == n-1 && oneLineFunc(lines[start]) {
		return lines[start], true
	}
	end := n - 1
	for end < len(lines)-1 && !strings.HasPrefix(lines[end], "}") && !(end > n-1 && topLevel(lines[end])) {
		end++
	}
	return strings.Join(slices.Clip(lines[start:end+1]), "\n"), true
}

// oneLineFunc reports whether line is a whole function, as gofmt keeps a
// short one: "func (r *rec) Helper() {}", "func f() int { return 1 }".
// Read to the next line at column 0 that closes a brace, such a function
// took in the function after it, whose timers then counted as its own.
func oneLineFunc(line string) bool {
	return strings.HasPrefix(line, "func ") && strings.HasSuffix(strings.TrimRight(line, " \t"), "}")
}

// topLevel reports whether line starts a top-level declaration.
func topLevel(line string) bool {
	return strings.HasPrefix(line, "func ") || strings.HasPrefix(line, "var ") || strings.HasPrefix(line, "type ")
}

// calledNames returns the names text calls: each identifier followed by
// "(" (a method's name, after its dot, as well).
func calledNames(text string) []string {
	var out []string
	for _, at := range calledNamesAt(text) {
		out = append(out, text[at[0]:at[1]])
	}
	return out
}

// packages caches pkgFuncs.
var packages struct {
	mu    sync.Mutex
	funcs map[string]map[string][]funcBody
}

// funcBody is one function's text and the file that holds it.
type funcBody struct{ text, file string }

// pkgFuncs returns the top-level functions and methods of the Go files in
// dir, by name, as written (gofmt's layout: "func" at the start of a line,
// the closing brace too).
func pkgFuncs(dir string) map[string][]funcBody {
	packages.mu.Lock()
	defer packages.mu.Unlock()
	if m, ok := packages.funcs[dir]; ok {
		return m
	}
	m := map[string][]funcBody{}
	if packages.funcs == nil {
		packages.funcs = map[string]map[string][]funcBody{}
	}
	packages.funcs[dir] = m
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	own := slices.Contains(ownDirs(), dir)
	for _, f := range files {
		if own && !strings.HasSuffix(f, "_test.go") {
			continue // the harness's code, which its own tests' agents call
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			if !strings.HasPrefix(lines[i], "func ") {
				continue
			}
			name := funcName(lines[i])
			end := i
			for end < len(lines)-1 && !strings.HasPrefix(lines[end], "}") && !(end == i && oneLineFunc(lines[i])) {
				end++
			}
			if name != "" {
				m[name] = append(m[name], funcBody{strings.Join(lines[i:end+1], "\n"), f})
			}
			i = end
		}
	}
	return m
}

// ownDirs are the directories of this package and of testkit, as built
// here: their tests' agents are the user's code (timerFrame), the rest is
// the harness's.
var ownDirs = sync.OnceValue(func() []string {
	_, file, _, ok := goruntime.Caller(0)
	if !ok {
		return nil
	}
	dir := filepath.Dir(file)
	return []string{dir, filepath.Join(filepath.Dir(dir), "testkit")}
})

// funcName is the name a "func" line declares: Name of "func Name(" and of
// "func (r *T) Name(".
func funcName(line string) string {
	rest := strings.TrimPrefix(line, "func ")
	if strings.HasPrefix(rest, "(") {
		depth := 0
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				rest = strings.TrimSpace(rest[i+1:])
				break
			}
		}
	}
	i := 0
	for i < len(rest) && isIdentByte(rest[i]) {
		i++
	}
	return rest[:i]
}
