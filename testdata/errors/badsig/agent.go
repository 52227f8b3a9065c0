// Package badsig has an annotated function whose signature does not
// type-check, next to a call of a wrapper that does not exist yet.
package badsig

// registry lists the tools the agent may call.
var registry = []any{goodTraced, brokenTraced}

func agent() error { return goodTraced("x") }
