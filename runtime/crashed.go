package runtime

import "context"

// Crashed reports whether ctx belongs to a delivery of an active run that
// the fault suite crashed (crash_restart), or, for a ctx that carries no
// run (context.Background()), whether the calling goroutine is one of
// such a delivery's.
//
// The suite's crash is not the process's death: it ends the delivery's
// context and the goroutines that make a later traced call, and the code
// between the crash and that call still runs, deferred functions too. A
// real crash runs none of it. Code that keeps state across the crash
// asks Crashed before it writes what a dead process never would: idem.Store
// leaves the key it holds pending, as a dead holder does, where its
// release on the way out let the restart claim the key afresh and run the
// work again without recovering it (a red team's charge made twice, by
// idem.Do with WithRecover, the toolkit's own fix). Outside an active run
// it returns false.
func Crashed(ctx context.Context) bool {
	if !Enabled() {
		return false
	}
	if ctx != nil {
		switch v := ctx.Value(enclosingKey{}).(type) {
		case *Call:
			return v.inv != nil && v.inv.dead.Load()
		case *invocation:
			return v.dead.Load()
		}
	}
	// Told by the goroutine, which takes a snapshot of every goroutine:
	// only while an active run has crashed a delivery.
	for _, r := range activeRecorders() {
		if r.didCrash() {
			inv := claimedByGoroutine()
			return inv != nil && inv.dead.Load()
		}
	}
	return false
}
