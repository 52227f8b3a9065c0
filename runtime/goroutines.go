package runtime

import (
	"bytes"
	"fmt"
	"iter"
	"maps"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the real-time stand-in for testing/synctest's quiescence.
//
// A bubble knows exactly when every goroutine of the agent is durably
// blocked, but it cannot host ordinary Go: a goroutine outside the bubble
// that touches a channel made inside it ends the process ("select on
// synctest channel from outside bubble"), and a goroutine blocked on I/O, a
// mutex or a channel made outside the bubble is never durably blocked, so
// the bubble hangs. HTTP clients with keep-alive pools, database/sql,
// channel semaphores at package level and workers started once per test do
// all of these.
//
// So schedules run on real time, and quiescence is read off the goroutines
// themselves: a stack snapshot of the process, of which the goroutines
// created since the scenario began (plus any older goroutine that reached a
// gate) are the scenario's. They are quiet when each of them is parked at a
// gate or blocked on a channel, a select, a lock or a condition, and none is
// running, runnable, in a system call, asleep, waiting on the Go runtime
// (a stop of the world, the snapshot's own included, or a garbage
// collection: see busy), or waiting for the answer of
// an HTTP request (unless an HTTP handler of this process may owe it and
// cannot answer by itself: a call made for its request waits at a gate, or
// it is blocked on a lock or a channel send; see owedAnswers) or for network
// I/O: a tool body's, or, for readGrace at most, one of the agent's own
// code (a response body streamed after its headers, a reply), but not an
// idle connection's or a library's reader loop's. A goroutine blocked on a
// lock or channel only wakes when another goroutine acts, and every
// goroutine that could act is seen in the same snapshot,
// but for goroutines older than the scenario that carry its calls (an MCP
// session's reader): a transport of that kind says when a call or its
// answer is on its way (Sending), and the scenario is not quiet meanwhile.

// gInfo is one goroutine of a stack snapshot.
type gInfo struct {
	id     uint64
	parent uint64 // 0 when not known
	state  string // "chan receive", "running", "IO wait", ...
	funcs  []string
	files  []string // file:line per entry of funcs
	stack  string
}

// stackBufs recycles the buffers of stack dumps. A new buffer is as large
// as the largest dump of the process so far (dumpSize): a buffer too small
// for the dump costs a dump (a stop of the world) per doubling, and a
// collection empties the pool, so that a test binary with a few hundred
// goroutines paid two or three dumps for each snapshot after every
// collection.
var stackBufs = sync.Pool{New: func() any { b := make([]byte, max(1<<16, dumpSize.Load())); return &b }}

// dumpSize is the size of the largest buffer a stack dump needed so far.
var dumpSize atomic.Int64

// snapshotGoroutines parses a stack dump of every goroutine; keep, when not
// nil, chooses the goroutines worth parsing beyond their header.
func snapshotGoroutines() []gInfo { return snapshotSome(nil) }

func snapshotSome(keep func(id, parent uint64) bool) []gInfo {
	if keep == nil {
		return snapshotBlocks(nil)
	}
	return snapshotBlocks(func(id, parent uint64, _ []byte) bool { return keep(id, parent) })
}

// snapshotBlocks is snapshotSome with a keep that may read the block's
// header (headerState).
func snapshotBlocks(keep func(id, parent uint64, block []byte) bool) []gInfo {
	var out []gInfo
	eachGoroutine(func(block []byte) {
		if keep != nil {
			id, parent := headerIDs(block)
			if !keep(id, parent, block) {
				if parent != 0 {
					out = append(out, gInfo{id: id, parent: parent})
				}
				return
			}
		}
		if g, ok := parseGoroutine(string(block)); ok {
			out = append(out, g)
		}
	})
	return out
}

// goroutineIDs adds the id of every goroutine to ids, from a stack dump
// whose frames it does not parse.
func goroutineIDs(ids map[uint64]bool) {
	eachGoroutine(func(block []byte) {
		if id, _ := headerIDs(block); id != 0 {
			ids[id] = true
		}
	})
}

// eachGoroutine calls fn with the block of each goroutine in a stack dump
// of every goroutine; the block is valid only during the call.
func eachGoroutine(fn func(block []byte)) {
	bp := stackBufs.Get().(*[]byte)
	defer stackBufs.Put(bp)
	if n := dumpSize.Load(); int64(len(*bp)) < n {
		*bp = make([]byte, n) // a buffer pooled before a dump needed more
	}
	var buf []byte
	for {
		if testHookStacks != nil {
			testHookStacks()
		}
		buf = *bp
		m := goruntime.Stack(buf, true)
		if m < len(buf) {
			buf = buf[:m]
			break
		}
		*bp = make([]byte, 2*len(buf))
		for n := int64(len(*bp)); ; {
			if old := dumpSize.Load(); n <= old || dumpSize.CompareAndSwap(old, n) {
				break
			}
		}
	}
	for len(buf) > 0 {
		block := buf
		if i := bytes.Index(buf, []byte("\n\n")); i >= 0 {
			block, buf = buf[:i], buf[i+2:]
		} else {
			buf = nil
		}
		fn(block)
	}
}

// testHookStacks, when set, is called before every stack dump of the
// process (a stop of the world), for tests that count them.
var testHookStacks func()

// headerIDs reads a goroutine's id and its parent's from a stack dump block
// without parsing the frames.
func headerIDs(block []byte) (id, parent uint64) {
	rest, ok := bytes.CutPrefix(block, []byte("goroutine "))
	if !ok {
		return 0, 0
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	if i := bytes.LastIndex(block, []byte(" in goroutine ")); i >= 0 {
		for _, c := range block[i+len(" in goroutine "):] {
			if c < '0' || c > '9' {
				break
			}
			parent = parent*10 + uint64(c-'0')
		}
	}
	return id, parent
}

// parseGoroutine reads one goroutine of a stack dump.
func parseGoroutine(block string) (gInfo, bool) {
	header, rest, _ := strings.Cut(block, "\n")
	if !strings.HasPrefix(header, "goroutine ") {
		return gInfo{}, false
	}
	g := gInfo{stack: block}
	idText := header[len("goroutine "):]
	if i := strings.IndexByte(idText, ' '); i >= 0 {
		idText = idText[:i]
	}
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil {
		return gInfo{}, false
	}
	g.id = id
	if i, j := strings.IndexByte(header, '['), strings.LastIndexByte(header, ']'); i >= 0 && j > i {
		st := header[i+1 : j]
		if k := strings.IndexByte(st, ','); k >= 0 {
			st = st[:k] // ", 2 minutes", ", locked to thread"
		}
		g.state = strings.TrimSpace(st)
	}
	lines := strings.Split(rest, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" || strings.HasPrefix(l, "\t") {
			continue
		}
		file := ""
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			file = strings.TrimSpace(lines[i+1])
			if k := strings.LastIndex(file, " +0x"); k >= 0 {
				file = file[:k]
			}
		}
		if strings.HasPrefix(l, "created by ") {
			fn := strings.TrimPrefix(l, "created by ")
			if k := strings.Index(fn, " in goroutine "); k >= 0 {
				g.parent, _ = strconv.ParseUint(fn[k+len(" in goroutine "):], 10, 64)
				fn = fn[:k]
			}
			g.funcs = append(g.funcs, "created by "+fn)
			g.files = append(g.files, file)
			continue
		}
		fn := l
		if k := strings.LastIndexByte(fn, '('); k > 0 {
			fn = fn[:k]
		}
		g.funcs = append(g.funcs, fn)
		g.files = append(g.files, file)
	}
	return g, true
}

// inDatabaseDriver reports whether g is inside a SQL client: database/sql
// (and so GORM and sqlx above it), pgx, lib/pq, the MySQL driver. A wait
// for network I/O there is a statement waiting for the database's answer,
// which may be a wait for a lock another transaction holds (stallAdvice).
func (g *gInfo) inDatabaseDriver() bool {
	return slices.ContainsFunc(g.funcs, func(f string) bool {
		return strings.HasPrefix(f, "database/sql.") || strings.HasPrefix(f, "github.com/jackc/pgx") ||
			strings.HasPrefix(f, "github.com/jackc/pgconn.") || strings.HasPrefix(f, "github.com/lib/pq.") ||
			strings.HasPrefix(f, "github.com/go-sql-driver/mysql.")
	})
}

func (g *gInfo) has(substr string) bool {
	for _, f := range g.funcs {
		if strings.Contains(f, substr) {
			return true
		}
	}
	return false
}

// atGate reports whether g waits at one of the harness's gates.
func (g *gInfo) atGate() bool {
	return g.has("agentidem-go/runtime.(*scheduler).Wait") || g.has("agentidem-go/runtime.(*lockstep).Wait")
}

// runtimeWorker reports whether g is one of the Go runtime's own goroutines
// that run user code (cleanups, finalizers): hidden from stack dumps until
// they do, it is missing from the snapshot a scenario starts with, yet it
// is no goroutine of the scenario.
func (g *gInfo) runtimeWorker() bool {
	return slices.ContainsFunc(g.funcs, func(f string) bool { return f == "runtime.runCleanups" || f == "runtime.runfinq" })
}

// harnessWait reports whether g is the harness waiting for the agent (a
// delivery waiting for its invocation to return), which a stall report
// leaves out.
func (g *gInfo) harnessWait() bool {
	for i, f := range g.funcs {
		if strings.HasPrefix(g.files[i], goroot) {
			continue
		}
		return strings.Contains(f, "agentidem-go/runtime.(*recorder).invokeNumbered") && !strings.Contains(f, "invokeNumbered.func") ||
			strings.Contains(f, "agentidem-go/runtime.(*Suite).")
	}
	return false
}

// timedWaits are functions of libraries that wait in a select on a timer
// (and a context) before they try again: a goroutine blocked there wakes by
// itself, as one in time.Sleep does. SQLite's busy handler (a locked
// database), rate limiters and retry loops.
var timedWaits = []string{
	"modernc.org/sqlite.busyHandler",
	"golang.org/x/time/rate.(*Limiter).wait",
	"github.com/cenkalti/backoff/",
	"github.com/avast/retry-go/",
	"github.com/sethvargo/go-retry.",
}

// retryBackoffs are the functions in which HTTP clients wait, in a select
// on a timer and the caller's context, before they send a request again
// after a 429, a throttle or a 5xx (or, for some, between the polls of a
// waiter): the Stainless-generated SDKs (Anthropic's, OpenAI's), whose
// function is any of <module>/internal/requestconfig (send or Execute, a
// method, in older versions; WaitForDelay in openai-go v3); aws-sdk-go-v2's
// retry middleware (its internal sdk.SleepWithContext) and smithy-go's
// SleepWithContext; hashicorp/go-retryablehttp's Client.Do; Google's
// gax-go Sleep. Those packages' selects are otherwise not parked (each is
// one of infraPrefixes, or parks for a moment only): a delivery in the
// back-off was quiet, and the other went on alone at its gate at once (red
// team rtL, R3: a model API that answers every other request 429 with
// retry-after-ms 5; a check-then-book across two model turns, UNSAFE
// without the limit, was SAFE in 9 of 45 suites; red team rtR #5: the same
// with DynamoDB throttling a GetItem, aws-sdk-go-v2 backing off 30 ms, a
// check-then-act SAFE on 4 of 4 runs). The wait ends by itself, with no
// lock behind it: busy, as time.Sleep is, for as long as it lasts
// (retryBackoff). Retry loops of no particular client (cenkalti/backoff,
// retry-go) are timedWaits instead: what they retry may wait for a lock a
// call parked at a gate holds.
var retryBackoffs = []string{
	"github.com/aws/aws-sdk-go-v2/internal/sdk.sleepWithContext",
	"github.com/aws/smithy-go/time.SleepWithContext",
	"github.com/hashicorp/go-retryablehttp.(*Client).Do",
	"github.com/googleapis/gax-go/v2.Sleep",
}

