package generator_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAStaleWrapperFailsTheSuite: after an edit of an annotation alone
// (idempotent removed) without go generate, the old wrapper would judge the
// agent by what the source no longer says: a buggy agent passed (red team
// rtV, item 8). The suite now fails before its baseline and says to run go
// generate; after go generate the suite runs and finds the duplicate. A
// signature changed without go generate breaks the build with an error that
// names SignatureChangedRunGoGenerate (item 10).
func TestAStaleWrapperFailsTheSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	tools := `package desk

import "context"

var tickets = map[string]int{}

// OpenTicket opens a ticket for an order: not idempotent, each call opens one.
//
//agentidem:write identity=order name=open_ticket idempotent
func OpenTicket(ctx context.Context, order string) error { tickets[order]++; return nil }
`
	test := `package desk

import (
	"context"
	"testing"

	"github.com/agentidem/agentidem-go/testkit"
)

func TestDesk(t *testing.T) {
	testkit.TestAgent(t, func(ctx context.Context) error { return OpenTicketTraced(ctx, "o-1") },
		testkit.Setup(func(context.Context) error { tickets = map[string]int{}; return nil }),
		testkit.NoSummary())
}
`
	writeFile(t, filepath.Join(dir, "desk", "desk.go"), tools)
	writeFile(t, filepath.Join(dir, "desk", "desk_test.go"), test)
	generateIn(t, dir, generator.Config{}, "./desk")
	msg, err := goTool(t, dir, "test", "-count=1", "./desk")
	require.NoError(t, err, "declared idempotent, its repeats are absorbed:\n%s", msg)

	writeFile(t, filepath.Join(dir, "desk", "desk.go"), strings.Replace(tools, " idempotent\n", "\n", 1))
	msg, err = goTool(t, dir, "test", "-count=1", "./desk")
	require.Error(t, err, "a stale wrapper passed:\n%s", msg)
	assert.Contains(t, msg, "the wrapper of open_ticket (desk.go:10) was generated from //agentidem:write identity=order name=open_ticket idempotent, which desk.go no longer holds")
	assert.Contains(t, msg, "desk.go:9 holds //agentidem:write identity=order name=open_ticket, from which no wrapper was generated")
	assert.Contains(t, msg, "run go generate in .,")

	generateIn(t, dir, generator.Config{}, "./desk")
	msg, err = goTool(t, dir, "test", "-count=1", "./desk")
	require.Error(t, err, "regenerated, the duplicate must be found:\n%s", msg)
	assert.Contains(t, msg, "duplicate_write")
	assert.NotContains(t, msg, "go generate")

	writeFile(t, filepath.Join(dir, "desk", "desk.go"), strings.Replace(strings.Replace(tools, " idempotent\n", "\n", 1), "order string)", "order string, n int)", 1))
	msg, err = goTool(t, dir, "vet", "./desk")
	require.Error(t, err)
	assert.Contains(t, msg, "in argument to agentidemrt.SignatureChangedRunGoGenerate")
}
