package main

import (
	"bytes"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentModule creates a module in a temporary directory with one package,
// agent, holding src, and makes it the working directory, as go generate
// does.
func agentModule(t *testing.T, src string) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/cli\n\ngo 1.26.0\n\nrequire github.com/agentidem/agentidem-go v0.0.0\n\nreplace github.com/agentidem/agentidem-go => "+root+"\n")
	write(t, filepath.Join(dir, "agent", "tools.go"), src)
	t.Chdir(dir)
	return dir
}

func write(t *testing.T, path, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(data), 0o644))
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

const goodSrc = `package agent

import "context"

//agentidem:read
func get(ctx context.Context, id string) (string, error) { return id, nil }

//agentidem:write identity=id
func put(ctx context.Context, id string) error { return nil }
`

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Empty(t, errOut)
		for _, want := range []string{
			"agentidem-gen writes tracing wrappers",
			"//agentidem:write identity=EXPRS",
			"//go:generate go tool agentidem-gen",
			"go get -tool github.com/agentidem/agentidem-go/cmd/agentidem-gen",
			"refund -> refundTraced",
			"file:line:col: message",
			"Exit status: 0 on success, 1 when the input has errors",
			"check       Exit 1 and name each generated file that is out of date",
			"--tags",
		} {
			assert.Contains(t, out, want, "%v", args)
		}
		assert.NotContains(t, out, "completion", "%v: the shell completion command is noise for this tool", args)
	}
	code, out, _ := runCLI("check", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "It writes\nnothing. It exits 1 and lists every generated file")
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"check", "--nope"}, {"--tags"}} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.Regexp(t, `^agentidem-gen: (unknown flag|flag needs an argument)`, errOut, "%v", args)
		assert.Contains(t, errOut, "Run 'agentidem-gen --help' for usage.", "%v", args)
	}
}

func TestGenerateAndCheck(t *testing.T) {
	dir := agentModule(t, goodSrc)
	gen := filepath.Join(dir, "agent", generator.FileName)

	// Before generating, check names the missing file and exits 1.
	code, out, errOut := runCLI("check", "./...")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "stale: "+gen+"\nagentidem-gen: generated files are stale: run go generate ./...\n", errOut)
	_, err := os.Stat(gen)
	assert.True(t, os.IsNotExist(err), "check wrote a file")

	// The go:generate form: no arguments, run in the package directory.
	t.Chdir(filepath.Join(dir, "agent"))
	code, out, errOut = runCLI()
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	assert.Empty(t, errOut)
	data, err := os.ReadFile(gen)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), generator.Header+"\n"))
	assert.Contains(t, string(data), "func putTraced(ctx ai_context.Context, id string) (aiErr error)")

	t.Chdir(dir)
	code, out, errOut = runCLI("check", "./...")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "agentidem-gen: 1 generated file up to date\n", out)

	// The explicit subcommand with a pattern does the same.
	code, _, errOut = runCLI("generate", "./agent")
	assert.Equal(t, 0, code, errOut)

	// A signature change makes the file stale.
	write(t, filepath.Join(dir, "agent", "tools.go"), strings.Replace(goodSrc, "id string) error", "id string, n int) error", 1))
	code, _, errOut = runCLI("check", "./...")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "stale: "+gen+"\n")
}