// modelAPIClients are the module paths of the Stainless-generated SDKs,
// whose back-off is a function of their internal/requestconfig package
// (retryBackoffs).
var modelAPIClients = []string{
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/openai/openai-go",
}

// retryBackoffWhy is why a goroutine in a retry back-off is busy.
const retryBackoffWhy = "in its API client's retry back-off (a 429, a throttle or a 5xx answered), asleep on a timer"

// retryBackoff reports whether f, the function a goroutine is blocked in
// (in a select), is the back-off of one of retryBackoffs.
func retryBackoff(f string) bool {
	for _, m := range modelAPIClients {
		if rest, ok := strings.CutPrefix(f, m); ok && strings.Contains(rest, "/internal/requestconfig.") {
			return true
		}
	}
	for _, b := range retryBackoffs {
		if f == b || strings.HasPrefix(f, b+"(") || strings.HasPrefix(f, b+"[") {
			return true
		}
	}
	return false
}

// retryingWait says, when g waits in a back-off after which it sends a
// request again (a retry, not a waiter's poll), which back-off, by its
// function and place: an aws-sdk-go-v2 sleep under its retry middleware, a
// Stainless SDK's under RequestConfig.Execute, go-retryablehttp's
// Client.Do, a gax-go sleep under its Invoke, a retry library's wait. ""
// otherwise.
func (g *gInfo) retryingWait() string {
	if c := sleepBackoff(g.state, g.funcs); c != "" { // sdksleep.go
		return c + ", at " + g.where()
	}
	if len(g.funcs) == 0 || g.state != "select" && g.state != "chan receive" {
		return ""
	}
	f := g.funcs[0]
	retry := false
	switch {
	case retryBackoff(f) && g.state == "select":
		retry = strings.HasPrefix(f, "github.com/hashicorp/go-retryablehttp.") || slices.ContainsFunc(g.funcs, func(c string) bool {
			return slices.ContainsFunc(retryCallers, func(r string) bool { return strings.Contains(c, r) })
		})
	case timedWait(f):
		retry = strings.HasPrefix(f, "github.com/cenkalti/backoff/") || strings.HasPrefix(f, "github.com/avast/retry-go/") || strings.HasPrefix(f, "github.com/sethvargo/go-retry.")
	}
	if !retry {
		return ""
	}
	return backoffClient(f) + ", at " + g.where()
}

// retryCallers are the frames above a back-off of retryBackoffs that make
// it a retry's (a waiter's polls sleep in the same functions).
var retryCallers = []string{"/aws/retry.", "/internal/requestconfig.(*RequestConfig).", "gax-go/v2.invoke", "gax-go/v2.Invoke"}

// noteRetrying records that g was seen in a retry's back-off
// (retryingWait).
func (w *world) noteRetrying(g *gInfo) {
	where := g.retryingWait()
	if where == "" {
		return
	}
	w.mu.Lock()
	if w.retrying == nil {
		w.retrying = map[uint64]string{}
	}
	w.retrying[g.id] = where
	w.anyRetrying.Store(true)
	w.mu.Unlock()
}

