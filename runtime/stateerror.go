package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"strings"
	"sync"
)

// What State's own failures (a panic, a value JSON cannot encode) do to a
// suite. A State that fails in the baseline is a misconfigured suite, as a
// bad AGENTIDEM_* value is: it fails the test before any verdict, naming
// the option, the value's type or the panic value and where (Suite.Baseline,
// a *ConfigError). Left to the judge, every repeat was "not judged", the
// suite INCONCLUSIVE, and `go test` printed ok for the README's
// double-refund agent: the harness's own configuration hid a true
// duplicate (red team rtO, /tmp/rtO/user/misuse TestStateFunc,
// TestStateChan, TestStatePanics). A State that works in the baseline and
// fails in a scenario (a world that reaches a state State cannot read)
// leaves that scenario's repeats unjudged, and the scenario inconclusive,
// with a note (judgeRepeatsIn).

// stateFailure keeps the first error of a judge's State (snapshot): the
// judge's lock may be held by the snapshot's caller, or not, so it has a
// lock of its own.
type stateFailure struct {
	mu    sync.Mutex
	first error
}

func (f *stateFailure) note(err error) {
	f.mu.Lock()
	if f.first == nil {
		f.first = err
	}
	f.mu.Unlock()
}

func (f *stateFailure) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first
}

// stateEncodeError says that State returned v, which Canonical could not
// encode (err): the value's type, and the type inside it that JSON refuses
// (json: unsupported type: chan int), not Canonical's words for an
// identity.
func stateEncodeError(v any, err error) error {
	why := err
	if inner := errors.Unwrap(err); inner != nil {
		why = inner
	}
	return fmt.Errorf("State's value of type %T cannot be encoded: %w", v, why)
}

// statePanicError says that State panicked with v, and where: the one
// frame the panic left, not the goroutine's stack (twenty lines joined
// with " | " in the note and on the HTML page, red team rtO #7). It is
// called in the deferred function that recovered v, while the panicking
// frames are still on the stack.
func statePanicError(v any) error {
	if site := panicSite(); site != "" {
		return fmt.Errorf("State panicked: %v (at %s)", v, site)
	}
	return fmt.Errorf("State panicked: %v", v)
}

// panicSite returns the frame that panicked, as "file.go:12 in
// pkg.Func", for a deferred function that recovers: the first frame
// below the panic that is not the Go runtime's (runtime.panicmem and
// runtime.sigpanic are, for a nil pointer). "" when there is none.
func panicSite() string {
	var pcs [32]uintptr
	frames := goruntime.CallersFrames(pcs[:goruntime.Callers(2, pcs[:])])
	below := false
	for {
		f, more := frames.Next()
		if below && !strings.HasPrefix(f.Function, "runtime.") && f.Function != "" {
			return frameText(f.File, f.Line, f.Function)
		}
		below = below || f.Function == "runtime.gopanic"
		if !more {
			return ""
		}
	}
}

// frameText is a frame as a message gives it: file.go:12 in pkg.Func,
// the package by its last path element.
func frameText(file string, line int, fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		fn = fn[i+1:]
	}
	return fmt.Sprintf("%s:%d in %s", filepath.Base(file), line, fn)
}

// stateConfigError is the *ConfigError of a State that failed in the
// baseline (err, its first failure there): the option, where its func
// is, and what failed.
func stateConfigError(state func() any, err error) *ConfigError {
	where := "func() any"
	if f := goruntime.FuncForPC(reflect.ValueOf(state).Pointer()); f != nil {
		file, line := f.FileLine(f.Entry())
		where = frameText(file, line, f.Name())
	}
	return &ConfigError{Setting: "State", Value: where,
		Want: "failed in the baseline: " + errorText(err) + "; no write could be judged by the world, and no scenario ran; " +
			"State must return plain data that encoding/json encodes (maps, slices, strings, numbers, structs with exported fields), and must not panic, in every state of the world Setup builds"}
}

// stateAdvice ends the note of a repeat left unjudged because State or
// the Settle failed around it (judgeRepeatsIn): what to do, true of the
// failure at hand. State worked in the baseline (else the suite would not
// have run the scenario); a Settle's error is its own, a bound it reached
// or what its check returned.
func stateAdvice(stateErr string) string {
	if strings.HasPrefix(stateErr, settleTimeout) {
		return "fix the Settle, or raise its bound if the world takes longer than that to go quiet"
	}
	return "State worked in the baseline, but not in this scenario's world: make it read every state the world can be in"
}
