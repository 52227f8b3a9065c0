package runtime

import (
	"slices"
	"strconv"
	"strings"
)

// notRetried returns the report's note when the suite injected faults
// whose errors reached the agent and the agent retried none of them: in
// every fault scenario whose fault fired as an error the agent saw (a lost
// acknowledgement, a lost request, a failure before the operation, a
// partial batch failure; not a crash, whose invocation ends), no call of
// the faulted op followed the faulted one in its invocation. It returns
// nil when there is no such scenario, or when one shows a retry.
//
// Such an agent may not retry at all, and is safe from these faults at its
// tools' boundary; or it retries only on errors the injected one is not.
// Neither says anything of a retry inside a call (a retrying HTTP client
// in the tool body), which these faults never meet: the note said "An
// agent that does not retry is safe from these faults" of agents whose
// SDK or HTTP helper re-sent a write below the boundary and applied it
// twice (red teams rtR #1, rtS #2). It says so now, and, where a write's
// body was seen in such a retry (retriedInsideNote), that the suite is no
// evidence of safety. An injected fault is a
// *InjectedError, a timeout that is no *url.Error and carries no HTTP
// status: an agent that retried only on those never retried under test,
// and was reported SAFE with nothing said, while a real lost answer made
// it book twice on every run (red team rtK, examples/booking). The note
// says both, true of either agent, and names FaultError, which makes the
// faults return the errors the agent looks for. chosen says FaultError
// was given: the errors were those it chose, and the note says so.
//
// A retry is told by the op alone, as the agent's loop calls it again
// (with the same arguments or not): an agent that goes on to another call
// of the op after an error (the next item of a list) is taken to retry,
// and gets no note. The note stays silent where it cannot tell. It speaks
// of traced calls only: a retry through the raw tool (w.Pay where
// w.PayTraced failed) is no call the suite sees, and the note said "the
// agent did not call the failed op again" of an agent that paid twice
// that way (red team rtO #3); with State, such a scenario's end tells
// (unexplained.go), and agentidem-vet reports the direct call. A scenario
// that stalled is no evidence either way: the bound cut it off.
func notRetried(results []*Result, chosen bool) []string {
	var kinds []string
	n := 0
	for _, res := range results {
		if res == nil || res.Fault == nil || !res.FaultFired || res.Trace == nil || !seenAsError(res.Fault.Kind) {
			continue
		}
		if resultHas(res, CodeStalled) {
			// Cut off by the stall bound, maybe in the very back-off
			// before its retry (a backoff.Retry of 12 s against the 10 s
			// bound): no call followed because none had the time to,
			// and the note sent the user looking for FaultError and
			// Transport (red team rtW #10). The stall's own finding says
			// where the agent waited.
			continue
		}
		ops := res.Trace.Ops
		for i := range ops {
			if f := ops[i].Fault; f == FaultNone || !seenAsError(f) {
				continue
			}
			if calledAgain(ops, &ops[i]) {
				return nil
			}
		}
		n++
		if k := string(res.Fault.Kind); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if n == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("no injected fault was retried: after the injected error of each of ")
	if n == 1 {
		b.WriteString("its 1 fault scenario")
	} else {
		b.WriteString("its " + strconv.Itoa(n) + " fault scenarios")
	}
	b.WriteString(" (" + strings.Join(kinds, ", ") + ")")
	if chosen {
		b.WriteString(", the error FaultError gave where it gave one")
	}
	b.WriteString(", no traced call of the failed op followed. ")
	// Short, with where to read more: it heads the summary of most
	// agents, which do not retry (red team rtV #22a: a thousand bytes
	// of it was read as noise).
	if lostResponses(results) {
		b.WriteString("The lost_response scenarios met the retries inside the calls of writes whose HTTP clients go through runtime.Transport, and their results say what each did. Not tested, since no fault meets them: a retry inside the calls of other writes (wrap their HTTP clients with runtime.Transport; a gRPC client's retries need a fake server that applies a write, then answers UNAVAILABLE once); ")
	} else if retriedInside(results) {
		b.WriteString("A write's tool was seen retrying inside its call all the same (the scenario's note names it), below the boundary where these faults are injected: they never met that retry, and the suite is no evidence that it is safe. Not tested either: ")
	} else {
		b.WriteString("Not tested, since no fault meets them: a retry inside a tool call (a retrying HTTP client or SDK, a helper that sends a request again: wrap an HTTP client with runtime.Transport, whose lost_response meets it; a gRPC client's retries need a fake server that applies a write, then answers UNAVAILABLE once); ")
	}
	b.WriteString("a retry through the raw tool (go tool agentidem-vet reports it); ")
	if chosen {
		b.WriteString("a retry on other errors than FaultError's (make FaultError return them). ")
	} else {
		b.WriteString("a retry only on particular errors, such as a *url.Error or a 503 (give those with testkit.FaultError). ")
	}
	b.WriteString("See docs/guide.md, section 5.")
	return []string{b.String()}
}

// retriedInside reports whether a scenario's trace notes a write whose
// tool body was seen in its client's retry back-off (retriedInsideNote).
func retriedInside(results []*Result) bool {
	for _, res := range results {
		if res == nil || res.Trace == nil {
			continue
		}
		if slices.ContainsFunc(res.Trace.Notes, func(n string) bool { return strings.Contains(n, retriedInsideMark) }) {
			return true
		}
	}
	return false
}

// lostResponses reports whether the suite ran a lost_response scenario:
// some write's requests went through Transport.
func lostResponses(results []*Result) bool {
	return slices.ContainsFunc(results, func(r *Result) bool {
		return r != nil && r.Fault != nil && r.Fault.Kind == FaultLostResponse
	})
}

// seenAsError reports whether fault kind k reaches the agent as an error
// it may retry on: every kind but a crash, after which the invocation is
// gone and the next delivery, not a retry, calls again.
func seenAsError(k FaultKind) bool {
	switch k {
	case FaultLostAck, FaultLostRequest, FaultBefore, FaultConflict:
		return true
	}
	return false
}

// calledAgain reports whether the invocation of call o started another
// call of o's op after it.
func calledAgain(ops []Operation, o *Operation) bool {
	for i := range ops {
		if p := &ops[i]; p.Name == o.Name && p.Invocation == o.Invocation && p.Seq > o.Seq {
			return true
		}
	}
	return false
}