// takeRetrying returns where goroutine gid was seen in a retry's back-off
// since the last call, and forgets it.
func (w *world) takeRetrying(gid uint64) string {
	// Most worlds never see a back-off (a stack snapshot finds one only
	// where a client retries inside a tool): a write then takes no lock
	// at its start and its finish for an empty map. A note stored after
	// the flag was read is one a lock taken first would have missed too,
	// as it may have before. Two locks a write fewer; the ten-write
	// suite's takeRetrying was 1.5% of its CPU profile (GOMAXPROCS=1,
	// docs/performance.md, fourteenth sitting).
	if !w.anyRetrying.Load() {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	where := w.retrying[gid]
	delete(w.retrying, gid)
	return where
}

// backoffClient names the client whose back-off f is (retryBackoff), for
// the messages: its function without the package's directory.
func backoffClient(f string) string {
	if i := strings.LastIndex(f, "/"); i >= 0 {
		return f[i+1:]
	}
	return f
}

// timedWaitWhy is why a goroutine in one of timedWaits is busy; world.quiet
// lets it count so for timedGrace only: the wait may be for a lock that a
// call parked at a gate holds (a transaction open across a traced call),
// which no sleep ends.
const timedWaitWhy = "asleep in a timed wait"

// timedGrace is how long a goroutine seen in one of timedWaits counts as
// busy: longer than the sleeps of SQLite's busy handler between tries
// (up to 25 ms before 100 ms have passed).
const timedGrace = 50 * time.Millisecond

// parkedWhy is why a goroutine of the agent's own code, blocked on a
// channel or a select, counts as busy for parkedGrace (world.quiet).
const parkedWhy = "parked on a channel of its own (a timer, perhaps)"

// parkedGrace is how long a goroutine of the scenario counts as busy when it
// waits in a select or a channel receive of the agent's own code, has no
// call at a gate below it, and is no invocation's own goroutine (parked).
// Its stack cannot show whether a timer wakes it (a select on time.After,
// a stagger before a dependent call, a rate limiter of the agent's own):
// closing a round at once, the scheduler ran the other calls of the turn
// to their end first, and a dependent call the agent dispatched at once
// but staggered by 3 ms was never in flight with its prerequisite (a
// missed dependent_calls_concurrent, the verdict SAFE). A goroutine that
// waits for something only a held call would do (a channel its caller
// closes after the call) costs the grace once, and then counts as quiet.
const parkedGrace = 10 * time.Millisecond

// parked reports whether g waits in a select or a channel receive whose
// frame is the agent's code: no package of the standard library, of this
// module's harness (runtime, testkit, adapters, idem, otel), or of the
// libraries and transports listed in infraPrefixes, whose goroutines park
// on channels for reasons of their own (connection pools, sessions).
func (g *gInfo) parked() bool {
	// In a bubble, the state says that the block is durable: a timer of
	// the bubble may still end it.
	if st := strings.TrimSuffix(g.state, " (durable)"); (st != "select" && st != "chan receive") || len(g.funcs) == 0 {
		return false
	}
	pkg := funcPackage(g.funcs[0])
	if h, ok := strings.CutPrefix(pkg, "github.com/agentidem/agentidem-go/"); ok {
		if adapterPackage(pkg) {
			return false
		}
		for _, p := range []string{"runtime", "testkit", "idem", "otel", "internal"} {
			if h == p || strings.HasPrefix(h, p+"/") {
				return false
			}
		}
		return true // the examples, the tests' agents
	}
	for _, p := range infraPrefixes {
		if strings.HasPrefix(pkg, p) {
			return false
		}
	}
	first, _, _ := strings.Cut(pkg, "/")
	if strings.Contains(first, ".") {
		return true // a module's package: github.com/...
	}
	// No dot in the first element: the standard library (net/http,
	// context), or package main, or a module whose path has none (module
	// shop, its package shop/store: a monorepo's, a test module's), which
	// are the agent's. The standard library's packages are known by their
	// first element; shop/store was taken for one of them, and a select
	// of its tool body was not seen as the agent's (red team, /tmp/rt26
	// v1: under VirtualTime a lock held across it ended the test binary).
	return !stdTop(first)
}

// infraPrefixes are packages outside the standard library whose goroutines
// park on channels for reasons of their own.
var infraPrefixes = []string{"golang.org/x/", "google.golang.org/", "github.com/jackc/", "modernc.org/", "go.opentelemetry.io/", "github.com/modelcontextprotocol/", "github.com/mark3labs/", "github.com/cloudwego/", "github.com/anthropics/"}

// stdTop reports whether first, the first element of a package path
// with no dot in it, is that of the standard library's packages (net of
// net/http, the runtime's internal ones, vendor of its vendored ones).
func stdTop(first string) bool {
	if stdPackage(first) {
		return true
	}
	switch first {
	case "archive", "compress", "container", "database", "debug", "encoding", "go", "index", "internal", "text", "vendor", "cmd", "builtin":
		return true
	}
	return false
}

// stdPackage reports whether a package whose path has no slash is one of
// the standard library's.
func stdPackage(p string) bool {
	switch p {
	case "bufio", "bytes", "cmp", "context", "crypto", "embed", "errors", "expvar", "flag", "fmt", "hash", "html", "image", "io", "iter", "log", "maps", "math", "mime", "net", "os", "path", "plugin", "reflect", "regexp", "runtime", "slices", "sort", "strconv", "strings", "structs", "sync", "syscall", "testing", "time", "unicode", "unique", "unsafe", "weak":
		return true
	}
	return false
}

// retryLoop reports whether f, one of timedWaits, is a retry loop's or a
// rate limiter's wait (not SQLite's busy handler, which waits for a lock).
func retryLoop(f string) bool {
	return timedWait(f) && !strings.HasPrefix(f, "modernc.org/sqlite.")
}

// timedWait reports whether f, the function a goroutine is blocked in, is
// one of timedWaits.
func timedWait(f string) bool {
	for _, w := range timedWaits {
		if strings.HasPrefix(f, w) {
			return true
		}
	}
	return false
}

// bodyWait is why a tool body blocked on a channel, lock or condition
// counts as busy (within bodyGrace).
const bodyWait = "in a tool body"

// heldCalls is what the calls parked at gates excuse in a snapshot
// (world.quiet).
type heldCalls struct {
	// handlers are the goroutines running the HTTP handlers of this
	// process with a call parked at a gate (heldAtGates).
	handlers []uint64
	// served are the invocations of the calls parked at gates that a
	// server in the process serves the agent with (Served, heldAtGates): one
	// entry per call.
	served []int
	// arrivals are the times the calls parked at gates reached them,
	// earliest first, on real time (scheduler.Wait).
	arrivals []time.Time
}

// arrivedSince reports whether a call parked at a gate reached it after
// since, at least arrivalSettle ago, one that excused no body yet (*n of
// them did, the latest ones): each excuses one tool body. The settle lets
// a body that hands its work to goroutines that are not the scenario's (a
// pool started before the suite) see all of them reach their gates before
// it counts as waiting, so that their calls form one round. Bodies are not
// matched with arrivals optimally (an early body may take the arrival a
// later one needed, which then waits out its grace): that only slows a
// schedule down.
func (h heldCalls) arrivedSince(since time.Time, n *int) bool {
	for i := len(h.arrivals) - 1 - *n; i >= 0; i-- { // from the latest arrival not counted yet
		if !h.arrivals[i].After(since) {
			return false
		}
		if time.Since(h.arrivals[i]) >= arrivalSettle {
			*n = len(h.arrivals) - i
			return true
		}
	}
	return false
}

// arrivalSettle is how long a call must have been parked at its gate to
// excuse a tool body waiting for it (arrivedSince).
const arrivalSettle = 10 * time.Millisecond

// bodyGrace is how long a tool body blocked on a channel, lock or
// condition still counts as busy: long enough for a worker to answer it,
// short enough that a body waiting on a call held at a gate (which only
// the scheduler can release) does not hold the schedule up for long.
const bodyGrace = 100 * time.Millisecond

// busy says whether g may still act without another goroutine acting
// first, and why. since is when g's tool body began, if g is running one
// (a call released at its start gate and not yet at its finish gate).
func (g *gInfo) busy(since time.Time) (bool, string) {
	if sleepBackoff(g.state, g.funcs) != "" { // sdksleep.go
		return true, retryBackoffWhy
	}
	switch g.state {
	case "running", "runnable", "syscall", "sleep", "preempted", "copystack", "GC assist wait", "GC assist marking", "GC worker (active)",
		// Waits that the Go runtime ends by itself: for a collection,
		// or while g does the runtime's work of stopping the world.
		"wait for GC cycle", "GC weak to strong wait", "stopping the world", "garbage collection", "garbage collection scan", "GC mark termination", "flushing proc caches", "trace goroutine status", "dumping heap", "debug call":
		return true, g.state
	case "semacquire":
		if !g.peerSemaphore() {
			return true, "waiting for the Go runtime"
		}
	case "IO wait":
		switch {
		case !since.IsZero():
			return true, ioInTool
		case g.idleConnection():
			return false, ""
		case g.runsUserCode():
			// The agent's own code waits for what the network brings:
			// a response body streamed after its headers (io.ReadAll
			// of it), a reply on a raw connection. The answer is
			// coming, and what the agent does with it (a call) follows:
			// taken for quiet, the scheduler played the calls of the
			// round without it, and the call came after them, never in
			// flight with them. Counts so for readGrace (world.quiet):
			// a goroutine that reads for as long as the agent runs (a
			// websocket's loop) waits for no answer.
			return true, ioAwaited
		}
		// A loop of some client library waiting for its next message
		// (a gRPC transport, an MCP SDK's event stream reader), with no
		// frame of the user's code: nobody here waits for it.
		return false, ""
	}
	if g.readsHTTP2Body() && g.runsUserCode() {
		// Reading an HTTP/2 response body is network I/O too, though g
		// waits on a sync.Cond (readsHTTP2Body). Inside a tool body as
		// well: a body waiting for its answer this way counted as busy
		// for bodyGrace only, a tenth of readGrace.
		return true, ioAwaited
	}
	// Blocked on a channel, select, lock or condition: quiet, unless it is
	// a timed wait of a library that retries or an API client's retry
	// back-off (asleep, as in time.Sleep), a client waiting for an answer
	// that network I/O will bring, or a tool body that began a moment ago
	// (a worker may answer it).
	if (g.state == "select" || g.state == "chan receive") && len(g.funcs) > 0 && timedWait(g.funcs[0]) {
		return true, timedWaitWhy
	}
	if g.state == "select" && len(g.funcs) > 0 && retryBackoff(g.funcs[0]) {
		return true, retryBackoffWhy
	}
	for _, f := range g.funcs {
		switch {
		case strings.HasPrefix(f, "net/http.(*Transport).getConn"),
			strings.HasPrefix(f, "net.(*Resolver)."):
			// Not sent yet: no handler can owe it an answer.
			return true, httpConnecting
		case awaitingHTTP(f):
			return true, httpAwaiting
		case strings.HasPrefix(f, "net/http.(*bodyEOFSignal)."):
			// At an HTTP/1 response body's end (or closing it early),
			// g waits on a channel for the transport's read loop to
			// take the connection back, which it does by itself. Taken
			// for quiet, a loaded machine that ran the read loop late
			// let the other delivery go on alone, and a check-then-book
			// over HTTP was missed (TestReaderAtAnHTTPBodysEndIsBusy).
			return true, httpBodyEnd
		}
	}
	if !since.IsZero() && time.Since(since) < bodyGrace {
		return true, bodyWait
	}
	return false, ""
}

// peerSemaphore reports whether g, in state "semacquire", waits on a
// semaphore that another goroutine releases: a file descriptor's lock
// (internal/poll), or package sync's. Any other is the Go runtime's own
// (a stop of the world, such as the stack dump that reads quiescence; the
// start of a garbage collection, which an allocation may wait for;
// runtime/metrics), released by the runtime whatever the agent does:
// quiet as it looks, g then goes on by itself. The runtime's frames are
// not in the dump, so g's first frame is the call that waits: the
// package's semaphore function, or the allocation or call into the
// runtime.
func (g *gInfo) peerSemaphore() bool {
	for _, f := range g.funcs {
		if strings.HasPrefix(f, "runtime.") {
			continue
		}
		return f == "internal/poll.runtime_Semacquire" || f == "sync.runtime_Semacquire"
	}
	return false
}

// heldAtGates returns what the calls parked at gates excuse (arrivals aside):
// the goroutines running the HTTP handlers of this process whose calls are
// among calls, each once however many calls it made (a handler that fans
// out to two stores owes one answer), and, for each call a server in the
// process serves the agent with (Served) that was not made inside another
// such call, the invocation it serves: its client waits for the answer.
func heldAtGates(calls iter.Seq[*Call]) heldCalls {
	var h heldCalls
	for c := range calls {
		var via uint64
		c.mu.Lock()
		if c.rec.rare != nil {
			via = c.rec.rare.viaHTTP
		}
		c.mu.Unlock()
		if via != 0 && !slices.Contains(h.handlers, via) {
			h.handlers = append(h.handlers, via)
		}
		if isServed(c.Context) && (c.parent == nil || !isServed(c.parent.Context)) {
			h.served = append(h.served, c.inv.n)
		}
	}
	return h
}

// handsOff reports whether a goroutine in state (as a stack dump's header
// says it) waits for another goroutine to hand it something that no timer
// and no network I/O hands it: a sync.Mutex or sync.RWMutex, or room in a
// channel (a channel semaphore, a full queue). A receive or a select may
// wait for a timer's channel (time.After) and ends by itself: not these.
func handsOff(state string) bool {
	switch state {
	case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock", "chan send":
		return true
	}
	return false
}

// headerState reads a goroutine's state from a stack dump block without
// parsing the frames: "chan send" from "goroutine 7 [chan send, 2
// minutes]:".
func headerState(block []byte) string {
	header, _, _ := bytes.Cut(block, []byte("\n"))
	i, j := bytes.IndexByte(header, '['), bytes.LastIndexByte(header, ']')
	if i < 0 || j <= i {
		return ""
	}
	st := header[i+1 : j]
	if k := bytes.IndexByte(st, ','); k >= 0 {
		st = st[:k]
	}
	return string(bytes.TrimSpace(st))
}

// idleServerConn reports whether g is an HTTP server's connection waiting
// for its next request.
func idleServerConn(g *gInfo) bool {
	return g.state == "IO wait" && g.has("net/http.(*conn).serve") && g.idleConnection()
}

// servedOverHTTP returns the goroutine of an HTTP server connection of this
// process that goroutine gid descends from (a handler's, or one a handler
// started, running after it returned), or 0.
func servedOverHTTP(gid uint64) uint64 {
	all := snapshotGoroutines()
	byID := make(map[uint64]*gInfo, len(all))
	for i := range all {
		byID[all[i].id] = &all[i]
	}
	for i := 0; i < 64 && gid != 0; i++ {
		g := byID[gid]
		if g == nil {
			return 0
		}
		if g.httpHandler() || g.has("net/http.(*conn).serve") || g.has("http2serverConn).serve") || g.has("http2.(*serverConn).serve") {
			return gid
		}
		gid = g.parent
	}
	return 0
}

// httpHandler reports whether g runs an HTTP handler of this process: one
// of net/http's, or of a gRPC server's. google.golang.org/grpc serves over
// an HTTP/2 transport of its own, with none of net/http's frames, and runs
// each handler on a goroutine of its own (Server.handleStream): told
// apart from the process's other goroutines, the handler's write was a
// sibling of the agent's call whose request it serves, not nested in it,
// and a correct agent whose tool sends an idempotency key to an
// in-process gRPC service was UNSAFE with State, ten runs in ten (red
// team rtN F1). By frame names: this package imports the standard
// library only. The client's wait is told alike (awaitingRPC).
func (g *gInfo) httpHandler() bool {
	return g.has("net/http.serverHandler.ServeHTTP") || g.has("net/http.(*http2serverConn).runHandler") || g.has("golang.org/x/net/http2.(*serverConn).runHandler") ||
		g.has("google.golang.org/grpc.(*Server).handleStream") || g.has("google.golang.org/grpc.(*Server).process")
}

// idleConnection reports whether g, in IO wait, is a connection or listener
// loop waiting for someone else's next move (an idle keep-alive connection,
// a server waiting for a request or a connection), not a call in progress.
func (g *gInfo) idleConnection() bool {
	if g.has("ServeHTTP") || g.has("serverHandler") {
		return false // a handler doing I/O of its own
	}
	for _, f := range g.funcs {
		switch {
		case strings.Contains(f, "(*persistConn).readLoop"),
			strings.Contains(f, "(*conn).serve"),
			strings.Contains(f, ").Accept"),
			strings.Contains(f, ").accept"),
			strings.Contains(f, "readFrames"),
			strings.Contains(f, "clientConnReadLoop"),
			strings.Contains(f, "ReadLoop"),
			strings.Contains(f, "readLoop"):
			return true
		}
	}
	return false
}

// where is the first frame of g in the user's code (frameOf), else the
// first one of a dependency, else the first one outside the standard
// library: the place a person looks at.
func (g *gInfo) where() string {
	best := ""
	for i := range g.funcs {
		switch frameOf(g.funcs[i], g.files[i]) {
		case userCode:
			return shortSite(g.files[i])
		case dependencyCode:
			if best == "" {
				best = libSite(g.files[i]) // libwaits.go
			}
		}
	}
	for i := 0; best == "" && i < len(g.files); i++ {
		if g.files[i] != "" && !strings.HasPrefix(g.files[i], goroot) && !strings.HasPrefix(g.funcs[i], "created by ") {
			best = shortSite(g.files[i])
		}
	}
	if best == "" && len(g.files) > 0 {
		best = shortSite(g.files[0])
	}
	return best
}

// whereUp is where, followed by up to n-1 frames of the user's code that
// called it, each with its function: "server.go:32 in
// (*Server).Snapshot, called from hang_test.go:15 in pollingAgent".
// Only where itself when it is the only frame of the user's code.
func (g *gInfo) whereUp(n int) string {
	var parts []string
	for i := range g.funcs {
		if len(parts) == n {
			break
		}
		if frameOf(g.funcs[i], g.files[i]) != userCode {
			continue
		}
		f := shortFunc(g.funcs[i])
		if _, after, ok := strings.Cut(f, "."); ok {
			f = after // the package's name, which the file names already
		}
		parts = append(parts, shortSite(g.files[i])+" in "+f)
	}
	if len(parts) < 2 {
		return g.where()
	}
	return strings.Join(parts, ", called from ")
}

// The kinds of a stack frame (frameOf).
const (
	// otherCode: the standard library, this package, a wrapper the
	// compiler made, or the line that names the goroutine's creator.
	otherCode = iota
	// dependencyCode: a module the program depends on, in the module
	// cache or vendored.
	dependencyCode
	// userCode: the user's code.
	userCode
)

// frameOf tells what a frame of a stack dump runs, by its function f and
// its file: the user's code is a file outside GOROOT and the module cache,
// of a function not of this package. A goroutine's creator is no frame of
// its own: a library's reader loop started from the agent's code ("created
// by agent.Connect") runs none of it.
func frameOf(f, file string) int {
	switch {
	case strings.HasPrefix(f, "created by "), file == "", strings.HasPrefix(file, goroot),
		strings.HasPrefix(file, "<autogenerated>"), strings.Contains(f, "agentidem-go/runtime."):
		return otherCode
	case strings.Contains(file, "/pkg/mod/"), strings.Contains(file, "/vendor/"):
		return dependencyCode
	}
	return userCode
}

// runsUserCode reports whether a frame of g is the user's code (frameOf):
// whether g is a goroutine of the agent's, or of a library whose callback
// or handler of the user's code it runs, not a library's loop.
func (g *gInfo) runsUserCode() bool {
	for i := range g.funcs {
		if frameOf(g.funcs[i], g.files[i]) == userCode {
			return true
		}
	}
	return false
}

// readsHTTP2Body reports whether g waits for the body of an HTTP/2
// response (or request) in the stream's pipe: the standard library's
// bundled copy of x/net/http2, or x/net/http2 itself. The wait is on a
// sync.Cond, which the connection's read loop signals as data frames come:
// network I/O that g's state does not show.
func (g *gInfo) readsHTTP2Body() bool {
	return slices.ContainsFunc(g.funcs, func(f string) bool {
		return f == "net/http.(*http2pipe).Read" || strings.HasSuffix(f, "/http2.(*pipe).Read")
	})
}

// goroot is where the standard library's files are, as stack traces name
// them.
var goroot = func() string {
	if r := goruntime.GOROOT(); r != "" {
		return r + "/src/"
	}
	return "\x00"
}()

// world is the scenario's view of the process's goroutines: which are the
// scenario's, and which invocation each belongs to.
type world struct {
	mu     sync.Mutex
	before map[uint64]bool // goroutines that existed when the scenario began
	// beforeCreated is the process's count of created goroutines read
	// just before before was taken (0: unknown).
	beforeCreated uint64
	visitor       map[uint64]bool // older goroutines that reached a gate
	parent        map[uint64]uint64
	roots         rootNums // invocation goroutine -> invocation number
	network       string   // the first sign of network I/O among ours
	inBody        map[uint64]time.Time
	inTimed       map[uint64]time.Time // goroutines seen in a timed wait, since when (seenSince)
	inRead        map[uint64]time.Time // goroutines seen waiting for network I/O of the agent's (ioAwaited), since when
	readLast      map[uint64]time.Time // when each of inRead was last seen in that wait (keepReading)
	// retrying are the goroutines seen in an HTTP client's or a retry
	// library's back-off before it sends a request again (retryingWait),
	// with where: the call whose body runs on one takes it when it
	// finishes (takeRetrying), and forgets it when it starts.
	retrying    map[uint64]string
	anyRetrying atomic.Bool // retrying has had an entry (takeRetrying)
	// loops are the suite's places of reads taken for loops (readLoops);
	// nil for a world of no suite. readNotes say which reads of this
	// scenario were taken so, for its trace.
	loops     *readLoops
	lapsedAt  map[string]bool // the places of reads that lapsed in this scenario (lapsed)
	readNotes []string
	// stallAfter is the scenario's stall bound (recorder.stallAfter),
	// which cuts readGrace (readGraceUnder); 0 when none applies.
	stallAfter time.Duration
	inParked   map[uint64]parkedAt // goroutines seen parked (gInfo.parked), where and since when
	// hooks are the goroutines Setup ran in (Suite.callHook): what
	// descends from them, or from a goroutine older than the scenario
	// that made no call, is the world's (worldsLocked). worldParked is,
	// per site, when a goroutine of the world was first seen parked
	// there, and worldGraced the sites a bubble's clock ran parkedGrace
	// for (parkedAgent). A scenario's one Setup makes one entry, kept in
	// hookBuf: a map was an allocation a scenario, and with its insert
	// 1.2% of the ten-write suite's CPU profile (GOMAXPROCS=1,
	// docs/performance.md, fourteenth sitting).
	hooks       []uint64
	hookBuf     [1]uint64
	worldParked map[string]time.Time
	worldGraced map[string]bool
	// worldBusy is since when every look for quiet found only goroutines
	// of the world busy (worlds); zero when it did not.
	worldBusy time.Time

	// quietSet and quietCreated are what the last quiet snapshot saw
	// (quietgates.go); quietSet is nil when it cannot be relied on.
	// quietMade is made then.
	quietSet     []uint64
	quietCreated uint64
	quietMade    int

	// The goroutines the harness starts for a scheduled run, accounted
	// for when counted is set (quietgates.go): made counts them (each is
	// started under mu), waiting those blocked until an invocation that
	// has not returned returns, exits those that ended, rootsDone the
	// invocations' own goroutines that returned.
	counted                         bool
	made, waiting, exits, rootsDone int
	// spawned counts the harness's goroutines started outside made
	// (spawn).
	spawned int
	// setupCode is where the scenario's Setup functions' code is, which
	// the stall watch reads (scenariocode.go).
	setupCode []string
}

// newWorld takes the world of a scenario. Only a scenario with gates reads
// quiescence, which needs every goroutine that existed before it (a stack
// snapshot of the process, the costliest step of a short scenario); a
// scenario without gates (gated false) skips the snapshot and counts as its
// own the goroutines that descend from its invocations, which is what a
// stall report of it names.
func newWorld(gated bool) *world {
	// The maps are made when first written: most scenarios write only
	// roots, and read the others empty.
	w := &world{}
	if !gated {
		return w
	}
	before, created, known := goroutinesBefore()
	w.before = before
	if known {
		w.beforeCreated = created
		// The scenario has no goroutine yet: it is quiet (quietgates.go).
		w.quietSet, w.quietCreated = []uint64{}, created
	}
	return w
}

// stillBefore returns a copy of before when no goroutine but the
// harness's own was created since it was taken (Setup, for one, started
// none): before then holds every goroutine there now that the harness did
// not start. It returns nil when that cannot be told.
func (w *world) stillBefore() map[uint64]bool {
	now, ok := goroutinesCreated()
	w.mu.Lock()
	defer w.mu.Unlock()
	if !ok || w.before == nil || w.beforeCreated == 0 || now-w.beforeCreated != uint64(w.made) {
		return nil
	}
	return maps.Clone(w.before)
}

// root records gid as the goroutine of invocation n.
func (w *world) root(gid uint64, n int) {
	w.mu.Lock()
	w.roots.set(gid, n)
	w.mu.Unlock()
}

// body records that goroutine gid runs a tool body from now (start true)
// or no longer (start false).
func (w *world) body(gid uint64, start bool) {
	if gid == 0 {
		return
	}
	w.mu.Lock()
	if start {
		if w.inBody == nil {
			w.inBody = map[uint64]time.Time{}
		}
		w.inBody[gid] = time.Now()
	} else {
		delete(w.inBody, gid)
	}
	w.mu.Unlock()
}

// seenSince returns when goroutine gid was first seen in the wait that *m
// records (inTimed, inRead), noting now if it was not.
func (w *world) seenSince(m *map[uint64]time.Time, gid uint64) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := (*m)[gid]
	if !ok {
		t = time.Now()
		if *m == nil {
			*m = map[uint64]time.Time{}
		}
		(*m)[gid] = t
	}
	return t
}

