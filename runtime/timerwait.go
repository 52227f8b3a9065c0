package runtime

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// A goroutine that waits on a timer's channel between two dispatches. An
// agent's own goroutine that starts create(O1), waits two milliseconds on a
// ticker (a client-side rate limit: <-tk.C, <-time.After(d), or a select on
// the ticker and ctx.Done()), then starts attach(O1) has the two calls in
// flight together in production. The invocation's own goroutine, and one
// that a call at a gate descends from, was never counted busy while parked
// on a channel (parkedOwn): it most often waits for what a held call
// answers (a fan-in). So the scheduler took create's round at once, alone,
// ran it to its end, and attach came after: dependent_calls_concurrent was
// never checked, the buggy agent SAFE in 8 of 8 runs, where the same
// stagger by time.Sleep was caught (red team rX, MISS 4). Where the line
// such a goroutine waits at receives from a timer's channel (or the select
// it waits in has such a case), it counts as busy for parkedGrace too.
// A fan-in that waits for results or a timeout (select on the results and
// on time.After) costs each of its rounds that grace, not a verdict.
//
// A time.AfterFunc's pending timer has no goroutine, and no stack shows
// it: the agent that started create(O1), armed time.AfterFunc(1 ms) to
// attach O1, and waited for both in wg.Wait, was SAFE on every run (rX
// MISS 3). A goroutine of the agent's blocked (on a channel, a lock, a
// WaitGroup) in a function of the user's code that armed an AfterFunc on
// an earlier line counts as busy for parkedGrace too (armsAfterFunc),
// unless the timer's duration is written out and longer than the grace
// (time.AfterFunc(30*time.Second, cancel), a deadline).

// waitsOnTimer reports whether parked goroutine g (gInfo.parked) waits at
// a line of its code that receives from a timer's channel: a channel
// receive there, or a select whose cases do.
func (g *gInfo) waitsOnTimer() bool {
	if len(g.files) == 0 {
		return false
	}
	return timerReceiveAt(g.files[0], strings.HasPrefix(g.state, "select"))
}

// timerPaced reports whether g, parked or blocked, may be waiting for a
// timer of the agent's to send its next call: waitsOnTimer, or
// armsAfterFunc.
func (g *gInfo) timerPaced() bool {
	return g.waitsOnTimer() || g.armsAfterFunc()
}

// armsAfterFunc reports whether g is blocked (on a channel, a lock, a
// WaitGroup) in a function of the user's code that armed a time.AfterFunc
// (or a clock's) on a line before the one it waits at, through callees or
// not (any frame of the user's code on its stack).
func (g *gInfo) armsAfterFunc() bool {
	if !blockedOnSync(g.state) {
		return false
	}
	for i := range g.funcs {
		if frameOf(g.funcs[i], g.files[i]) == userCode && afterFuncBefore(g.files[i]) {
			return true
		}
	}
	return false
}

// blockedOnSync reports whether a goroutine in state waits for another
// goroutine of the program: a channel, a select, a lock, a WaitGroup, a
// condition.
func blockedOnSync(state string) bool {
	st := strings.TrimSuffix(state, " (durable)")
	switch st {
	case "chan receive", "chan send", "select", "semacquire":
		return true
	}
	return strings.HasPrefix(st, "sync.")
}

// afterFuncs caches afterFuncBefore by site.
var afterFuncs sync.Map // string → bool

// afterFuncBefore reports whether the top-level function that holds site
// ("path:line") arms an AfterFunc on a line before site's, or on it, whose
// duration is not written out as longer than parkedGrace.
func afterFuncBefore(site string) bool {
	if v, ok := afterFuncs.Load(site); ok {
		return v.(bool)
	}
	found := false
	if lines, n, ok := siteLines(site); ok {
		start := n - 1
		for start > 0 && !topLevel(lines[start]) {
			start--
		}
		found = armsShortAfterFunc(strings.Join(lines[start:n], "\n"))
	}
	afterFuncs.Store(site, found)
	return found
}

