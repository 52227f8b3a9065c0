package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree writes files (path → text) under a new directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return root
}

// calleeTimersOf is calleeTimers on the function of file that holds line.
func calleeTimersOf(t *testing.T, file string, line int) bool {
	t.Helper()
	site := file + ":" + strconv.Itoa(line)
	text, ok := funcText(site)
	require.True(t, ok, site)
	return timerWords(text) || calleeTimers(site, text)
}

// The functions a waiting function calls through a package name are read
// where the package is the module's own (by go.mod's module path), a
// locally replaced module's, or vendored; a library's that cannot be read
// counts as a timer, the standard library's and the harness's do not
// (red team rtW #5).
func TestCalleeTimersReadOtherPackagesOfTheModule(t *testing.T) {
	agent := func(imp, call string) string {
		return "package agent\n\nimport (\n\t\"errors\"\n\n\t" + imp + "\n)\n\nfunc Agent() error {\n\t<-" + call + "\n\treturn errors.New(\"x\")\n}\n"
	}
	root := writeTree(t, map[string]string{
		"go.mod":             "module example.com/svc\n\ngo 1.22\n\nrequire example.com/lib v1.0.0\n\nreplace example.com/lib => ../lib // local\n",
		"clock/clock.go":     "package clock\n\nimport \"time\"\n\nfunc Wait(d time.Duration) <-chan struct{} {\n\tch := make(chan struct{})\n\ttime.AfterFunc(d, func() { close(ch) })\n\treturn ch\n}\n\nfunc Never() <-chan struct{} {\n\treturn make(chan struct{})\n}\n",
		"deep/deep.go":       "package deep\n\nfunc Wait() <-chan struct{} { return wake() }\n\nfunc wake() <-chan struct{} { return later() }\n",
		"deep/later.go":      "package deep\n\nimport \"time\"\n\nfunc later() <-chan struct{} {\n\tch := make(chan struct{})\n\ttime.AfterFunc(1, func() { close(ch) })\n\treturn ch\n}\n",
		"a/agent.go":         agent("\"example.com/svc/clock\"", "clock.Wait(2)"),
		"b/agent.go":         agent("\"example.com/svc/clock\"", "clock.Never()"),
		"c/agent.go":         agent("tick \"example.com/svc/clock\"", "tick.Wait(2)"),
		"d/agent.go":         agent("\"github.com/other/backoff/v5\"", "backoff.Wait(2)"),
		"e/agent.go":         agent("\"example.com/lib/clock\"", "clock.Wait(2)"),
		"f/agent.go":         agent("\"example.com/svc/deep\"", "deep.Wait()"),
		"g/agent.go":         agent("\"github.com/agentidem/agentidem-go/testkit\"", "testkit.Never()"),
		"h/agent.go":         agent("\"github.com/other/waiter\"", "w.Wait()"),
		"vendor/x.io/v/v.go": "package v\n\nfunc Never() <-chan struct{} { return nil }\n",
		"i/agent.go":         agent("\"x.io/v\"", "v.Never()"),
	})
	lib := filepath.Join(filepath.Dir(root), "lib")
	require.NoError(t, os.MkdirAll(filepath.Join(lib, "clock"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(lib, "clock", "c.go"), []byte("package clock\n\nimport \"time\"\n\nfunc Wait(d time.Duration) <-chan time.Time {\n\treturn time.After(d)\n}\n"), 0o644))
	for dir, want := range map[string]bool{
		"a": true,  // clock.Wait: time.AfterFunc in the module's own package
		"b": false, // clock.Never: read, and no timer
		"c": true,  // the same package under another name
		"d": true,  // a library's package, not read
		"e": true,  // a module replaced with a local directory, read
		"f": true,  // three calls deep inside the package, through one-line helpers
		"g": false, // the harness's own package
		"h": true,  // a method of a library's value, not read
		"i": false, // vendored, read, no timer
	} {
		assert.Equal(t, want, calleeTimersOf(t, filepath.Join(root, dir, "agent.go"), 10), dir)
	}
}

func TestPackageNameOfAnImportPath(t *testing.T) {
	for p, want := range map[string]string{
		"github.com/cenkalti/backoff/v5": "backoff",
		"github.com/avast/retry-go/v4":   "retry",
		"github.com/sethvargo/go-retry":  "retry",
		"gopkg.in/yaml.v3":               "yaml",
		"golang.org/x/time/rate":         "rate",
	} {
		assert.Equal(t, want, packageName(importRef{kind: importUnread}, p), p)
	}
}

// A function gofmt keeps on one line is its line alone: read to the next
// closing brace at column 0, it took in the function after it, and that
// one's timer counted as its own, so that a wait in it read as one that
// may end.
func TestAOneLineFunctionIsItsLineAlone(t *testing.T) {
	root := writeTree(t, map[string]string{
		"agent.go": "package agent\n\nimport \"time\"\n\nfunc never() { <-make(chan struct{}) }\n\nfunc later() {\n\t<-time.After(time.Second)\n}\n",
	})
	file := filepath.Join(root, "agent.go")
	text, ok := funcText(file + ":5")
	require.True(t, ok)
	assert.Equal(t, "func never() { <-make(chan struct{}) }", text)
	assert.False(t, calleeTimersOf(t, file, 5), "never waits for good")
	assert.True(t, calleeTimersOf(t, file, 8), "later waits on a timer")
	funcs := pkgFuncs(root)
	require.Len(t, funcs["never"], 1)
	assert.Equal(t, "func never() { <-make(chan struct{}) }", funcs["never"][0].text)
	assert.Contains(t, funcs["later"][0].text, "time.After")
}
