package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/internal/hookcode"
)

// A correct agent scheduled a reminder through a traced write, whose tool
// called a mailer of another package of its module that armed
// time.AfterFunc(2s, ...) closing a channel, then waited on that channel in
// its own code: <-t.M.Confirmation(id). The stall watch read only the
// waiting goroutine's frames and their callees, saw no timer, and called
// it a proven deadlock after 1.3 s: the correct agent's baseline failed
// (red team rtX #3). The same with a timer that Setup built
// (sched.NewWindow(2s), whose Open returns the timer's channel). A pending
// timer has no goroutine, so no stack shows it: the code that armed it ran
// and returned before the wait began.
//
// So before a deadlock is decided early, the stall watch also reads the
// code of what ran before the wait and may have left a timer behind: the
// function of each traced call the scenario made (an annotated function,
// found through its op's Pos next to the generated file that declared it;
// for an op declared by hand, the function that made the call, and the
// functions of its package it calls) and each Setup function, with the
// functions they call three calls deep in any package of the module, as the
// waiting functions' are (calleeTimers). Where any holds a timer word, or
// where one cannot be read (an op called through an adapter, whose tool
// is a function value; a Setup of a library's), the stall waits for its
// bound.
//
// A read that follows such a write is judged with it in mind: the state
// may change during the read by the write's timer firing, or by work the
// write started in a goroutine that outlived it (red team rtX #2: a read
// waiting for a mail that the write before it had scheduled was told that
// "the world held still" and that it changed the world itself). Such a
// read is not checked (readwrites.go); a read before any such write is.

func init() {
	hookcode.Setup = func(run, code func(context.Context) error) any {
		return setupOf(run, code)
	}
}

// setupOf is Setup(run), whose code for the stall watch is code's.
func setupOf(run, code func(context.Context) error) Option {
	site := funcCodeSite(code)
	return optionFunc(func(c *config) {
		if run != nil {
			c.setups = append(c.setups, run)
			c.setupCode = append(c.setupCode, site)
		}
	})
}

// funcCodeSite returns where fn's code is, "path:line" of its first line,
// or "" where it is not the user's code (a library's, the harness's) or
// not known.
func funcCodeSite(fn any) string {
	v := reflect.ValueOf(fn)
	if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	f := goruntime.FuncForPC(v.Pointer())
	if f == nil {
		return ""
	}
	file, line := f.FileLine(f.Entry())
	if timerFrame(f.Name(), file) != userCode {
		return ""
	}
	return fmt.Sprintf("%s:%d", file, line)
}

// codeTimer is what reading one function's code found.
type codeTimer struct {
	timer bool // it, or a function it calls, sets or waits on a timer
	goes  bool // it starts a goroutine ("go ")
	ok    bool // its code was read
}

// codeTimers caches readCodeTimer by site and how it was read.
var codeTimers sync.Map // string → codeTimer

// readCodeTimer reads the function that holds site ("path:line"): the
// function literal that starts on that line where literal is set, else
// the top-level function. deep: its callees are read three calls deep in
// any package of the module (calleeTimers); else only the functions of
// its own package it calls by name, one deep (the function that made a
// hand-written traced call, whose helper that begins the call calls the
// harness's methods, which calleeTimers cannot read).
func readCodeTimer(site string, literal, deep bool) codeTimer {
	key := fmt.Sprintf("%s\x00%t\x00%t", site, literal, deep)
	if v, ok := codeTimers.Load(key); ok {
		return v.(codeTimer)
	}
	var text string
	ok := false
	if literal {
		text, ok = literalText(site)
	}
	if !ok {
		text, ok = funcText(site)
	}
	ct := codeTimer{ok: ok}
	if ok {
		ct.goes = goStatement(text)
		switch {
		case timerWords(text):
			ct.timer = true
		case deep:
			ct.timer = calleeTimers(site, text)
		default:
			path, _, _ := strings.Cut(site, ":")
			for _, name := range calledNames(text) {
				for _, f := range pkgFuncs(filepath.Dir(path))[name] {
					ct.timer = ct.timer || timerWords(f.text)
					ct.goes = ct.goes || goStatement(f.text)
				}
			}
		}
	}
	codeTimers.Store(key, ct)
	return ct
}

// literalText returns the text of the function literal that starts on
// site's line: from that line to the brace that closes the first one
// opened after "func(" on it, the code before "func(" on that line left
// out (the call that is given the literal).
func literalText(site string) (string, bool) {
	lines, n, ok := siteLines(site)
	if !ok {
		return "", false
	}
	at := strings.Index(lines[n-1], "func(")
	if at < 0 {
		return "", false
	}
	return blockText(lines, n, at)
}