// keepSeen forgets when the goroutines not in ids were first seen in the
// wait that m records: a later wait of theirs has its grace again.
func (w *world) keepSeen(m map[uint64]time.Time, ids []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keepOnly(m, ids)
}

// sawReading notes that goroutine gid was seen waiting for network I/O
// now (keepReading).
func (w *world) sawReading(gid uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.readLast == nil {
		w.readLast = map[uint64]time.Time{}
	}
	w.readLast[gid] = time.Now()
}

// keepReading forgets when the goroutines not in ids were first seen
// waiting for network I/O, as keepSeen does, unless one was seen in such
// a wait within readGap: a loop that reads again and again (a consumer's
// poll with a 50 ms block, a subscription's) spends a moment between two
// reads in its client's own code, in a wait that counts as quiet (a
// circuit breaker's select). Forgotten there, each read had its grace
// afresh, and where a loaded machine kept the loop longer between reads,
// some look found it there within every grace: the world was never quiet,
// the calls of the baseline waited at their start gates until the stall
// bound, and a correct agent's baseline failed as stalled (red team rtT's
// Redis stream shipper, 2 runs of 45 with three test binaries at once;
// TestAPollingConsumerBetweenReadsIsNotBusyForEver, every run). Its reads
// now count as one wait while they follow one another within readGap.
func (w *world) keepReading(ids []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for id := range w.inRead {
		if !slices.Contains(ids, id) && now.Sub(w.readLast[id]) > readGap {
			delete(w.inRead, id)
			delete(w.readLast, id)
		}
	}
	for id := range w.readLast {
		if _, ok := w.inRead[id]; !ok {
			delete(w.readLast, id)
		}
	}
}

// readGap is how long a goroutine may be out of a network wait between two
// reads for them to count as one wait (keepReading): a loop's own work
// between its reads, longer on a loaded machine; a quarter of readGrace.
const readGap = readGrace / 4

// keepOnly deletes from m every goroutine not in ids.
func keepOnly[V any](m map[uint64]V, ids []uint64) {
	for id := range m {
		if !slices.Contains(ids, id) {
			delete(m, id)
		}
	}
}

// bodyLeft returns how long the youngest tool body (a call released at
// its start gate, not yet at its finish gate) has left before it is
// window old, leaving out the goroutines in skip (parked at a gate: a
// tool that called another tool), and 0 when there is none that young.
func (w *world) bodyLeft(window time.Duration, skip []uint64) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var left time.Duration
	for gid, since := range w.inBody {
		if !slices.Contains(skip, gid) {
			left = max(left, window-time.Since(since))
		}
	}
	return left
}

// bodyFresh is how long after a tool body began the scheduler waits for a
// call to reach a gate before it looks at the goroutines again
// (realtimeQuiesce). It is well under arrivalSettle, so no arrival can
// excuse the body meanwhile.
const bodyFresh = 2 * time.Millisecond

func (w *world) bodySince(gid uint64) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inBody[gid]
}

