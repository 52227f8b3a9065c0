package analyzer_test

import (
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/agentidem/agentidem-go/analyzer"
)

// BenchmarkDirectives runs the analyzers on the bundled examples
// (examples/..., their tests included, as go vet checks them) and on
// every package they import, the standard library included: go vet runs
// the tool on each dependency for its facts, and Directives summarises
// every function it finds there (SinkFact). The packages are loaded and
// type-checked once, outside the loop; one iteration is the analyzers'
// own work, what a user pays on top of compiling at every go vet
// -vettool. Directives alone is where the idem summaries are; All is
// what cmd/agentidem-vet runs. Sequential, so that the second CPU of a
// small machine does not hide the cost:
//
//	go test ./analyzer -run '^$' -bench Directives -count 6
//
// For the build before a change, copy this file into that revision's
// analyzer/ and run the same command there, alternating the two.
func BenchmarkDirectives(b *testing.B) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Tests: true, Dir: ".."}
	pkgs, err := packages.Load(cfg, "github.com/agentidem/agentidem-go/examples/...")
	if err != nil {
		b.Fatal(err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		b.Fatalf("%d errors loading the examples", n)
	}
	for _, bc := range []struct {
		name      string
		analyzers []*analysis.Analyzer
	}{
		{"Directives", []*analysis.Analyzer{analyzer.Directives}},
		{"All", analyzer.All},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := checker.Analyze(bc.analyzers, pkgs, &checker.Options{Sequential: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
