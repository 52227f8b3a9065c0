package runtime

// Waits in golang.org/x/sync, told for what they are (red team rtY #6,
// #7). A goroutine in semaphore.Weighted's Acquire is in a select (on its
// context and its turn), which a stall took for a library's timed long
// poll, telling the user that a longer StallTimeout might help: it waits
// for a holder to release the semaphore, a lock. A goroutine in
// singleflight.Group's Do waits on a sync.WaitGroup for the call another
// made with the same key, whose result it shares: two deliveries at once
// collapsed into one execution, which a concurrent delivery's note told
// as "the deliveries ran one after the other".

// xsyncSemaphoreWait reports whether g waits to acquire an
// x/sync/semaphore.Weighted.
func (g *gInfo) xsyncSemaphoreWait() bool {
	return g.has("golang.org/x/sync/semaphore.(*Weighted).Acquire")
}

// singleflightWait reports whether g waits in singleflight's Group.Do
// for another caller's call of the same key.
func (g *gInfo) singleflightWait() bool {
	return g.state == "sync.WaitGroup.Wait" && g.has("golang.org/x/sync/singleflight.(*Group).Do")
}

const (
	xsyncSemaphoreNote = ", waiting to acquire a golang.org/x/sync/semaphore.Weighted (its Acquire), a lock: it goes on when a holder releases it, and waits for good where the holder waits in turn for this goroutine (a channel send it is to receive)"
	singleflightNote   = ", waiting in singleflight's Group.Do for the call another goroutine made with the same key, whose result it shares: one execution serves both"
)

// xsyncWaitNote says what g waits for where it waits in x/sync; ""
// otherwise.
func (g *gInfo) xsyncWaitNote() string {
	switch {
	case g.xsyncSemaphoreWait():
		return xsyncSemaphoreNote
	case g.singleflightWait():
		return singleflightNote
	}
	return ""
}
