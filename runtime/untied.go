package runtime

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// A write request that goes through Transport while a run is active, but
// that no traced call can be tied to, is sent as is: its context carries
// no call, and its goroutine is no call's, nor one a call open now started
// (an SDK's dispatcher goroutine that sends with a context of its own,
// made before the suite or in Setup; a goroutine a tool left sending
// after it returned, where the goroutine that started it made more than
// one write: see leftSending). No lost_response is planned for it, and a client
// that sends it again after a lost answer is never met: a payments SDK
// that retried without a key passed 7 runs of 7, and the only note told
// the user to wrap the client with runtime.Transport, which they had (red
// team rR #1). The run records such requests (noteUntied), its trace says
// which were sent and why they could not be tested, and a baseline that
// sent one is inconclusive: the suite cannot say the retries of those
// requests are safe.

// A goroutine a tool started and left sending after the call returned (a
// notification sent fire and forget, retried on timeouts) sends with no
// call open on it or above it. Where the goroutine that started it, or
// the nearest of its ancestors that made calls in the run, made one write
// alone, the request is that write's (leftSending): its lost_response is
// planned and the client's retry met, where both twins of such a
// notifier were inconclusive (rR #1c, after 4ee6b32; before that, the
// buggy one passed with a Settle). A goroutine whose ancestor made two
// writes or more cannot say which began it, and stays untied.

// leftSending returns the write of the active run (recs, when it is the
// only one) that goroutine gid sends a request for, where the run tells
// (see above), or nil; parent maps each goroutine alive to the one that
// started it.
func leftSending(recs []*recorder, gid uint64, parent map[uint64]uint64) *Call {
	if len(recs) != 1 || gid == 0 {
		return nil
	}
	r := recs[0]
	if r.stopped.Load() {
		return nil
	}
	// The sending goroutine's parent may have ended (an invocation's
	// goroutine, once its agent returned): its id is still the one its
	// calls were made on.
	for id, i := parent[gid], 0; id != 0 && i < 64; id, i = parent[id], i+1 {
		c, made := onlyWriteOn(r, id)
		if !made {
			continue
		}
		if c != nil {
			// Sent after its call returned, by a goroutine the call
			// left running, which may outlive the agent in another
			// run: the runs wait for such goroutines as they do for
			// those that call tools after the agent returned
			// (Suite.leavesCallers), so that the request and its
			// retries are the run's on every run, not sent once it
			// ended.
			r.afterReturn.Store(true)
		}
		return c
	}
	return nil
}

// onlyWriteOn reports whether goroutine gid made calls in r's run, and
// returns the one write it made, nil where it made none or more than one.
func onlyWriteOn(r *recorder, gid uint64) (c *Call, made bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, chunk := range r.calls {
		for _, x := range chunk {
			if x.gid != gid {
				continue
			}
			made = true
			if x.op.Kind != KindWrite {
				continue
			}
			if c != nil {
				return nil, true
			}
			c = x
		}
	}
	return c, made
}

// maxUntied bounds the requests a run records.
const maxUntied = 8

// noteUntied records req, a write request no call is tied to
// (sendingCall), on the run that is active, when exactly one is.
func noteUntied(req *http.Request) {
	recs := activeRecorders()
	if len(recs) != 1 {
		return
	}
	r := recs[0]
	if r.stopped.Load() {
		return
	}
	what := req.Method + " " + req.URL.Host + req.URL.Path
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.rareLocked()
	if len(x.untied) < maxUntied && !slices.Contains(x.untied, what) {
		x.untied = append(x.untied, what)
	}
}

// untiedNote says which write requests the run sent through Transport that
// no call could be tied to, or "" for none.
func untiedNote(untied []string) string {
	if len(untied) == 0 {
		return ""
	}
	return fmt.Sprintf("write requests went through runtime.Transport that no traced call could be tied to (%s): each was sent with a context that carries no call, from a goroutine that no call open then started (an SDK's own dispatcher goroutine, made before the suite or in Setup, sending with a context of its own; a goroutine a tool left sending after it returned, started by a goroutine that made more than one write), so no lost_response was planned for it, and whether its client sends it again after a lost answer, and whether the service then applies it twice, is not tested; send it with the tool's ctx (req.WithContext(ctx), or the SDK's option for a per-request context), or start the sending goroutine inside the call", strings.Join(untied, ", "))
}