func TestInputErrors(t *testing.T) {
	dir := agentModule(t, `package agent

//agentidem:write identity=nope
func put(id string) error { return nil }

//agentidem:write identity=id colour=red
func post(id string) error { return nil }
`)
	write(t, filepath.Join(dir, "other", "other.go"), "package other\n\n//agentidem:write\nfunc f(id string) error { return nil }\n")
	for _, cmd := range [][]string{{"./..."}, {"generate", "./..."}, {"check", "./..."}} {
		code, out, errOut := runCLI(cmd...)
		assert.Equal(t, 1, code, "%v", cmd)
		assert.Empty(t, out)
		assert.Equal(t,
			filepath.Join(dir, "agent", "tools.go")+":3:28: identity=nope: undefined: nope (parameters of put: id)\n"+
				filepath.Join(dir, "agent", "tools.go")+":6:31: unknown key \"colour\" for //agentidem:write: want one of identity, name, entity, after, redact, wrapper, idempotent\n"+
				filepath.Join(dir, "other", "other.go")+":3:1: //agentidem:write needs identity=EXPRS: the logical identity of the effect (e.g. identity=paymentID)\n"+
				"agentidem-gen: 3 errors\n",
			errOut, "%v", cmd)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "agent"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "a file was written despite errors")

	code, _, errOut := runCLI("./missing")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^loading \S*missing: .*directory not found\nagentidem-gen: 1 error\n$`, errOut)
}

func TestWarningsDoNotFail(t *testing.T) {
	dir := agentModule(t, "package agent\n\n//agentidem:write identity=id\nfunc bump(id string) {}\n")
	code, out, errOut := runCLI("./...")
	assert.Equal(t, 0, code)
	assert.Empty(t, out)
	pos := filepath.Join(dir, "agent", "tools.go") + ":4:1: "
	assert.Equal(t, pos+"warning: write bump has no error result: it is traced, but no failure or lost acknowledgement can be injected into it\n"+
		pos+"warning: write bump has no context.Context parameter: its calls are attributed to a delivery by the goroutine that makes them, which weakens crash_restart (the crash's cancellation never reaches it), duplicate_delivery/concurrent and tests run with t.Parallel (a call from a goroutine that descends from no delivery cannot be attributed and is refused); take ctx context.Context as the first parameter\n", errOut)
}

func TestRefusesForeignFile(t *testing.T) {
	dir := agentModule(t, goodSrc)
	mine := filepath.Join(dir, "agent", generator.FileName)
	write(t, mine, "package agent\n")
	code, _, errOut := runCLI("./...")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, mine+" exists and was not written by agentidem-gen")
	assert.True(t, strings.HasSuffix(errOut, "\nagentidem-gen: 1 error\n"), errOut)
	data, _ := os.ReadFile(mine)
	assert.Equal(t, "package agent\n", string(data))
}

func TestSyntaxErrorsOnce(t *testing.T) {
	dir := agentModule(t, goodSrc)
	write(t, filepath.Join(dir, "agent", "bad.go"), "package agent\n\nfunc broken( {\n")
	code, _, errOut := runCLI("./...")
	assert.Equal(t, 1, code)
	assert.True(t, strings.HasPrefix(errOut, filepath.Join(dir, "agent", "bad.go")+":3:14: expected ')', found '{'\n"), errOut)
	assert.NotContains(t, errOut, "# example.com/cli/agent", "the compiler's copy of the syntax errors is noise")
	_, err := os.Stat(filepath.Join(dir, "agent", generator.FileName))
	assert.True(t, os.IsNotExist(err))
}

func TestTags(t *testing.T) {
	dir := agentModule(t, goodSrc)
	write(t, filepath.Join(dir, "agent", "special.go"), "//go:build special\n\npackage agent\n\n//agentidem:read\nfunc special(id string) (string, error) { return id, nil }\n")
	gen := filepath.Join(dir, "agent", generator.FileName)
	code, _, errOut := runCLI("./...")
	require.Equal(t, 0, code, errOut)
	data, _ := os.ReadFile(gen)
	assert.NotContains(t, string(data), "specialTraced", "a file excluded by build tags was read")

	code, _, errOut = runCLI("check", "--tags", "special", "./...")
	assert.Equal(t, 1, code, "with the tag, the file is stale")
	assert.Contains(t, errOut, "stale: "+gen)
	code, _, errOut = runCLI("--tags", "special", "./...")
	require.Equal(t, 0, code, errOut)
	data, _ = os.ReadFile(gen)
	assert.Contains(t, string(data), "func specialTraced(id string)")
	// The wrapper file has no such constraint: the user is warned.
	assert.Equal(t, filepath.Join(dir, "agent", "special.go")+":6:1: warning: special is in special.go, which is built only under a build constraint (a //go:build line or a GOOS/GOARCH file suffix); agentidem_gen.go is not, so a build without the constraint fails with undefined: special. Annotate functions in files every build includes\n", errOut)
}

func TestPlatformFileWarns(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the file is for linux")
	}
	dir := agentModule(t, goodSrc)
	write(t, filepath.Join(dir, "agent", "tools_linux.go"), "package agent\n\n//agentidem:read\nfunc linuxOnly(id string) (string, error) { return id, nil }\n")
	code, _, errOut := runCLI("./...")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "warning: linuxOnly is in tools_linux.go, which is built only under a build constraint")
	assert.NotContains(t, errOut, "tools.go:", "an unconstrained file was reported")
}

func TestSpacedDirectiveWarns(t *testing.T) {
	dir := agentModule(t, `package agent

// put is documented; the next line is a directive typed with a space.
// agentidem:write identity=id
func put(id string) error { return nil }

// agentidem:writes in prose are fine, and so is "//agentidem:read" quoted.
func other() {}
`)
	code, _, errOut := runCLI("./...")
	assert.Equal(t, 0, code)
	assert.Equal(t, filepath.Join(dir, "agent", "tools.go")+`:4:1: warning: "// agentidem:write identity=id" is not a directive, so it annotates nothing: write //agentidem:... with no space after //`+"\n", errOut)
}

