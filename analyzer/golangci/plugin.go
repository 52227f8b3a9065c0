// Package golangci registers agentidem-vet's analyzers as a golangci-lint
// module plugin named "agentidem".
//
// Build a custom golangci-lint with it (.custom-gcl.yml):
//
//	version: v2.15.0
//	plugins:
//	  - module: github.com/agentidem/agentidem-go/analyzer/golangci
//	    import: github.com/agentidem/agentidem-go/analyzer/golangci
//	    version: latest
//
// then enable it (.golangci.yml):
//
//	version: "2"
//	linters:
//	  enable:
//	    - agentidem
//	  settings:
//	    custom:
//	      agentidem:
//	        type: module
//	        description: agent tool calls unsafe to retry, redeliver or run in parallel
//	        settings:
//	          disable: [concurrentwrites]
//
// Settings: disable lists analyzers to leave out, by name (checkbeforecreate,
// concurrentdeps, concurrentwrites, identity, directives).
package golangci

import (
	"fmt"
	"slices"

	"github.com/golangci/plugin-module-register/register"
	"golang.org/x/tools/go/analysis"

	"github.com/agentidem/agentidem-go/analyzer"
)

func init() {
	register.Plugin("agentidem", New)
}

// Settings is the plugin's configuration in .golangci.yml.
type Settings struct {
	// Disable names analyzers not to run.
	Disable []string `json:"disable"`
}

// Plugin is the agentidem golangci-lint plugin.
type Plugin struct {
	settings Settings
}

// New builds the plugin from its settings in .golangci.yml.
func New(settings any) (register.LinterPlugin, error) {
	s, err := register.DecodeSettings[Settings](settings)
	if err != nil {
		return nil, fmt.Errorf("agentidem settings: %w", err)
	}
	for _, name := range s.Disable {
		if !slices.ContainsFunc(analyzer.All, func(a *analysis.Analyzer) bool { return a.Name == name }) {
			return nil, fmt.Errorf("agentidem settings: disable: unknown analyzer %q", name)
		}
	}
	return &Plugin{settings: s}, nil
}

// BuildAnalyzers returns the analyzers that are not disabled.
func (p *Plugin) BuildAnalyzers() ([]*analysis.Analyzer, error) {
	var out []*analysis.Analyzer
	for _, a := range analyzer.All {
		if !slices.Contains(p.settings.Disable, a.Name) {
			out = append(out, a)
		}
	}
	return out, nil
}

// GetLoadMode says the analyzers need type information.
func (p *Plugin) GetLoadMode() string { return register.LoadModeTypesInfo }
