package runtime

import (
	"fmt"
	"strings"
	"time"
)

// A keyed, correct agent whose cenkalti/backoff/v5 Retry waited 12 s
// between tries, past the 10 s stall bound, read UNSAFE: "stalled ...
// delivery 1 is blocked in a select at agent.go:79", though the harness
// knew the frame for a timed wait that ends by itself (timedWaits), and the
// README promised such a goroutine a message naming the back-off (red
// team rtW #8). Only the API clients' back-offs (retryBackoffs) were told
// so.
//
// So a goroutine asleep in a retry loop's back-off or a rate limiter's
// wait (retryLoop: cenkalti/backoff, avast/retry-go, sethvargo/go-retry,
// x/time/rate) is told as the clients' are: what it is, how long it had
// slept at least, and that a StallTimeout above the back-off is the
// remedy. And a stall in which every blocked goroutine of the scenario is
// in such a wait, with no call held at a gate, is slow, not stuck: nothing
// unsafe was seen, so the scenario is inconclusive (a warning), not
// failed. A stall with any goroutine that truly waits for another stays an
// error.

// retryLoopWhy is why a goroutine in a retry loop's or a rate limiter's
// timed wait is asleep, in a stall's message.
const retryLoopWhy = "in a retry loop's back-off or a rate limiter's wait, asleep on a timer"

// retryWaiting reports whether g sleeps in a retry back-off: an API
// client's (retryBackoffWhy) or a retry loop's or rate limiter's
// (retryLoopWhy), and which.
func (g *gInfo) retryWaiting() (string, bool) {
	busy, why := g.busy(time.Time{})
	switch {
	case busy && why == retryBackoffWhy:
		return why, true
	case busy && why == timedWaitWhy && len(g.funcs) > 0 && retryLoop(g.funcs[0]):
		return retryLoopWhy, true
	}
	return "", false
}

// retryLoopName names the library of a retry loop's or rate limiter's
// wait, f its function.
func retryLoopName(f string) string {
	switch {
	case strings.HasPrefix(f, "github.com/cenkalti/backoff/"):
		return "cenkalti/backoff's retry loop"
	case strings.HasPrefix(f, "github.com/avast/retry-go/"):
		return "avast/retry-go's retry loop"
	case strings.HasPrefix(f, "github.com/sethvargo/go-retry."):
		return "sethvargo/go-retry's retry loop"
	case strings.HasPrefix(f, "golang.org/x/time/rate."):
		return "x/time/rate's Limiter, waiting for a token"
	}
	return "a retry loop's back-off"
}

// retryLoopAdvice is backoffAdvice's text for goroutine g in a retry
// loop's or rate limiter's wait, how it had slept.
func retryLoopAdvice(g *gInfo, how string) string {
	return fmt.Sprintf("goroutine %d was not stuck but %s in %s (%s, at %s), waiting on a timer that ends by itself before it tries again: raise the bound with StallTimeout above the back-off's longest wait, or make the back-off in the test shorter", g.id, how, retryLoopName(g.funcs[0]), backoffClient(g.funcs[0]), g.where())
}

// onlyRetryWaits reports whether every goroutine of gs that a stall names
// (world.blocked's) sleeps in a retry back-off (retryWaiting), one at
// least: the scenario is slow, not stuck.
func onlyRetryWaits(gs []gInfo) bool {
	n := 0
	for i := range gs {
		g := &gs[i]
		if g.atGate() || g.harnessWait() || g.state == "IO wait" && g.idleConnection() || g.has("(*persistConn).writeLoop") || g.has("(*connReader).backgroundRead") {
			continue
		}
		if _, ok := g.retryWaiting(); !ok {
			return false
		}
		n++
	}
	return n > 0
}

// slowStallText ends the message of a stall that onlyRetryWaits.
const slowStallText = "; every goroutine the scenario waited for was asleep in a retry back-off, which ends by itself: the scenario was slow, not stuck, and nothing unsafe was seen, so it is inconclusive, not failed"
