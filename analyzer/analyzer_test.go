package analyzer_test

import (
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/agentidem/agentidem-go/analyzer"
)

// depsorder: a goroutine that locks, receives or selects somewhere is left
// out of its batch only when it waits before its call on something another
// goroutine may signal (red team rtM, L3). One run loads both packages.
func TestConcurrentDeps(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentDeps, "deps", "depsorder")
}

func TestConcurrentWrites(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentWrites, "writes")
}

func TestCheckBeforeCreateOps(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcops")
}

// cbcserial: what serializes a check and its insert is what the code
// runs, not what it mentions (red team rtM, L1 and L2). One run loads both.
func TestCheckBeforeCreateSQL(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcsql", "cbcserial/...")
}

func TestIdentity(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Identity, "identity", "escapes")
}

func TestDirectives(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Directives, "directives")
}

func TestSuggestedFixes(t *testing.T) {
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "fixsql")
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), analyzer.Identity, "fixescape")
}

// Doc titles follow x/tools: lowercase, no period, at most 60 characters.
func TestDocTitles(t *testing.T) {
	for _, a := range analyzer.All {
		if len(a.Doc) > 60 || a.Doc != strings.ToLower(a.Doc[:1])+a.Doc[1:] || strings.HasSuffix(a.Doc, ".") {
			t.Errorf("%s: doc title %q: want lowercase, no period, at most 60 characters", a.Name, a.Doc)
		}
		if !strings.Contains(a.URL, "#hdr-"+a.Name) {
			t.Errorf("%s: URL %q does not point at its section of the package doc", a.Name, a.URL)
		}
	}
}

// The shapes real SQL code writes check-then-create in (issue 14): a
// transaction from a helper closure, prepared statements, a found flag,
// update-then-insert, a store split across methods and packages, queries
// built from constants.
func TestCheckBeforeCreateShapes(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcshapes", "cbcsplit/...", "cbcmod/...")
}

// Writes that add distinct rows of one entity commute; writes that
// overwrite one row, or keep the first of rows that share a key, race (red
// team rtM, L5).
func TestConcurrentWritesRows(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentWrites, "writestags")
}

// A write that uses package idem is idempotent at the sink only when its
// INSERTs are under the key or resolve conflicts; and package idem is its
// own import path, not every path that begins so (red team rtM, L4).
func TestCheckBeforeCreateIdem(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcidem", "github.com/agentidem/agentidem-go/idem/postgres/agentcase")
}

// depsbranch: launches of which one runs (the clauses of a switch or a
// select, a branch that leaves its block after starting a goroutine) are
// no batch (red team fF).
func TestConcurrentBranches(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentDeps, "depsbranch")
}

// identityvar: an identity made fresh in a variable before the call is
// reported where it is made, not "at the call site" (red team fF).
// identitykey: a write's key outside its identity made fresh at the call
// site is reported (red team rtT #9).
func TestIdentityThroughVariable(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.Identity, "identityvar")
	analysistest.Run(t, analysistest.TestData(), analyzer.Identity, "identitykey")
}

// writesdispatch: a write a loop's goroutine runs only when the turn's
// tool call names it is not reported as starting at each turn (red team
// fF).
func TestConcurrentWritesDispatch(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentWrites, "writesdispatch")
}

// writesleave: a loop that starts a write and then ends (break, return,
// continue of an outer loop) starts it at one turn (red team fF).
func TestConcurrentWritesLeave(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentWrites, "writesleave")
}

// depsdefer: a call deferred beside the Go of its prerequisite runs after
// the wait that ends the batch (red team fF).
func TestConcurrentDepsDefer(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentDeps, "depsdefer")
}

// indirect: ops called without naming them, through method values, a map
// literal of tools and an interface the agent holds, and raw tools handed
// to a helper that calls them (red team fF).
func TestIndirectCalls(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "indirect/cbc")
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentDeps, "indirect/deps")
	analysistest.Run(t, analysistest.TestData(), analyzer.Identity, "indirect/escape")
}

// cbcapi: check-then-create through an HTTP API (GET, 404, POST to the
// collection) and through GORM (First then Create, FirstOrCreate), with
// their twins (red team fF).
func TestCheckBeforeCreateAPI(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcapi")
}