// A comment meant as a directive that annotates nothing (an unknown verb
// away from any function, a block comment, a misspelt prefix, a bad
// directive in a _test.go file read only with --tests) fails generate and
// check with its file:line:col and why: before, each left its function
// unwrapped with exit status 0 and not a word (fS).
func TestStrayDirectivesFailGenerateAndCheck(t *testing.T) {
	dir := agentModule(t, goodSrc)
	code, _, errOut := runCLI("./...")
	require.Equal(t, 0, code, errOut)
	for _, c := range []struct{ file, src, want string }{
		{"more.go", "package agent\n\n//agentidem:wirte identity=id\n\nfunc more(id string) error { return nil }\n", `more.go:3:13: unknown directive "wirte": want read, write or ignore`},
		{"more.go", "package agent\n\n/*agentidem:write identity=id*/\nfunc more(id string) error { return nil }\n", `more.go:3:1: "/*agentidem:write identity=id*/" is a block comment, not a directive`},
		{"more.go", "package agent\n\n//agentiden:write identity=id\nfunc more(id string) error { return nil }\n", `more.go:3:1: "//agentiden:write identity=id" is not a directive (the prefix //agentiden: is misspelt)`},
		// gofmt adds a space after the // of this one; before it runs:
		{"more.go", "package agent\n\n//agentidem write identity=id\nfunc more(id string) error { return nil }\n", `more.go:3:1: "//agentidem write identity=id" is not a directive (the prefix is //agentidem:)`},
		{"more_test.go", "package agent\n\n//agentidem:write identiy=id\nfunc more(id string) error { return nil }\n", `more_test.go:3:19: unknown key "identiy" for //agentidem:write`},
	} {
		path := filepath.Join(dir, "agent", c.file)
		write(t, path, c.src)
		for _, cmd := range [][]string{{"./..."}, {"check", "./..."}} {
			code, _, errOut := runCLI(cmd...)
			assert.Equal(t, 1, code, "%v with %s", cmd, c.src)
			assert.Contains(t, errOut, filepath.Join(dir, "agent")+string(filepath.Separator)+c.want, "%v", cmd)
		}
		require.NoError(t, os.Remove(path))
	}
	code, _, errOut = runCLI("check", "./...")
	assert.Equal(t, 0, code, errOut)
}