// visit records that goroutine gid reached a gate.
func (w *world) visit(gid uint64) {
	w.mu.Lock()
	if w.before[gid] {
		if w.visitor == nil {
			w.visitor = map[uint64]bool{}
		}
		w.visitor[gid] = true
	}
	w.mu.Unlock()
}

// snapshot parses the scenario's goroutines in full, and of the others
// only what links parents, unless they wait for a lock or a channel send
// (handsOff): an HTTP handler started before the scenario (on a
// keep-alive connection) may owe one of its clients an answer
// (owedAnswers).
func (w *world) snapshot() []gInfo {
	// before is never written after newWorld.
	if w.before == nil {
		return snapshotGoroutines() // ours are found by descent (ours)
	}
	return snapshotBlocks(func(id, _ uint64, block []byte) bool {
		return !w.before[id] || w.isVisitor(id) || handsOff(headerState(block))
	})
}

// owedAnswers counts the HTTP requests to this process that a client may
// be waiting for and that no handler can answer before another goroutine
// acts: those whose handler has a call parked at a gate (held), and those
// whose handler is blocked on a lock or a channel send (handsOff), or
// waits in idem.Store.Do for a key another call holds (idemWait), itself
// or in a goroutine it started (http.TimeoutHandler runs the handler in
// one). Each handler counts once. all is a snapshot, after ours read its
// parents.
//
// Two handlers that serialize on the sink's lock, with the first one's
// call held at a gate: the second waits for the gate as much as the first
// does, and so do both clients. When only the held request excused a
// client, the other client kept the scenario busy, and it stalled.
//
// A stack dump does not say who holds a lock, so a blocked handler counts
// only when a goroutine parked at a gate runs code of the program's that
// the blocked one runs too (the handler's function, past the lock it
// took): the likely holder waits for the scheduler. A handler blocked on
// a lock that a goroutine outside the scenario holds while it sleeps (a
// compactor the test started) goes on by itself; taken as owing its
// client, it made the scenario look quiet before its call arrived, and
// which calls were in flight together depended on the sleeper's timing.
func (w *world) owedAnswers(all []gInfo, held []uint64) int {
	handlers := held
	var byID map[uint64]*gInfo
	var parked []*gInfo // the goroutines at a gate
	for i := range all {
		if all[i].atGate() {
			parked = append(parked, &all[i])
		}
	}
	for i := range all {
		g := &all[i]
		if !handsOff(g.state) && !g.idemWait() || len(g.funcs) == 0 {
			continue
		}
		if !slices.ContainsFunc(parked, func(p *gInfo) bool { return sharesCode(g, p) }) {
			continue
		}
		if byID == nil {
			byID = make(map[uint64]*gInfo, len(all))
			for j := range all {
				if len(all[j].funcs) > 0 {
					byID[all[j].id] = &all[j]
				}
			}
		}
		if h := w.handlerOf(g.id, byID); h != 0 && !slices.Contains(handlers, h) {
			handlers = append(slices.Clip(handlers), h)
		}
	}
	return len(handlers)
}

// sharesCode reports whether goroutines g and o both run a function of the
// program's (not of the standard library: its file is not under GOROOT).
func sharesCode(g, o *gInfo) bool {
	for i, f := range g.funcs {
		if i >= len(g.files) || strings.HasPrefix(g.files[i], goroot) {
			continue
		}
		if slices.Contains(o.funcs, f) {
			return true
		}
	}
	return false
}

// handlerOf returns the goroutine running the HTTP handler that goroutine
// gid serves (itself or an ancestor, as parsed in byID), or 0.
func (w *world) handlerOf(gid uint64, byID map[uint64]*gInfo) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := 0; i < 64 && gid != 0; i++ {
		if g := byID[gid]; g != nil && g.httpHandler() {
			return gid
		}
		gid = w.parent[gid]
	}
	return 0
}

func (w *world) isVisitor(id uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.visitor[id]
}

// ours filters a snapshot to the scenario's goroutines, learning parents.
func (w *world) ours(all []gInfo, self uint64) []gInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []gInfo
	for _, g := range all {
		if g.parent != 0 {
			if w.parent == nil {
				w.parent = map[uint64]uint64{}
			}
			w.parent[g.id] = g.parent
		}
	}
	for _, g := range all {
		if g.id == self || !w.oursLocked(g.id) || g.runtimeWorker() {
			continue
		}
		out = append(out, g)
	}
	return out
}

// oursLocked reports whether goroutine id is the scenario's: created since
// it began, or an older one that reached a gate; without the snapshot at
// the start (a scenario without gates), one that descends from an
// invocation. Never a goroutine of the process's infrastructure
// (GoInfrastructure), which the first call of a scenario may start. w.mu
// is held.
func (w *world) oursLocked(id uint64) bool {
	if w.before != nil {
		return (!w.before[id] || w.visitor[id]) && !w.infrastructureLocked(id)
	}
	for i := 0; i < 64 && id != 0; i++ {
		if _, ok := w.roots.get(id); ok {
			return true
		}
		id = w.parent[id]
	}
	return false
}

// parkedAgent reports whether a goroutine of the scenario is parked on a
// channel of the agent's own (parkedOwn) where no bubble's clock ran
// parkedGrace for it yet, and marks it so: in a bubble, what world.quiet
// counts as busy for parkedGrace on real time.
func (w *world) parkedAgent() bool {
	ours := w.ours(w.snapshot(), 0)
	below := w.gatedAncestors(ours)
	var parked []uint64
	fresh := false
	for i := range ours {
		g := &ours[i]
		if !w.parkedOwn(g, w.bodySince(g.id), below) {
			continue
		}
		parked = append(parked, g.id)
		// Once per goroutine and place it parks at, as on real time: an
		// idle worker of a pool would run the clock before every round,
		// and a deadline the agent sets around its turn with it.
		if !w.worlds(g.id) && g.timerPaced() {
			// A dispatcher paced by a timer, once per round: it may
			// send the next call of the round a moment after the last
			// one reached its gate, whenever it began to wait (real
			// time: quiet).
			fresh = true
		}
		w.mu.Lock()
		if p := w.parkedEntryLocked(g); !p.graced {
			p.graced = true
			w.inParked[g.id] = p
			if !w.worldsLocked(g.id) || !w.worldGraced[p.site] {
				fresh = true // the world's: once per site (parkedSince)
			}
			if w.worldsLocked(g.id) {
				if w.worldGraced == nil {
					w.worldGraced = map[string]bool{}
				}
				w.worldGraced[p.site] = true
			}
		}
		w.mu.Unlock()
	}
	w.keepParked(parked)
	return fresh
}

// parkedAt is where a goroutine was seen parked, since when, and whether a
// bubble's clock ran parkedGrace for it there (parkedAgent).
type parkedAt struct {
	site   string
	since  time.Time
	graced bool
}

// hook records gid as a goroutine Setup runs in.
func (w *world) hook(gid uint64) {
	w.mu.Lock()
	if w.hooks == nil {
		w.hooks = w.hookBuf[:0]
	}
	if !slices.Contains(w.hooks, gid) {
		w.hooks = append(w.hooks, gid)
	}
	w.mu.Unlock()
}

// worldsLocked reports whether goroutine id is known to be the world's,
// not the agent's: it made no call itself (no visitor), and its line of
// creators reaches a goroutine Setup ran in, or one older than the
// scenario that made no call (a client an earlier scenario or test left
// running), before any invocation's own goroutine. A line that breaks (a
// creator that ended before a snapshot saw it) is not known to be the
// world's. w.mu is held.
func (w *world) worldsLocked(id uint64) bool {
	if w.visitor[id] {
		return false
	}
	for i := 0; i < 64 && id != 0; i++ {
		if _, ok := w.roots.get(id); ok {
			return false
		}
		if slices.Contains(w.hooks, id) || w.before != nil && w.before[id] && !w.visitor[id] {
			return true
		}
		id = w.parent[id]
	}
	return false
}

// parkedEntryLocked returns the record of goroutine g parked where it is now: a
// new one when it was not seen parked there last (it went on, and parked
// again elsewhere: a worker that took a job and now staggers its call).
// w.mu is held.
func (w *world) parkedEntryLocked(g *gInfo) parkedAt {
	site := g.funcs[0]
	if len(g.files) > 0 {
		site = g.files[0]
	}
	if w.inParked == nil {
		w.inParked = map[uint64]parkedAt{}
	}
	p, ok := w.inParked[g.id]
	if !ok || p.site != site {
		p = parkedAt{site: site, since: time.Now()}
		w.inParked[g.id] = p
	}
	return p
}

// parkedSince returns since when g has been parked where it is now; for a
// goroutine of the world (worldsLocked), since when one was first seen
// parked at that site in this scenario.
//
// A goroutine of the world parked in a select is most often a library's
// timer loop, and some libraries start a new goroutine for each wait: a
// job queue's client started by Setup (River: a debounce timer's
// goroutine per fetch, a listener's per poll, every few milliseconds with
// FetchPollInterval 5 ms). Each new one counted as busy for parkedGrace
// from when it was first seen, so that, with a few such clients in the
// process (the last scenario's of each earlier test, never stopped), the
// scenario was never quiet: the baseline's first call waited at its start
// gate until the stall bound, 10 s, and the test read BASELINE FAILED in 3
// of 10 runs (red team rtN, F9; TestFreshWorldTimersDoNotStallTheBaseline
// stalled in every run). Counted once per site, a
// stagger of a worker Setup started (it takes the agent's job, then waits
// on a timer before its call) still holds the round for parkedGrace the
// first time; the same stagger at the same site in a later round does not,
// and a call it makes after the round was played is in flight with none of
// it, as one staggered for longer than parkedGrace is. The agent's own
// goroutines keep a grace each.
func (w *world) parkedSince(g *gInfo) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parkedEntryLocked(g)
	if !w.worldsLocked(g.id) {
		return p.since
	}
	if w.worldParked == nil {
		w.worldParked = map[string]time.Time{}
	}
	at, ok := w.worldParked[p.site]
	if !ok {
		at = p.since
		w.worldParked[p.site] = at
	}
	return at
}

// keepParked forgets the goroutines not in parked, seen parked before.
func (w *world) keepParked(parked []uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keepOnly(w.inParked, parked)
}

// parkedOwn reports whether g is parked on a channel of the agent's own
// (gInfo.parked) outside a tool body (since, the body's start, is zero),
// with no call at a gate below it (gatedAncestors) and not an invocation's
// own goroutine, or, either way, where its code receives from a timer's
// channel (waitsOnTimer, timerwait.go); or g is blocked in a function of
// the user's code that armed an AfterFunc before (armsAfterFunc): what may
// wait for a timer of the agent's, and counts as busy for parkedGrace.
func (w *world) parkedOwn(g *gInfo, since time.Time, below map[uint64]bool) bool {
	if !since.IsZero() {
		return false
	}
	if g.parked() && (!below[g.id] && !w.isRoot(g.id) || g.waitsOnTimer()) {
		return true
	}
	return !w.worlds(g.id) && g.armsAfterFunc()
}

// isRoot reports whether gid is an invocation's own goroutine.
func (w *world) isRoot(gid uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.roots.get(gid)
	return ok
}

