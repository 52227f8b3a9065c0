package generator_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const toolSrc = `package tool

import "context"

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

//agentidem:write identity=id
func put(ctx context.Context, id string) error { return nil }

// Run is the agent.
func Run(ctx context.Context) error { return putTraced(ctx, "a") }
`

// TestLifecycle walks one package through the life of its generated file:
// first generation, a signature change without regeneration (the guard
// breaks the build, check reports the file), regeneration while the old file
// does not compile, and removal of the last annotation (the stale file goes).
func TestLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	src := filepath.Join(dir, "tool", "tool.go")
	gen := filepath.Join(dir, "tool", generator.FileName)
	writeFile(t, src, toolSrc)

	generate := func() *generator.Output {
		t.Helper()
		out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
		require.NoError(t, err)
		return out
	}
	out := generate()
	assert.Equal(t, []string{gen}, out.Stale(), "a missing file is stale")
	require.NoError(t, out.Write())
	assert.Empty(t, generate().Stale(), "freshly written output is up to date")
	msg, err := goTool(t, dir, "build", "./...")
	require.NoError(t, err, msg)

	// The parameter becomes an any: the wrapper would still compile (a
	// string is an any), so only the guard notices.
	writeFile(t, src, strings.Replace(toolSrc, "id string) error { return nil }", "id any) error { return nil }", 1))
	msg, err = goTool(t, dir, "build", "./...")
	require.Error(t, err, "the guard did not break the build after a signature change")
	assert.Contains(t, msg, generator.FileName+":")
	assert.Contains(t, msg, "cannot use put")

	// Regeneration type-checks the package without the stale file.
	out = generate()
	assert.Equal(t, []string{gen}, out.Stale(), "check must report the stale file")
	require.NoError(t, out.Write())
	data, err := os.ReadFile(gen)
	require.NoError(t, err)
	assert.Contains(t, string(data), "func putTraced(ctx ai_context.Context, id any) (aiErr error)")
	msg, err = goTool(t, dir, "build", "./...")
	require.NoError(t, err, msg)

	// A generated file that does not even parse is no obstacle either.
	writeFile(t, gen, generator.Header+"\n\npackage tool\n\nfunc {{{\n")
	out = generate()
	assert.Equal(t, []string{gen}, out.Stale())
	require.NoError(t, out.Write())
	msg, err = goTool(t, dir, "build", "./...")
	require.NoError(t, err, msg)

	// The last annotation goes (and the agent stops calling the wrapper):
	// the generated file is removed, and check reports it until then.
	noAnn := strings.Replace(toolSrc, "//agentidem:write identity=id\n", "", 1)
	noAnn = strings.Replace(noAnn, `putTraced(ctx, "a")`, `put(ctx, "a")`, 1)
	writeFile(t, src, noAnn)
	out = generate()
	require.Len(t, out.Files, 1)
	assert.True(t, out.Files[0].Remove)
	assert.Equal(t, []string{gen}, out.Stale())
	require.NoError(t, out.Write())
	_, err = os.Stat(gen)
	assert.True(t, os.IsNotExist(err), "the stale generated file was not removed")
	msg, err = goTool(t, dir, "build", "./...")
	require.NoError(t, err, msg)
	assert.Empty(t, generate().Files, "nothing to do once the file is gone")
}

// TestNeverOverwritesForeignFile: a file named agentidem_gen.go that lacks
// the generated header belongs to the user. It is neither replaced nor
// removed.
func TestNeverOverwritesForeignFile(t *testing.T) {
	dir := tempModule(t)
	mine := "package tool\n\n// Mine is the user's own code.\nfunc Mine() {}\n"
	writeFile(t, filepath.Join(dir, "tool", "tool.go"), toolSrc)
	writeFile(t, filepath.Join(dir, "tool", generator.FileName), mine)
	out, err := generator.Generate(generator.Config{Dir: dir}, "./tool")
	require.NoError(t, err)
	err = out.Write()
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "tool", generator.FileName)+" exists and was not written by agentidem-gen")
	data, _ := os.ReadFile(filepath.Join(dir, "tool", generator.FileName))
	assert.Equal(t, mine, string(data))

	// Without annotations the file is not stale generated code either.
	writeFile(t, filepath.Join(dir, "plain", "plain.go"), "package plain\n\nfunc F() {}\n")
	writeFile(t, filepath.Join(dir, "plain", generator.FileName), "package plain\n\nfunc G() {}\n")
	out, err = generator.Generate(generator.Config{Dir: dir}, "./plain")
	require.NoError(t, err)
	assert.Empty(t, out.Files)
	require.NoError(t, out.Write())
	_, err = os.Stat(filepath.Join(dir, "plain", generator.FileName))
	assert.NoError(t, err, "a file without the header was removed")
}

// TestWriteIsAtomic rewrites one file many times while readers read it: a
// reader sees the old content or the new one, never a truncated or mixed
// file, and no temporary file is left behind.
func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, generator.FileName)
	a := []byte(generator.Header + "\n\npackage p\n\n" + strings.Repeat("// a\n", 20000))
	b := []byte(generator.Header + "\n\npackage p\n\n" + strings.Repeat("// bb\n", 30000))
	require.NoError(t, (&generator.Output{Files: []generator.File{{Path: path, Data: a}}}).Write())

	var stop atomic.Bool
	var torn atomic.Int64
	var reads atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				data, err := os.ReadFile(path)
				if err != nil || (!bytes.Equal(data, a) && !bytes.Equal(data, b)) {
					torn.Add(1)
				}
				reads.Add(1)
			}
		}()
	}
	for i := range 200 {
		data := a
		if i%2 == 0 {
			data = b
		}
		require.NoError(t, (&generator.Output{Files: []generator.File{{Path: path, Data: data}}}).Write())
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, torn.Load(), "a reader saw a partial file (%d reads)", reads.Load())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "temporary files left behind")
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}
