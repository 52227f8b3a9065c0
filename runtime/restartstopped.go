package runtime

import (
	"errors"
	"fmt"
)

// restartStopped returns a note when the restart of a crash_restart
// scenario did not reach the calls the baseline made: it returned an error
// no injected fault caused, having made fewer traced calls, and its last
// call, if any, did not fail. stoppedEarly tells the same of a duplicate
// delivery; here the likeliest cause is the process's memory, which the
// suite's crash does not reset: an in-process circuit breaker that counted
// the crash's cancellation as a failure opens, and the restart's call is
// refused before it is made (red team rtW #6: sony/gobreaker tripping on
// one failure; "circuit breaker is open", no traced call, where the
// baseline made one). A real restart is a new process whose breaker is
// closed, and it makes the call again: an unkeyed write is repeated, which
// this scenario, judged "ok" on the crashed delivery's calls alone, did
// not show. A restart that makes fewer calls and returns nil (it read,
// found the work done and stopped) was tested, as was one whose last call
// failed (its error is, most likely, that call's).
//
// errs holds the deliveries' errors, the restart's last (deliver).
func (s *Suite) restartStopped(tr *Trace, errs []error) string {
	n := len(errs) // the restart's invocation number
	err := errs[n-1]
	var injected *InjectedError
	if err == nil || errors.As(err, &injected) {
		return ""
	}
	ref := 0
	if s.base != nil {
		ref = len(s.base.Ops)
	}
	calls := 0
	var last *Operation
	for i := range tr.Ops {
		o := &tr.Ops[i]
		if o.Invocation != n {
			continue
		}
		calls++
		if last == nil || o.Seq > last.Seq {
			last = o
		}
	}
	if calls >= ref || last != nil && last.Error != "" {
		return ""
	}
	where := "before any traced call"
	if last != nil {
		where = fmt.Sprintf("after %d traced call(s), the last %s", calls, last.ID)
	}
	return fmt.Sprintf("crash_restart: the restart stopped %s with an error no injected fault caused (%s), where the baseline made %d: most likely in-memory state the restart shares with the crashed delivery stopped it (a circuit breaker that counted the crash's cancellation as a failure, a rate limiter, a cache), which a real restart, a new process, starts without; so this scenario did not test what a restart does and proves nothing; make such state per delivery in the test, or have the breaker not count a cancelled call (context.Canceled) as the service's failure: the caller cancelled it, and a breaker that counts it opens in production too while the service is well",
		where, errorText(err), ref)
}
