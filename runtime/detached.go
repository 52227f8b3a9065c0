package runtime

import (
	"slices"
	"strconv"
	"strings"
)

// detachedFinding is the warning for the tool calls made from sites with
// a context that does not come from the agent's, by the agent's own
// goroutines: one finding for all of them, not one per site. When every
// traced call of the run had such a context, the agent's ctx was dropped
// before the first of them, on the way from the function the suite calls
// to its tools (Agent(context.Background(), ...) in a test's agent
// function): the warning says so, where the sites alone (each a correct
// call that passes on the ctx it was given) pointed at the wrong lines
// (red team rtV #3: five warnings, one per line of a correct agent).
func detachedFinding(tr *Trace, sites []string) Finding {
	short := make([]string, len(sites))
	for i, site := range sites {
		short[i] = shortSite(site)
	}
	slices.Sort(short)
	short = slices.Compact(short)
	all, calls := len(tr.odd().handlerSites) == 0 && len(tr.odd().serverSites) == 0, 0
	for i := range tr.Ops {
		if tr.Ops[i].Detached {
			calls++
		} else {
			all = false
		}
	}
	var b strings.Builder
	if all && calls > 1 {
		b.WriteString("every traced call of the run (" + strconv.Itoa(calls) + ", from " + strings.Join(short, ", ") + ") was given a context that does not come from the agent's (context.Background(), or one kept from elsewhere): the agent's ctx was dropped before the first of them, between the function the suite calls and its tools (where it passes its ctx on, or its first callee does); ")
	} else if len(short) == 1 {
		b.WriteString("a tool was called from " + short[0] + " with a context that does not come from the agent's (context.Background(), or one kept from elsewhere): ")
	} else {
		b.WriteString("tools were called from " + strings.Join(short, ", ") + " with a context that does not come from the agent's (context.Background(), or one kept from elsewhere): ")
	}
	if len(short) == 1 && !(all && calls > 1) {
		b.WriteString("the call was attributed by its goroutine, but the agent's cancellation (a crash, a deadline) never reaches it; pass the agent's ctx")
	} else {
		b.WriteString("the calls were attributed by their goroutine, but the agent's cancellation (a crash, a deadline) never reaches them; pass the agent's ctx")
	}
	return Finding{Code: CodeContextDetached, Severity: SeverityWarning, Message: b.String()}
}
