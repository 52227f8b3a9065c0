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
	key := misspeltBy(tools, tool, served)
	if key == "" {
		return nil
	}
	return fmt.Errorf("agentidem: Tools key %q names no tool of this server (did you mean %q?): call of %s refused in a test, where it would run untraced and never faulted; fix the key",
		key, tool, tool)
}

// MisspeltAnnotated is Misspelt for a call of tool that the server's own
// annotations trace (readOnlyHint or idempotentHint) while no key names
// it: the key that misspells it gave a Spec (an identity, an entity, after=,
// redact=) that the call would go without, traced by its annotations alone
// (an idempotent write's identity is then its whole arguments, and nothing
// is redacted). The SDK middlewares checked only untraced tools, and such
// a key passed in silence. Nil when no key misspells tool.
func MisspeltAnnotated(tools Tools, tool string, served []string) error {
	key := misspeltBy(tools, tool, served)
	if key == "" {
		return nil
	}
	return fmt.Errorf("agentidem: Tools key %q names no tool of this server (did you mean %q?): call of %s refused in a test, where its annotations alone would trace it, without the key's Spec; fix the key",
		key, tool, tool)
}

// misspeltBy returns the first (sorted) key of tools that misspells tool,
// or "" when tool has a key or none misspells it.
func misspeltBy(tools Tools, tool string, served []string) string {
	if _, ok := tools[tool]; ok || len(tools) == 0 {
		return ""
	}
	var keys []string
	for k, t := range tools.Misspellings(served) {
		if t == tool {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return keys[0]
}
