package runtime

import (
	"context"
	goruntime "runtime"
	"testing"
)

// A Teardown that calls t.FailNow (runtime.Goexit) stops the others given
// with it: unpanicked recovers panics only.
func TestTeardownThatEndsItsGoroutineStopsNoOther(t *testing.T) {
	var c config
	ran := false
	Teardown(func(context.Context) error { ran = true; return nil }).(optionFunc)(&c)
	Teardown(func(context.Context) error { goruntime.Goexit(); return nil }).(optionFunc)(&c)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.teardown(-1)(context.Background()) }()
	<-done
	if !ran {
		t.Fatal("the first Teardown did not run after the second called runtime.Goexit (t.FailNow)")
	}
}
