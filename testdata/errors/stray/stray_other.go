//go:build agentidem_never

package stray

import "context"

// A file no build here includes: a valid directive is a warning (not
// wrapped in this build); a misspelt one is wrong in every build.

//agentidem:write identity=id idempotnet
func elsewhere(ctx context.Context, id string) error { return nil }
