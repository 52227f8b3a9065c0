package agentidemmcp

import (
	"fmt"
	"sort"
)

// Misspelt returns the error that a call of tool gets while a run is
// active when a key of tools misspells it: the key names none of served
// (the server's tools) and tool, which no key names, is spelt nearly like
// it ("bookRoom" for book_room; toolspec.Tools.Misspelt). Nil otherwise.
//
// The SDK middlewares learn the server's tools only when it serves a call
// (tools are added after the middleware is built), too late to refuse the
// Tools map the way agentidemanthropic.Wrap does. Left alone, such a
// call runs untraced and never faulted, and the suite may pass an agent
// it never tested, with no word of the key. Refused with this error, it
// does not run, and the agent gets the error naming the key and the tool:
// an agent that returns its tool errors fails the baseline with it.
// Production (no run active) never gets here.
func Misspelt(tools Tools, tool string, served []string) error {
	if _, ok := tools[tool]; ok {
		return nil
	}
	var keys []string
	for k, t := range tools.Misspellings(served) {
		if t == tool {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	return fmt.Errorf("agentidem: Tools key %q names no tool of this server (did you mean %q?): call of %s refused in a test, where it would run untraced and never faulted; fix the key",
		keys[0], tool, tool)
}