// siteLines returns the lines of the file of site ("path:line") and the
// line's number, from 1.
func siteLines(site string) (lines []string, n int, ok bool) {
	i := strings.LastIndexByte(site, ':')
	if i < 0 {
		return nil, 0, false
	}
	if _, err := fmt.Sscanf(site[i+1:], "%d", &n); err != nil || n < 1 {
		return nil, 0, false
	}
	b, err := os.ReadFile(site[:i])
	if err != nil {
		return nil, 0, false
	}
	lines = strings.Split(string(b), "\n")
	if n > len(lines) {
		return nil, 0, false
	}
	return lines, n, true
}

// blockText returns the text of lines from line n (from 1), column at,
// to the brace that closes the first one opened there.
func blockText(lines []string, n, at int) (string, bool) {
	depth, opened := 0, false
	for i := n - 1; i < len(lines); i++ {
		line := lines[i]
		if i == n-1 {
			line = line[at:]
		}
		for _, ch := range line {
			switch ch {
			case '{':
				depth++
				opened = true
			case '}':
				depth--
			}
			if opened && depth == 0 {
				return strings.Join(append([]string{lines[n-1][at:]}, lines[n:i+1]...), "\n"), true
			}
		}
	}
	return "", false
}

// callCode reads the code of traced call c's tool: the annotated function
// where its op says where it is (Pos, beside the generated file that
// declared it), else the function of the user's code that made the call.
func callCode(c *Call) codeTimer {
	if op := c.op; op.Pos != "" && filepath.IsAbs(op.genFile) {
		base, line, _ := strings.Cut(op.Pos, ":")
		return readCodeTimer(filepath.Join(filepath.Dir(op.genFile), filepath.Base(base))+":"+line, false, true)
	}
	if c.pc == 0 {
		return codeTimer{}
	}
	f := goruntime.FuncForPC(c.pc)
	if f == nil {
		return codeTimer{}
	}
	file, line := f.FileLine(c.pc - 1)
	if timerFrame(f.Name(), file) != userCode {
		return codeTimer{} // an adapter's or a framework's: the tool is a function value
	}
	return readCodeTimer(fmt.Sprintf("%s:%d", file, line), false, false)
}

// scenarioCodeClear reports whether the code of the scenario's traced
// calls that ran and of its Setup functions was read, and none may have
// left a timer pending (see above). Only the stall watch calls it.
func (r *recorder) scenarioCodeClear() bool {
	for _, site := range r.world.setupCode {
		if site == "" {
			return false
		}
		if ct := readCodeTimer(site, true, true); !ct.ok || ct.timer {
			return false
		}
	}
	for _, c := range r.allCalls() {
		if ct := callCode(c); !ct.ok || ct.timer {
			return false
		}
	}
	return true
}

// allCalls returns the calls the run made so far.
func (r *recorder) allCalls() []*Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Call
	for _, chunk := range r.calls {
		out = append(out, chunk...)
	}
	return out
}

// writeLeftWork reports whether a write of the run that ended before read
// c ended may have left work that outlives it: its code (as callCode reads
// it) sets a timer or starts a goroutine.
func writeLeftWork(c *Call) bool {
	for _, w := range c.inv.rec.allCalls() {
		if w == c || w.op.Kind != KindWrite {
			continue
		}
		w.mu.Lock()
		ended := w.rec.ended
		w.mu.Unlock()
		if !ended {
			continue
		}
		if ct := callCode(w); ct.ok && (ct.timer || ct.goes) {
			return true
		}
	}
	return false
}

// earlyStallNote is the scenario's note of a stall decided before its
// bound by reading code.
const earlyStallNote = "the stall was decided before StallTimeout, by reading code: the scenario's goroutines all waited for good, and no code on their stacks, nor of the calls and Setup of the scenario, sets a timer; a timer made where that reading does not reach (more than two calls away, in a library reached through a method of a type of your own) is not seen, and such a wait is taken for a deadlock: give it a select with the agent's ctx.Done()"

// earlyStalls returns the report's note of the scenarios whose stall was
// decided early (earlyStallNote), or none.
func earlyStalls(results []*Result) []string {
	var names []string
	for _, res := range results {
		if res != nil && res.Trace != nil && slices.Contains(res.Trace.Notes, earlyStallNote) {
			names = append(names, res.Scenario)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the stall of %s was decided before StallTimeout by reading code, not seen for the whole bound: every goroutine of the scenario waited for good, and no code on their stacks, nor of the traced calls and Setup of the scenario, sets a timer that could end the wait; a timer made where that reading does not reach is not seen (README, on stalls)", strings.Join(names, ", "))}
}

// goStatement reports whether src, a function's text, starts a goroutine:
// the word go, alone, before a call or a function literal.
func goStatement(src string) bool {
	for i := 0; ; {
		j := strings.Index(src[i:], "go ")
		if j < 0 {
			return false
		}
		i += j
		if (i == 0 || !isIdentByte(src[i-1]) && src[i-1] != '.') && i+3 < len(src) && isIdentByte(src[i+3]) {
			return true
		}
		i += 3
	}
}
