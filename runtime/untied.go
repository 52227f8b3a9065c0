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
// after it returned). No lost_response is planned for it, and a client
// that sends it again after a lost answer is never met: a payments SDK
// that retried without a key passed 7 runs of 7, and the only note told
// the user to wrap the client with runtime.Transport, which they had (red
// team rR #1). The run records such requests (noteUntied), its trace says
// which were sent and why they could not be tested, and a baseline that
// sent one is inconclusive: the suite cannot say the retries of those
// requests are safe.

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
	return fmt.Sprintf("write requests went through runtime.Transport that no traced call could be tied to (%s): each was sent with a context that carries no call, from a goroutine that no call open then started (an SDK's own dispatcher goroutine, made before the suite or in Setup, sending with a context of its own; a goroutine a tool left sending after it returned), so no lost_response was planned for it, and whether its client sends it again after a lost answer, and whether the service then applies it twice, is not tested; send it with the tool's ctx (req.WithContext(ctx), or the SDK's option for a per-request context), or start the sending goroutine inside the call", strings.Join(untied, ", "))
}