// gatedAncestors returns the goroutines that a goroutine parked at a gate
// descends from: one of them waiting on a channel waits, most likely, for
// what that call returns (a fan-in of parallel tool calls), which no timer
// brings.
func (w *world) gatedAncestors(ours []gInfo) map[uint64]bool {
	var out map[uint64]bool
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range ours {
		if !ours[i].atGate() {
			continue
		}
		if out == nil {
			out = map[uint64]bool{}
		}
		for id, n := w.parent[ours[i].id], 0; id != 0 && n < 64; id, n = w.parent[id], n+1 {
			out[id] = true
		}
	}
	return out
}

// setupStarted reports whether goroutine gid descends, by the links
// learned so far (ours), from a goroutine the scenario's Setup ran in
// (hooks), with no invocation's goroutine on the way: a worker of the
// world, such as a job queue's, that Setup started and that carries out
// later the work the agent queued (lookup).
func (w *world) setupStarted(gid uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.hooks) == 0 {
		return false
	}
	for i := 0; i < 64 && gid != 0; i++ {
		if _, ok := w.roots.get(gid); ok {
			return false
		}
		if slices.Contains(w.hooks, gid) {
			return true
		}
		gid = w.parent[gid]
	}
	return false
}

// invocationOf returns the invocation goroutine gid descends from, or 0.
func (w *world) invocationOf(gid uint64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := 0; i < 64 && gid != 0; i++ {
		if n, ok := w.roots.get(gid); ok {
			return n
		}
		gid = w.parent[gid]
	}
	return 0
}

// deliveryOf returns the delivery goroutine gid is of: the invocation it
// descends from (invocationOf), else, for a goroutine waiting in
// idem.Store.Do, the delivery its call's context carries (an HTTP
// handler that took the run with Resolve), or 0.
func (w *world) deliveryOf(gid uint64) int {
	if n := w.invocationOf(gid); n != 0 {
		return n
	}
	_, n, _, _ := w.keyWaitOf(gid)
	return n
}

// quiet takes one snapshot and reports whether the scenario's goroutines
// are all parked at gates or durably blocked; if not, it says which is
// still going.
//
// held.handlers are the HTTP handlers of this process with a call parked
// at a gate (callRare.viaHTTP: a fake of the service the agent calls,
// whose handler calls a tool; heldAtGates). Their requests' answers wait
// for the gate, and so do those of the handlers blocked on a lock or a
// channel send (owedAnswers): each such request excuses one client
// waiting for an HTTP response (sent, not still connecting), which would
// otherwise be busy, and the scenario, never quiet, would stall. Known
// limits: a handler that answered before it called the tool, or before it
// blocked, still excuses a client, one it does not owe; so does a handler
// whose client is not the scenario's. Likewise each call that reached its
// gate after a tool body began excuses one body blocked within its grace
// (held.arrivals), and each call a server in the process serves the agent
// with (Served) excuses one client of its invocation waiting for an HTTP
// response (held.served, servedBy: MCP over streamable HTTP).
//
// onIO is set when the scenario is busy only because a goroutine waits
// for network I/O (an HTTP response, a connection): what ends that wait is
// the network, not a moment's more running, and the wait is usually ended
// by the call reaching its finish gate (scheduler.pause).
func (w *world) quiet(self uint64, held heldCalls) (quiet bool, why string, onIO bool) {
	// The counts are read before the snapshot (quietgates.go).
	w.mu.Lock()
	made := w.made
	created, known := goroutinesCreated()
	w.mu.Unlock()
	all := w.snapshot()
	ours := w.ours(all, self)
	owed := w.owedAnswers(all, held.handlers)
	excused := 0         // arrivals that excused a tool body
	var served []bool    // the entries of held.served that excused a client
	var timed []uint64   // the goroutines in a timed wait now
	var reading []uint64 // the goroutines waiting for network I/O of the agent's (ioAwaited) now
	var parked []uint64  // the goroutines parked on channels of the agent's own now
	gatedBelow := w.gatedAncestors(ours)
	worldWhy := "" // the first goroutine of the world seen busy
	for i, g := range ours {
		w.noteNetwork(&g)
		since := w.bodyStart(&g)
		busy, why := g.busy(since)
		if busy && why == ioAwaited && since.IsZero() && w.worlds(g.id) {
			why = worldAwaited
		}
		if busy && (why == retryBackoffWhy || why == timedWaitWhy) {
			w.noteRetrying(&g)
		}
		if busy && why == timedWaitWhy {
			timed = append(timed, g.id)
			if time.Since(w.seenSince(&w.inTimed, g.id)) > timedGrace {
				busy = false // waiting for what no sleep ends, by now
			}
		}
		if busy && w.readLike(&g, why, since) {
			reading = append(reading, g.id)
			w.sawReading(g.id)
			site := g.readSite()
			switch {
			case w.loops.has(site):
				busy = false // a read here outlasted its grace before
			case time.Since(w.seenSince(&w.inRead, g.id)) > readGraceUnder(w.stallAfter):
				busy = false // reading for good (a websocket's loop, a long poll), or too slow to wait for
				w.lapsed(&g, site, why)
			}
		}
		if !busy && w.parkedOwn(&g, since, gatedBelow) {
			parked = append(parked, g.id)
			from := w.parkedSince(&g)
			if n := len(held.arrivals); n > 0 && held.arrivals[n-1].After(from) && !w.worlds(g.id) && g.timerPaced() {
				// A dispatcher paced by a timer (timerwait.go) may
				// send the next call within parkedGrace of the last
				// one's arrival, whenever it began to wait: a loop
				// that waits at one select for its ticker and for
				// answers had used its grace up before (red team rY
				// T5).
				from = held.arrivals[n-1]
			}
			if time.Since(from) <= parkedGrace {
				busy, why = true, parkedWhy
			}
		}
		switch {
		case busy && why == httpAwaiting && w.servedBy(g.id, held.served, &served):
			// Its own invocation's request, served at a gate, first:
			// an owed answer excuses any client, and one spent on this
			// client left the other delivery's, whose handler waits in
			// idem.Do for the key this one's holds, busy (red team rtY
			// #2, when the served client came first in the snapshot).
			busy = false
		case busy && why == httpAwaiting && owed > 0:
			owed--
			busy = false
		case busy && why == bodyWait && held.arrivedSince(since, &excused):
			// A call reached its gate after this body began and waits
			// there: the tool called another tool through a client
			// whose server runs it on another goroutine (an MCP
			// session in the process), and waits for its answer,
			// which only the scheduler lets come.
			busy = false
		}
		if busy && !ioWaits[why] && w.worlds(g.id) {
			// The world's, judged after the pass (worldBusy).
			if worldWhy == "" {
				worldWhy = fmt.Sprintf("goroutine %d (%s) at %s", g.id, why, g.where())
			}
			continue
		}
		if busy {
			w.mu.Lock()
			w.worldBusy = time.Time{} // the agent's goroutines are going
			w.mu.Unlock()
			// The reads after g start their grace now as well: a pass
			// stops at the first busy goroutine, and two loops that read
			// for good, first seen one after the other, cost two graces
			// back to back, as long as a stall bound of 2 s (testkit's
			// TestBackgroundNetworkReaderDoesNotStall stalled).
			for j := i + 1; j < len(ours); j++ {
				if since := w.bodyStart(&ours[j]); func() bool { b, why := ours[j].busy(since); return b && w.readLike(&ours[j], why, since) }() {
					w.seenSince(&w.inRead, ours[j].id)
				}
			}
			w.noteQuiet(nil, 0, 0, false)
			return false, fmt.Sprintf("goroutine %d (%s) at %s", g.id, why, g.where()), ioWaits[why]
		}
	}
	w.keepSeen(w.inTimed, timed) // after a whole pass: none was left unseen
	w.keepReading(reading)
	w.keepParked(parked)
	w.mu.Lock()
	outlasted := false
	if worldWhy == "" {
		w.worldBusy = time.Time{}
	} else {
		if w.worldBusy.IsZero() {
			w.worldBusy = time.Now()
		}
		outlasted = time.Since(w.worldBusy) >= bodyGrace
	}
	w.mu.Unlock()
	if worldWhy != "" && !outlasted {
		w.noteQuiet(nil, 0, 0, false)
		return false, worldWhy, false
	}
	// Quiet but for the world's goroutines, which will not block (they
	// are excused): what quietAtGates would read off the counts is not.
	w.noteQuiet(ours, created, made, known && self == 0 && worldWhy == "")
	return true, "", false
}

// readLike reports whether g, busy for why, waits for an answer that may
// never come by itself, and so counts as busy for readGrace only: network
// I/O of the agent's own code (ioAwaited), or an HTTP response that a
// goroutine of the world (worlds: one Setup started, or older than the
// scenario) waits for outside any tool body. The world's wait is no
// call's: a consumer that Setup started long-polling a queue (SQS's
// ReceiveMessage with WaitTimeSeconds 20, as AWS advises) waits there for
// as long as nothing is queued, often for what the very call held at its
// start gate would send. Busy for good, it kept the scenario from ever
// going quiet, and every baseline stalled, correct agents' too (red team
// rtR #7). A world's request answered within the grace (a worker's POST
// to a service) is still waited for.
func (w *world) readLike(g *gInfo, why string, since time.Time) bool {
	return why == ioAwaited || why == worldAwaited || why == httpAwaiting && since.IsZero() && w.worlds(g.id)
}

// worlds reports whether goroutine id is known to be the world's
// (worldsLocked).
//
// A goroutine of the world that stays busy (running, runnable, parked in
// a timer loop of its own) holds the scenario's quiet for bodyGrace at
// most, counted from when only the world's were seen busy (worldBusy):
// long enough for a worker of the world that takes the agent's job to
// reach its call's gate, as a tool body's worker gets, and no longer. A
// world of busy pollers is never quiet: River's clients (riversqlite, a
// 5 ms FetchPollInterval), the last scenario's of each earlier test left
// running, kept a goroutine running or runnable at every look on a loaded
// machine of 2 CPUs, and the baseline's call waited at its gate until the
// stall bound (red team rtN, F9: with parkedSince's once per site alone,
// still 2 of 10 tests, at a finish gate; with this bound, 0 of 10).
// The network waits keep rules of their own (ioWaits).
func (w *world) worlds(id uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.worldsLocked(id)
}

// bodyStart returns when g's tool body began, or the zero time when g runs
// none (busy's since). A goroutine just released from a gate still has the
// gate on its stack, but is runnable: busy comes first. One blocked at a
// gate inside a tool body (the tool called another tool on its own
// goroutine: an in-process MCP client) waits for the scheduler alone: the
// grace of a tool body is not for it.
func (w *world) bodyStart(g *gInfo) time.Time {
	since := w.bodySince(g.id)
	if !since.IsZero() && g.atGate() {
		since = time.Time{}
	}
	return since
}

