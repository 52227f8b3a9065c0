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
//
// plain are the sites of the trace's such calls, fresh those no finding of
// the suite named yet. every says the finding is the one of a run whose
// every call had such a context; it names all of plain, the other kind
// fresh.
func detachedFinding(tr *Trace, plain, fresh []string) (f Finding, every bool) {
	short := func(sites []string) []string {
		out := make([]string, len(sites))
		for i, site := range sites {
			out[i] = shortSite(site)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	all, calls := len(tr.odd().handlerSites) == 0 && len(tr.odd().serverSites) == 0, 0
	for i := range tr.Ops {
		if tr.Ops[i].Detached {
			calls++
		} else {
			all = false
		}
	}
	every = all && calls > 1
	sites := short(fresh)
	if every {
		sites = short(plain)
	}
	var b strings.Builder
	if every {
		b.WriteString("every traced call of the run (" + strconv.Itoa(calls) + ", from " + strings.Join(sites, ", ") + ") was given a context that does not come from the agent's (context.Background(), or one kept from elsewhere): the agent's ctx was dropped before the first of them, between the function the suite calls and its tools (where it passes its ctx on, or its first callee does); ")
	} else if len(sites) == 1 {
		b.WriteString("a tool was called from " + sites[0] + " with a context that does not come from the agent's (context.Background(), or one kept from elsewhere): ")
	} else {
		b.WriteString("tools were called from " + strings.Join(sites, ", ") + " with a context that does not come from the agent's (context.Background(), or one kept from elsewhere): ")
	}
	if len(sites) == 1 && !every {
		b.WriteString("the call was attributed by its goroutine, but the agent's cancellation (a crash, a deadline) never reaches it; pass the agent's ctx")
	} else {
		b.WriteString("the calls were attributed by their goroutine, but the agent's cancellation (a crash, a deadline) never reaches them; pass the agent's ctx")
	}
	return Finding{Code: CodeContextDetached, Severity: SeverityWarning, Message: b.String()}, every
}
