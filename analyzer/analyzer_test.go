package analyzer_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/agentidem/agentidem-go/analyzer"
)

func TestConcurrentDeps(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentDeps, "deps")
}

func TestConcurrentWrites(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.ConcurrentWrites, "writes")
}

func TestCheckBeforeCreateOps(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcops")
}

func TestCheckBeforeCreateSQL(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), analyzer.CheckBeforeCreate, "cbcsql")
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
