package runtime

import (
	goruntime "runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The call site of a traced call (Operation.Site, identity_unstable) is the
// return address of the generated wrapper into the agent's code. Begin
// reads it off the frame pointers, which costs a few nanoseconds where
// runtime.Callers costs a few hundred; the file:line behind it is resolved
// once per site, when a trace is read (siteOf).
//
// Reading frame pointers is right only when the wrapper has a frame of its
// own, which generated wrappers do (they defer, so they are never inlined).
// An adapter that calls Begin from a function the compiler inlined would
// not: so the first call through each Begin call instruction is also
// unwound with runtime.Callers, and that instruction takes the fast path
// only if both agree.

// fastSites records, per return address of Begin, whether the frame-pointer
// site equals runtime.Callers' (bool).
var fastSites sync.Map

// fastRets caches, direct-mapped, return addresses that fastSites says take
// the fast path, so that most calls read one word instead of the map.
var fastRets [256]atomic.Uintptr

func fastRet(ret uintptr) *atomic.Uintptr {
	return &fastRets[(ret^ret>>8)%uintptr(len(fastRets))]
}

// callSite returns the call site's program counter, given what framePCs
// read in Begin or BeginArgs (ret 0: not available on this platform). It
// is called by begin only: its Callers skip counts callSite, begin, Begin
// (or BeginArgs) and the wrapper.
func callSite(ret, site uintptr) uintptr {
	if ret != 0 {
		slot := fastRet(ret)
		if slot.Load() == ret {
			return site
		}
		if ok, seen := fastSites.Load(ret); seen && ok.(bool) {
			slot.Store(ret)
			return site
		}
	}
	// The traced function (the wrapper) and its caller, the site.
	var pcs [2]uintptr
	if goruntime.Callers(4, pcs[:]) != 2 {
		return 0
	}
	wrapper := adapterWrapper(pcs[0])
	if wrapper && !userSite(pcs[1]) {
		if v, ok := adapterSites.Load(pcs[1]); !ok || !v.(bool) {
			adapterSites.Store(pcs[1], true)
		}
	}
	if ret != 0 {
		// An adapter's wrapper is called from every line of a framework
		// that dispatches tools, each of which must be marked: it keeps
		// to this path, whose cost its JSON decoding dwarfs.
		fastSites.Store(ret, pcs[1] == site && !wrapper)
	}
	return pcs[1]
}

// adapterWrappers caches adapterWrapper by program counter.
var adapterWrappers sync.Map // uintptr -> bool

// adapterWrapper reports whether pc is in a traced function of one of
// agentidem's framework adapters (the middleware that calls Begin). Its
// caller is then the framework's dispatch (the Anthropic SDK's tool
// runner calls a wrapped tool's Execute itself), a line every call of
// every tool comes through, however the agent got there: the site is the
// adapter's (adapterSite), as where the adapter's own code is the caller.
func adapterWrapper(pc uintptr) bool { return inAdapter(&adapterWrappers, pc) }

// userSites caches userSite by program counter: every call of an
// adapter's wrapper asks it.
var userSites sync.Map // uintptr -> bool

// userSite reports whether pc, a call site, is in the user's own code
// (userFrame): an agent that calls an adapter's wrapped tool itself names
// its own line, as a generated wrapper's caller does.
func userSite(pc uintptr) bool {
	if v, ok := userSites.Load(pc); ok {
		return v.(bool)
	}
	main := mainModule()
	in := false
	if main != "" {
		frame, _ := goruntime.CallersFrames([]uintptr{pc}).Next()
		in = userFrame(frame, main)
	}
	userSites.Store(pc, in)
	return in
}

// inAdapter reports whether pc is in the code of one of agentidem's
// framework adapters, as cache (pc -> bool) holds it or holds it from now
// on. A value cache already holds is kept: callSite marks the framework's
// lines that call an adapter's wrapper in adapterSites.
func inAdapter(cache *sync.Map, pc uintptr) bool {
	if v, ok := cache.Load(pc); ok {
		return v.(bool)
	}
	frame, _ := goruntime.CallersFrames([]uintptr{pc}).Next()
	v, _ := cache.LoadOrStore(pc, adapterPackage(funcPackage(frame.Function)))
	return v.(bool)
}

// sites caches the file:line of call-site program counters.
var sites sync.Map // uintptr -> string

// siteOf returns the file:line of a call site's program counter.
func siteOf(pc uintptr) string {
	if s, ok := sites.Load(pc); ok {
		return s.(string)
	}
	frame, _ := goruntime.CallersFrames([]uintptr{pc}).Next()
	s := frame.File + ":" + strconv.Itoa(frame.Line)
	sites.Store(pc, s)
	return s
}

var adapterSites sync.Map // uintptr -> bool

// adapterSite reports whether a call site's program counter is in one of
// agentidem's framework adapters (a middleware that traces the tools a
// framework dispatches), or is the framework's line that calls one
// (callSite marks it): every call of such a tool has that site, whatever
// the agent did, so the site says nothing of where the call came from.
func adapterSite(pc uintptr) bool { return inAdapter(&adapterSites, pc) }

// adapterPackage reports whether pkg is one of agentidem's framework
// adapters (not an example of one).
func adapterPackage(pkg string) bool {
	return strings.HasPrefix(pkg, "github.com/agentidem/agentidem-go/adapters/") && !strings.Contains(pkg, "/examples")
}

// agentSite returns the file:line a context_detached warning names: the
// line of the user's code the call came from. That is the call site when
// the user's code called the traced function itself (a generated wrapper).
// When it did not (an adapter's middleware, called by a framework's tool
// dispatch), it is the innermost frame of the main module's code outside
// agentidem's own packages: the line that called the framework, often the
// one that dropped the agent's context (agent.Generate(context.Background(),
// ...)). Without such a frame on the goroutine (a server's goroutine), or
// without a main module, it is the call site. begin calls it, on the rare
// path of a detached context only: it unwinds the whole stack.
func agentSite(site uintptr) string {
	main := mainModule()
	if main == "" {
		return siteOf(site)
	}
	var pcs [64]uintptr
	n := goruntime.Callers(4, pcs[:]) // from Begin's caller (agentSite, begin, Begin)
	frames := goruntime.CallersFrames(pcs[:n])
	first := true
	for {
		f, more := frames.Next()
		if !first && userFrame(f, main) {
			return f.File + ":" + strconv.Itoa(f.Line)
		}
		first = false // the traced function itself, which called Begin
		if !more {
			return siteOf(site)
		}
	}
}

// mainModule is the path of the main module of the binary ("" when it is
// unknown), whose code is the user's (for a test binary, the module of the
// package under test).
var mainModule = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path == "command-line-arguments" {
		return ""
	}
	return bi.Main.Path
})

// userFrame reports whether f runs code of the main module that is not
// agentidem's own: not the runtime, and not an adapter's package (its tests
// and examples are the user's code in this repository's own modules).
func userFrame(f goruntime.Frame, main string) bool {
	pkg := strings.TrimSuffix(funcPackage(f.Function), "_test")
	if pkg != main && !strings.HasPrefix(pkg, main+"/") {
		return false
	}
	const self = "github.com/agentidem/agentidem-go/"
	if pkg == self+"runtime" {
		return false
	}
	if adapterPackage(pkg) && !strings.HasSuffix(f.File, "_test.go") {
		return false
	}
	return true
}

// funcPackage returns the import path of the package of a function's full
// name ("example.com/a/b.(*T).M" is "example.com/a/b"). A dot in the last
// element of the path is written %2e there ("gopkg.in/yaml%2ev3.Unmarshal").
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		fn = fn[:slash+1+dot]
	}
	return strings.ReplaceAll(fn, "%2e", ".")
}
