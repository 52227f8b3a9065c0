package postgres_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain says once, for the whole package, that the PostgreSQL tests
// skip when no database is configured: each test's own skip message shows
// only with -v. Plain `go test` in this folder prints the line; `go test
// ./...` hides the output of a passing package, so scripts/test.sh prints
// the same note before it runs this module.
func TestMain(m *testing.M) {
	if os.Getenv(dsnEnv) == "" && os.Getenv("CI") == "" {
		fmt.Printf("idem/postgres: %s is not set, so the PostgreSQL tests skip: `source .ci/postgres.sh` (as root, on Debian) starts a local PostgreSQL and sets it\n", dsnEnv)
	}
	os.Exit(m.Run())
}
