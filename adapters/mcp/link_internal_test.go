package agentidemmcp

import (
	"context"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// A token from Sent stays in transit until the call arrives, and is gone
// then: nothing waits for its answer, and nothing is kept per call.
func TestSentIsDoneOnceArrived(t *testing.T) {
	in := func(tok string) bool {
		links.mu.Lock()
		defer links.mu.Unlock()
		_, ok := links.transit[tok]
		return ok
	}
	_, err := runtime.Run(context.Background(), "sent", func(ctx context.Context) error {
		tok := Sent(ctx)
		if tok == "" {
			t.Error("Sent gave no token inside a run")
			return nil
		}
		if !in(tok) {
			t.Error("a sent call is not in transit")
		}
		Arrived(tok)
		if in(tok) {
			t.Error("an arrived call is still in transit")
		}
		Answering(tok) // no answer leg for Sent's tokens
		if in(tok) {
			t.Error("Answering put a Sent call back in transit")
		}
		never := Sent(ctx) // never arrives: gone with ctx
		if !in(never) {
			t.Error("a sent call is not in transit")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The one that never arrived goes when its ctx is done, in a
	// goroutine of context.AfterFunc's.
	n := 0
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		links.mu.Lock()
		n = len(links.transit)
		links.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			break
		}
	}
	if n != 0 {
		t.Errorf("%d calls left in transit after the run", n)
	}
	if tok := Sent(context.Background()); tok != "" {
		t.Errorf("Sent outside a run gave %q", tok)
	}
}