// armsShortAfterFunc reports whether src calls AfterFunc (time's, or a
// clock's) with a duration that is not written out as longer than
// parkedGrace.
func armsShortAfterFunc(src string) bool {
	for i := 0; ; {
		j := strings.Index(src[i:], "AfterFunc(")
		if j < 0 {
			return false
		}
		i += j + len("AfterFunc(")
		arg := src[i:]
		if k := strings.IndexAny(arg, ",)"); k >= 0 {
			arg = arg[:k] + ")"
		}
		if d, ok := literalDuration(arg); ok && d > parkedGrace {
			continue
		}
		return true
	}
}

// timerReceives and timerSelects cache timerReceiveAt by site, for a
// channel receive and for a select: a parked goroutine is looked at on
// each look at the scenario, and its site's line read once.
var timerReceives, timerSelects sync.Map // string → bool

// timerReceiveAt reports whether the code at site ("path:line") receives
// from a timer's channel: on that line, or, for a select (sel), in the
// select statement that starts there, up to the brace that closes it.
func timerReceiveAt(site string, sel bool) bool {
	cache := &timerReceives
	if sel {
		cache = &timerSelects
	}
	if v, ok := cache.Load(site); ok {
		return v.(bool)
	}
	found := false
	if text, ok := statementAt(site, sel); ok {
		found = receivesFromTimer(text)
	}
	cache.Store(site, found)
	return found
}

// statementAt returns the text of the line at site, and for a block (a
// select) the lines up to the brace that closes the first one opened on
// it.
func statementAt(site string, block bool) (string, bool) {
	lines, n, ok := siteLines(site)
	if !ok {
		return "", false
	}
	if !block {
		return lines[n-1], true
	}
	return blockText(lines, n, 0)
}

// receivesFromTimer reports whether src holds a receive from a timer's
// channel: <-time.After(...), <-time.Tick(...), <-x.After(...) (a clock's),
// or <-x.C, a Timer's or a Ticker's field, or a for loop over one (for
// range tk.C: red team rY T7). A receive from ctx.Done() or from a channel
// of the agent's own is none.
func receivesFromTimer(src string) bool {
	return timerAfter(src, "<-") || timerAfter(src, "range ")
}

// timerAfter reports whether an expression that follows op in src ("<-",
// or "range " of a for loop over a channel: for range tk.C) is a timer's
// channel (receivesFromTimer).
func timerAfter(src, op string) bool {
	for i := 0; ; {
		j := strings.Index(src[i:], op)
		if j < 0 {
			return false
		}
		i += j + len(op)
		expr := strings.TrimLeft(src[i:], " \t")
		end := 0
		for end < len(expr) && (isIdentByte(expr[end]) || expr[end] == '.') {
			end++
		}
		name := expr[:end]
		if end < len(expr) && expr[end] == '(' {
			// A call: time.After(d), time.Tick(d), clock.After(d). One
			// whose duration is written out and longer than
			// parkedGrace (a fan-in's timeout, time.After(5 *
			// time.Second)) ends no wait within it: each round of such
			// a fan-in waited the grace out for nothing (red team rY:
			// 2,542 schedules in 134 s against 97).
			if name == "time.After" || name == "time.Tick" || strings.HasSuffix(name, ".After") {
				if d, ok := literalDuration(expr[end+1:]); ok && d > parkedGrace {
					continue
				}
				return true
			}
			continue
		}
		if strings.HasSuffix(name, ".C") {
			return true
		}
	}
}

// literalDuration reads the duration written out at the start of args, a
// call's arguments up to its closing parenthesis: time.Second, 5 *
// time.Second, 30*time.Millisecond, 2 * time.Minute. ok is false for
// anything else (a variable, a sum, a conversion).
func literalDuration(args string) (time.Duration, bool) {
	close := strings.IndexByte(args, ')')
	if close < 0 {
		return 0, false
	}
	text := strings.ReplaceAll(args[:close], " ", "")
	n := int64(1)
	if num, unit, ok := strings.Cut(text, "*"); ok {
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil || v < 0 {
			return 0, false
		}
		n, text = v, unit
	}
	units := map[string]time.Duration{"time.Nanosecond": time.Nanosecond, "time.Microsecond": time.Microsecond, "time.Millisecond": time.Millisecond, "time.Second": time.Second, "time.Minute": time.Minute, "time.Hour": time.Hour}
	u, ok := units[text]
	if !ok {
		return 0, false
	}
	return time.Duration(n) * u, true
}
