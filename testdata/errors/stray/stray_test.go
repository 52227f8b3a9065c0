package stray

import "context"

// Without Config.Tests this file is not loaded; its bad directives are
// errors all the same.

//agentidem:wirte identity=id
func testTool(ctx context.Context, id string) error { return nil }

//agentidem:read

func testSeparated(ctx context.Context, id string) error { return nil }