// servedBy reports whether a call parked at a gate that a server in the
// process serves the agent with (held.served, an invocation per call) is
// one goroutine gid, waiting for an HTTP response, may be waiting for: one
// of its invocation that excused no client yet (marked in *used). An MCP
// client over streamable HTTP (go-sdk's, mcp-go's) sends the call in a
// request whose handler hands it to the server, which resolves the
// agent's context from the call's _meta and runs the tool with it: the
// call is parked at its start gate, the client waits for the response,
// which the gate holds, and without the excuse the scenario, never quiet,
// stalled. Over an in-memory transport the client waits on a channel,
// quiet already, and the excuse goes unused. Known limit: a client of the
// same invocation waiting for another server's response (a tool calling
// an outside HTTP service while an MCP call is parked) may take it.
func (w *world) servedBy(gid uint64, served []int, used *[]bool) bool {
	if len(served) == 0 {
		return false
	}
	n := w.invocationOf(gid)
	if *used == nil {
		*used = make([]bool, len(served))
	}
	for i, m := range served {
		if m == n && !(*used)[i] {
			(*used)[i] = true
			return true
		}
	}
	return false
}

// The reasons of busy (gInfo.busy) that are waits for network I/O, and
// ioWaits, the set of them.
const (
	ioInTool       = "network I/O in a tool"
	httpConnecting = "connecting for an HTTP request"
	httpAwaiting   = "waiting for an HTTP response"
	// httpBodyEnd: a moment's running of the transport's read loop ends
	// it, not the network: not among ioWaits.
	httpBodyEnd = "at the end of an HTTP response body, waiting for the transport to take the connection back"
	// ioAwaited: a goroutine running the agent's own code waits for
	// network I/O outside a tool body, or for an HTTP/2 body anywhere;
	// busy for readGrace only (world.quiet).
	ioAwaited = "waiting for network I/O (a response body, a reply)"
)

// dbAwaited: what blocked says of a goroutine waiting for network I/O
// inside a SQL client (inDatabaseDriver): "a response body, a reply" told
// a stall on a row lock the agent held itself nothing true (red team,
// /tmp/rtP #5).
const dbAwaited = "waiting for the database's answer to a statement (network I/O in its SQL driver)"

// worldAwaited: what world.quiet makes of ioAwaited in a goroutine of the
// world (world.worlds: one that Setup started, or older than the
// scenario) outside any tool body: a consumer's blocking read (a Redis
// stream's XREADGROUP BLOCK, a Kafka fetch, an AMQP delivery), which
// waits for what the agent sends, not an answer the agent waits for.
// Busy for readGrace as ioAwaited is (a worker's read of its own
// request's reply is still waited for), but its lapse is told as the
// world idling, not as a loop of the agent's (red team rtT #3).
const worldAwaited = "waiting for network I/O in a goroutine of the world (a consumer's receive, a long poll)"

var ioWaits = map[string]bool{ioInTool: true, httpConnecting: true, httpAwaiting: true, ioAwaited: true, worldAwaited: true}

// readGrace is how long a goroutine counts as busy for ioAwaited since it
// was first seen in that wait (world.quiet); past it, the scheduler goes on
// without it. The fakes of a model or a service that stream their answer
// (headers first, the body tens of milliseconds later) answer well within
// it, on a loaded machine too, and so do services on a local network. A
// goroutine that reads for as long as the agent runs (a websocket's or a
// subscription's loop) waits for no answer: it costs the suite one grace
// for each place it reads at (readLoops), not a stall, since the default
// stall bound (DefaultStallTimeout) is ten times as long and a bound
// shorter than two graces cuts the grace to half of it (readGraceUnder).
// A real model's streamed answer, which may take seconds, is not waited
// for to its end: the calls the agent makes after it may be played after a
// round they could have been in.
const readGrace = time.Second

// readLoops are the places of the agent's code (gInfo.readSite) where a
// goroutine of a scenario of the suite still waited for network I/O
// (ioAwaited) when readGrace lapsed: a loop that reads for as long as the
// agent runs (a websocket's, a subscription's), or a reply too slow to
// wait for. A read at such a place counts as quiet at once in the
// scenarios that follow. Each delivery of each scenario starts such a loop
// afresh, and waiting out the grace for every one of them made a suite of
// 18 scenarios (each of whose deliveries is scheduled) take 24 s longer,
// where it now takes one grace. Scenarios run one at a time, but the
// deliveries of one check quiescence from goroutines of their own
// (lockstep): mu guards sites.
type readLoops struct {
	mu    sync.Mutex
	sites map[string]bool
}

func (l *readLoops) has(site string) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sites[site]
}

