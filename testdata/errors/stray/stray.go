// Package stray has comments meant as directives that annotate nothing:
// each left its function without a wrapper, and before fS without a word
// unless it sat on an annotated function's doc comment.
//
// Prose that mentions agentidem:write, or //agentidem:write inside a
// sentence, is no directive, and neither is the line below.
// agentidem: the toolkit; see https://agentidem.dev/agentidem:write
package stray

import "context"

//agentidem-gen writes the wrappers (a word, not a verb: prose).

//nolint:write is another tool's directive.

// An unknown verb separated from its function by a blank line.
//
//agentidem:wirte identity=id

func separated(ctx context.Context, id string) error { return nil }

//agentidem:write identity=id
var asVar = func(ctx context.Context, id string) error { return nil }

/*agentidem:write identity=id*/
func block(ctx context.Context, id string) error { return nil }

//agentidm:write identity=id
func misspeltPrefix(ctx context.Context, id string) error { return nil }

type svc struct{}

//agentidem:write identiy=id
func (s *svc) method(ctx context.Context, id string) error { return nil }

//agentidem:read
func fine(ctx context.Context, id string) error { return nil }
