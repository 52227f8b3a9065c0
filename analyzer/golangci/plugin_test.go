package golangci_test

import (
	"path/filepath"
	"testing"

	"github.com/golangci/plugin-module-register/register"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	_ "github.com/agentidem/agentidem-go/analyzer/golangci"
)

// The analyzer's own testdata: each analyzer on its case package.
var cases = map[string]string{
	"directives":        "directives",
	"checkbeforecreate": "cbcsql",
	"concurrentdeps":    "deps",
	"concurrentwrites":  "writes",
	"identity":          "identity",
}

func build(t *testing.T, settings any) []*analysis.Analyzer {
	t.Helper()
	newPlugin, err := register.GetPlugin("agentidem")
	require.NoError(t, err)
	p, err := newPlugin(settings)
	require.NoError(t, err)
	assert.Equal(t, register.LoadModeTypesInfo, p.GetLoadMode())
	as, err := p.BuildAnalyzers()
	require.NoError(t, err)
	return as
}

func TestPluginRunsEveryAnalyzer(t *testing.T) {
	testdata, err := filepath.Abs(filepath.Join("..", "testdata"))
	require.NoError(t, err)
	as := build(t, nil)
	require.Len(t, as, len(cases))
	for _, a := range as {
		pkg, ok := cases[a.Name]
		require.True(t, ok, "no test case for analyzer %s", a.Name)
		t.Run(a.Name, func(t *testing.T) {
			analysistest.Run(t, testdata, a, pkg)
		})
	}
}

func TestPluginSettings(t *testing.T) {
	as := build(t, map[string]any{"disable": []string{"concurrentwrites", "identity"}})
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	assert.Equal(t, []string{"directives", "checkbeforecreate", "concurrentdeps"}, names)

	newPlugin, err := register.GetPlugin("agentidem")
	require.NoError(t, err)
	_, err = newPlugin(map[string]any{"disable": []string{"nosuch"}})
	assert.ErrorContains(t, err, `unknown analyzer "nosuch"`)
	_, err = newPlugin(map[string]any{"colour": "red"})
	assert.ErrorContains(t, err, "agentidem settings")
}