func (l *readLoops) add(site string) {
	if l == nil {
		return // a world of no suite: its own lapsedAt remembers
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sites == nil {
		l.sites = map[string]bool{}
	}
	l.sites[site] = true
}

// readSite is where g waits for network I/O, by the frames of the user's
// code on its stack and the place that started it: a loop started at one
// place and reading at another is the same on every delivery, and a reply
// read by a helper that many places call is told apart by its callers.
func (g *gInfo) readSite() string {
	var b strings.Builder
	for i := range g.funcs {
		if frameOf(g.funcs[i], g.files[i]) == userCode || strings.HasPrefix(g.funcs[i], "created by ") {
			b.WriteString(g.files[i])
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// lapsed records that goroutine g, waiting for network I/O at site, was
// still waiting when its readGrace lapsed: the suite takes reads at site
// for a loop's from now on, and the scenario's trace says so once (two
// deliveries' gates may see it lapse at once).
func (w *world) lapsed(g *gInfo, site, why string) {
	w.loops.add(site)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lapsedAt[site] {
		return
	}
	if w.lapsedAt == nil {
		w.lapsedAt = map[string]bool{}
	}
	w.lapsedAt[site] = true
	if why == httpAwaiting || why == worldAwaited {
		what, there := "an HTTP response", "a response"
		if why == worldAwaited {
			what, there = "network I/O", "a read"
		}
		w.readNotes = append(w.readNotes, fmt.Sprintf("goroutine %d of the world (one that Setup started, or older than the scenario) still waited for %s at %s after %s, outside any tool call: it was taken for the world idling (a long poll, such as a queue consumer's receive, which may wait for what a call held at its gate sends), the schedule went on without it, and no later scenario of the suite waits for %s there; if the world was doing the agent's work, a Settle that waits for it tells the end state",
			g.id, what, g.where(), readGraceUnder(w.stallAfter), there))
		return
	}
	w.readNotes = append(w.readNotes, fmt.Sprintf("goroutine %d still waited for network I/O at %s after %s: it was taken for a loop that reads for as long as the agent runs (a websocket's, a subscription's), the schedule went on without it, and no later scenario of the suite waits for a read there; if it was a reply, what the agent did after it may have been played after calls it could have been in flight with",
		g.id, g.where(), readGraceUnder(w.stallAfter)))
}

// readGraceUnder is readGrace, cut to half the stall bound stall when that
// is shorter than two graces: a goroutine that reads forever must cost a
// scenario less than its stall bound. stall is 0 when no bound applies
// (in a bubble, which hosts no network I/O).
func readGraceUnder(stall time.Duration) time.Duration {
	if stall > 0 && stall < 2*readGrace {
		return stall / 2
	}
	return readGrace
}

// noteNetwork keeps the first sign that the scenario does network I/O,
// which a synctest bubble cannot host.
func (w *world) noteNetwork(g *gInfo) {
	if g.state != "IO wait" && !g.has("net/http.") && !g.has("net.(*") {
		return
	}
	w.mu.Lock()
	if w.network == "" {
		w.network = fmt.Sprintf("goroutine %d does network I/O at %s", g.id, g.where())
	}
	w.mu.Unlock()
}

// takeReadNotes returns the notes of the reads taken for loops in the
// scenario (lapsed).
func (w *world) takeReadNotes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	notes := w.readNotes
	w.readNotes = nil
	return notes
}

// networkSeen returns the first sign of network I/O, or "".
func (w *world) networkSeen() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.network
}

// blocked describes the scenario's goroutines that are neither at a gate
// nor finished: what a stall report names.
//
// Connections waiting for their peer's next move (an idle keep-alive
// connection, an HTTP client's read and write loops) are left out: they
// wait on whoever uses them. Goroutines of one delivery (or of none) that
// wait alike are told once, counted, and the list stops at maxBlocked
// entries: a stall of sixteen parallel requests reads as one line per kind
// of wait, and the one odd goroutine (the handler blocked on a lock) is
// not lost among them. An HTTP handler blocked on a lock or a channel send
// is named even when its goroutine is older than the scenario (a
// keep-alive connection's): it may be the one the scenario waits for.
func (w *world) blocked(self uint64) []string {
	type kind struct {
		delivery int
		what     string
	}
	groups := map[kind][]uint64{}
	grpcOwn := 0
	all := w.snapshot()
	gs := w.ours(all, self)
	for _, g := range all {
		if g.id != self && handsOff(g.state) && g.httpHandler() && !slices.ContainsFunc(gs, func(o gInfo) bool { return o.id == g.id }) {
			gs = append(gs, g)
		}
	}
	for _, g := range gs {
		if g.atGate() || g.harnessWait() || g.state == "IO wait" && g.idleConnection() || g.has("(*persistConn).writeLoop") || g.has("(*connReader).backgroundRead") {
			continue
		}
		if g.grpcOwn() {
			grpcOwn++ // told as one (libwaits.go)
			continue
		}
		what := describeState(g.state)
		if busy, why := g.busy(time.Time{}); busy && (why == httpAwaiting || why == ioAwaited || why == retryBackoffWhy) {
			what = why // an HTTP/2 body's reader is "waiting on a sync.Cond" by its state
		} else if why, ok := g.retryWaiting(); ok {
			what = why // a retry loop's or rate limiter's (retrywait.go)
		}
		if g.state == "IO wait" && g.inDatabaseDriver() {
			what = dbAwaited
		}

		where := what + " at " + g.where()
		if g.state == "running" || g.state == "runnable" || g.state == "preempted" {
			// A busy loop's stack is wherever the dump caught it: a
			// helper it calls (a fake's Snapshot) named alone hid the
			// loop (red team rtV #15). The frames of the user's code
			// above it say whose loop it is.
			where = what + " at " + g.whereUp(3)
		}
		switch {
		case g.idemWait():
			where = w.keyWaitText(&g)
		case g.has("database/sql.(*DB).conn") && !g.has("runtime.(*judge)."):
			// A pool whose every connection is taken: by a transaction
			// or rows the agent holds across this call, the wait is for
			// good (red team rtT #10: GORM's Transaction with
			// SetMaxOpenConns(1) and a tool using the *DB inside it,
			// described as "blocked in a select").
			where += ", waiting for a connection of its database/sql pool, every one of which is in use: a transaction or rows the agent holds open across this call keep one (with a pool of one, run the statement on the transaction, or end it before the call)"
		case g.has("runtime.callStateContext"):
			// StateContext's: its context ends at this stall, and
			// the agent, cancelled, can return (statebound.go).
			where += ", inside the State function, which runs on the goroutine of the call it judges: State must not wait for what the agent holds across a traced call (a lock, a transaction's database connection, a pool's last connection), and the tool would wait for it too; StateContext's context ended at this stall, so the wait ends where State waits on it; read the world through what the agent cannot hold (a connection of its own, a pool larger than the agent's transactions)"
		case g.has("runtime.(*judge).readState"):
			// State, on the call's goroutine (statebound.go): it has no
			// context to give up on.
			where += ", inside the State function, which runs on the goroutine of the call it judges: State must not wait for what the agent holds across a traced call (a lock, a transaction's database connection, a pool's last connection), and the tool would wait for it too; State takes no context, so read the world through what the agent cannot hold (a connection of its own, a pool larger than the agent's transactions), or give testkit.StateContext a function that waits on its context, which ends at a stall"
		case g.has("runtime.(*judge).quiet"):
			where += ", inside the Settle, which runs on the goroutine of the repeated call: it must not wait for what the agent holds across a traced call"
		default:
			where += g.libWaitNote()
		}
		k := kind{w.deliveryOf(g.id), where}
		groups[k] = append(groups[k], g.id)
	}
	kinds := make([]kind, 0, len(groups))
	for k := range groups {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b kind) int {
		if a.delivery != b.delivery {
			if a.delivery == 0 || b.delivery != 0 && b.delivery < a.delivery {
				return 1
			}
			return -1
		}
		return strings.Compare(a.what, b.what)
	})
	var out []string
	for _, k := range kinds {
		ids := groups[k]
		slices.Sort(ids)
		who := fmt.Sprintf("goroutine %d is", ids[0])
		if len(ids) > 1 {
			who = fmt.Sprintf("%d goroutines (%d, ...) are", len(ids), ids[0])
		}
		if k.delivery > 0 {
			if len(ids) == 1 {
				who = fmt.Sprintf("delivery %d (goroutine %d) is", k.delivery, ids[0])
			} else {
				who = fmt.Sprintf("delivery %d (%d goroutines: %d, ...) are", k.delivery, len(ids), ids[0])
			}
		}
		out = append(out, who+" "+k.what)
	}
	if len(out) > maxBlocked {
		out = append(out[:maxBlocked:maxBlocked], fmt.Sprintf("and %d more", len(out)-maxBlocked))
	}
	if grpcOwn > 0 {
		out = append(out, foldedText(grpcOwn, "google.golang.org/grpc"))
	}
	return out
}

const maxBlocked = 12

// timedSelects returns, as "N at file:line", the goroutines of
// gs (the scenario's, at a stall) blocked in a select that is not the
// agent's own: one of the world (a goroutine of no delivery, such as a
// server that Setup started), or one whose select is a library's code.
// Its cases may include a timer (a pull request's expiry, a context's
// deadline) that the stack does not show, and the wait may then end by
// itself (stallAdvice).
func (w *world) timedSelects(gs []gInfo) []string {
	var out []string
	for i := range gs {
		g := &gs[i]
		if g.state != "select" || g.bystander() || g.knownLibWait() {
			continue
		}
		if busy, _ := g.busy(time.Time{}); busy {
			continue
		}
		if w.invocationOf(g.id) != 0 && !g.selectsInLibrary() {
			continue
		}
		out = append(out, fmt.Sprintf("%d at %s", g.id, g.where()))
	}
	return out
}

// selectsInLibrary reports whether the select g is blocked in is a
// library's: the first frame of g's stack that is not the standard
// library's or this package's is a dependency's (frameOf).
func (g *gInfo) selectsInLibrary() bool {
	for i := range g.funcs {
		switch frameOf(g.funcs[i], g.files[i]) {
		case dependencyCode:
			return true
		case userCode:
			return false
		}
	}
	return false
}

// backingOff returns, for each delivery with a goroutine (other than self)
// in an HTTP client's retry back-off (retryBackoffs) or in a retry loop's
// or rate limiter's timed wait (retryLoop), where it waits: a delivery
// waiting for the timer of the world's rate limit, not for a lock another
// delivery holds (lockstep.Wait). A retry loop's wait is busy for
// timedGrace only, after which the other delivery goes on alone: with
// this, that scenario is inconclusive, not a plain pass that ran the
// deliveries one after the other.
func (w *world) backingOff(self uint64) map[int]string {
	var out map[int]string
	for _, g := range w.ours(w.snapshot(), self) {
		if busy, why := g.busy(time.Time{}); !busy || why != retryBackoffWhy && (why != timedWaitWhy || !retryLoop(g.funcs[0])) {
			continue
		}
		w.noteRetrying(&g)
		if inv := w.invocationOf(g.id); inv > 0 {
			if out == nil {
				out = map[int]string{}
			}
			out[inv] = g.where()
		}
	}
	return out
}

func describeState(state string) string {
	switch state {
	case "chan send":
		return "blocked on a channel send"
	case "chan receive", "chan receive (nil chan)":
		return "blocked on a channel receive"
	case "select", "select (no cases)":
		return "blocked in a select"
	case "sync.Mutex.Lock", "sync.RWMutex.Lock", "sync.RWMutex.RLock":
		return "blocked on a " + strings.TrimSuffix(strings.TrimSuffix(state, ".Lock"), ".RLock")
	case "sync.Cond.Wait":
		return "waiting on a sync.Cond"
	case "sync.WaitGroup.Wait":
		return "waiting on a sync.WaitGroup"
	case "IO wait":
		return "waiting for network I/O"
	case "sleep":
		return "asleep"
	case "running", "runnable":
		return "running"
	}
	return "in state " + strconv.Quote(state)
}

// awaitingHTTP reports whether frame f is an HTTP client's round trip
// after its request was sent: the goroutine waits for the answer.
func awaitingHTTP(f string) bool {
	return strings.HasPrefix(f, "net/http.(*persistConn).roundTrip") ||
		strings.HasPrefix(f, "net/http.(*http2ClientConn).RoundTrip") ||
		strings.HasPrefix(f, "golang.org/x/net/http2.(*ClientConn).RoundTrip")
}

// inRoundTrip reports whether g is in an HTTP client's round trip, its
// request sent, whatever its state: woken by the transport (the request
// written) and not yet run again, it is runnable, and still waits for the
// answer. So is a gRPC client's call (awaitingRPC).
func (g *gInfo) inRoundTrip() bool {
	return slices.ContainsFunc(g.funcs, awaitingHTTP) || slices.ContainsFunc(g.funcs, awaitingRPC)
}

// awaitingRPC reports whether frame f is a gRPC client's call waiting for
// its answer: a unary call (ClientConn.Invoke), or a stream's receive.
// Only for servedCall, which asks it while a handler of this process
// serves a call, its request sent by then: the call may also wait for a
// connection, and a stream's receive for as long as the stream lives, so
// busy does not count it as awaitingHTTP is.
func awaitingRPC(f string) bool {
	return strings.HasPrefix(f, "google.golang.org/grpc.(*ClientConn).Invoke") ||
		strings.HasPrefix(f, "google.golang.org/grpc.invoke") ||
		strings.HasPrefix(f, "google.golang.org/grpc.(*clientStream).RecvMsg") ||
		strings.HasPrefix(f, "google.golang.org/grpc.(*addrConnStream).RecvMsg")
}

// bodyWaiting is a tool body of a delivery blocked in a select or a channel
// receive past bodyGrace (world.waitingBodies).
type bodyWaiting struct {
	where string    // what it is blocked in, and where
	since time.Time // when its tool body began
}

// waitingBodies returns, by delivery, the scenario's goroutines (but self)
// that run a tool body (a call released at its start gate, not at its
// finish gate) and are blocked in a select or a channel receive: waiting,
// most likely, for a timer, a ticker or a worker's answer, which ends by
// itself, though a channel the other delivery sends on after its gate
// looks the same. A body blocked on a lock (a sync.Mutex, a semaphore, a
// channel send) is not among them: a lock the other delivery holds is the
// agent's own serialization.
func (w *world) waitingBodies(self uint64) map[int]bodyWaiting {
	var out map[int]bodyWaiting
	for _, g := range w.ours(w.snapshot(), self) {
		since := w.bodyStart(&g)
		if since.IsZero() || g.state != "select" && g.state != "chan receive" {
			continue
		}
		n := w.invocationOf(g.id)
		if n == 0 {
			continue
		}
		if _, ok := out[n]; ok {
			continue
		}
		if out == nil {
			out = map[int]bodyWaiting{}
		}
		out[n] = bodyWaiting{where: describeState(g.state) + " at " + g.where(), since: since}
	}
	return out
}

// deliverySettling reports whether a goroutine of a delivery of the
// scenario, but self, runs a Settle now (judge.quiet).
func (w *world) deliverySettling(self uint64) bool {
	for _, gid := range settlingGoroutines() {
		if gid != self && w.invocationOf(gid) != 0 {
			return true
		}
	}
	return false
}

// onLock returns the deliveries with a goroutine (but self) blocked on a
// lock: a sync.Mutex or sync.RWMutex, a channel send (a channel
// semaphore, a full queue), a sync.WaitGroup or sync.Cond (a
// singleflight's waiters), a semaphore of package sync, an idempotency
// key another call holds pending, waited for in idem.Store.Do
// (keywait.go). One of them that
// the other delivery goes on alone past most likely waits for a lock the
// going one holds: the agent's own serialization (lockstep.Wait).
func (w *world) onLock(self uint64) map[int]bool {
	var out map[int]bool
	for _, g := range w.ours(w.snapshot(), self) {
		switch {
		case handsOff(g.state), g.state == "sync.WaitGroup.Wait", g.state == "sync.Cond.Wait",
			g.state == "semacquire" && g.peerSemaphore(), g.xsyncSemaphoreWait(), g.idemWait():
		default:
			continue
		}
		if n := w.deliveryOf(g.id); n != 0 {
			if out == nil {
				out = map[int]bool{}
			}
			out[n] = true
		}
	}
	return out
}

// rootNums maps an invocation's goroutine to its number (world.roots). A
// scenario has one invocation or a few: the first rootsInline are kept in
// the world itself, where a map was two allocations a scenario, and its
// inserts (world.root) 0.65% of the ten-write suite's CPU profile
// (GOMAXPROCS=1, 60 ms of 9.19 s; docs/performance.md, fourteenth
// sitting); past them, a map.
type rootNums struct {
	n      int
	inline [rootsInline]rootNum
	more   map[uint64]int
}

type rootNum struct {
	gid uint64
	n   int
}

const rootsInline = 2

func (m *rootNums) get(gid uint64) (int, bool) {
	for i := range min(m.n, rootsInline) {
		if m.inline[i].gid == gid {
			return m.inline[i].n, true
		}
	}
	n, ok := m.more[gid]
	return n, ok
}

func (m *rootNums) set(gid uint64, n int) {
	for i := range min(m.n, rootsInline) {
		if m.inline[i].gid == gid {
			m.inline[i].n = n
			return
		}
	}
	if _, ok := m.more[gid]; ok || m.n >= rootsInline {
		if m.more == nil {
			m.more = map[uint64]int{}
		}
		if !ok {
			m.n++
		}
		m.more[gid] = n
		return
	}
	m.inline[m.n] = rootNum{gid, n}
	m.n++
}

// all yields every goroutine listed.
func (m *rootNums) all(yield func(gid uint64) bool) {
	for i := range min(m.n, rootsInline) {
		if !yield(m.inline[i].gid) {
			return
		}
	}
	for gid := range m.more {
		if !yield(gid) {
			return
		}
	}
}
