package analyzer

import "golang.org/x/tools/go/analysis"

// All lists every analyzer of agentidem-vet, in the order they are
// documented. cmd/agentidem-vet and the golangci-lint plugin run them all.
var All = []*analysis.Analyzer{
	Directives,
	CheckBeforeCreate,
	ConcurrentDeps,
	ConcurrentWrites,
	Identity,
}
