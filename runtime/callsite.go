package runtime

import (
	goruntime "runtime"
	"strconv"
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
// read in Begin (ret 0: not available on this platform). It is called by
// Begin only: its Callers skip counts callSite, Begin and the wrapper.
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
	var pcs [1]uintptr
	if goruntime.Callers(4, pcs[:]) != 1 {
		return 0
	}
	if ret != 0 {
		fastSites.Store(ret, pcs[0] == site)
	}
	return pcs[0]
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
