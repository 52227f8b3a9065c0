package generator_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTestFiles: with Config.Tests, ops annotated in _test.go files get
// wrappers in _test.go files of the right package clause, next to the
// package's own agentidem_gen.go, and the whole thing compiles and runs
// under go test. Each error is reported once, not once per variant.
func TestTestFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "p", "p.go"), "package p\n\n//agentidem:read\nfunc get(id string) (string, error) { return id, nil }\n")
	writeFile(t, filepath.Join(dir, "p", "in_test.go"), `package p

import "testing"

//agentidem:write identity=id
func fake(id string) error { return nil }

func TestIn(t *testing.T) {
	if _, err := getTraced("a"); err != nil {
		t.Fatal(err)
	}
	if err := fakeTraced("b"); err != nil {
		t.Fatal(err)
	}
}
`)
	writeFile(t, filepath.Join(dir, "p", "ext_test.go"), `package p_test

import "testing"

//agentidem:read
func ext(id string) (string, error) { return id, nil }

func TestExt(t *testing.T) {
	if _, err := extTraced("c"); err != nil {
		t.Fatal(err)
	}
}
`)
	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	require.Len(t, out.Files, 1, "without Tests, _test.go files are not read")

	out, err = generator.Generate(generator.Config{Dir: dir, Tests: true}, "./...")
	require.NoError(t, err)
	wrappers := map[string]string{}
	for _, f := range out.Files {
		var funcs []string
		for _, line := range strings.Split(string(f.Data), "\n") {
			if strings.HasPrefix(line, "func ") {
				funcs = append(funcs, strings.Fields(line)[1])
			}
		}
		sort.Strings(funcs)
		wrappers[filepath.Base(f.Path)] = strings.Join(funcs, " ")
	}
	assert.Equal(t, map[string]string{
		generator.FileName:             "getTraced(id",
		generator.TestFileName:         "fakeTraced(id",
		generator.ExternalTestFileName: "extTraced(id",
	}, wrappers)
	require.NoError(t, out.Write())
	msg, err := goTool(t, dir, "test", "-count=1", "./p")
	require.NoError(t, err, msg)

	// An error in a _test.go file and one in a plain file: each once.
	writeFile(t, filepath.Join(dir, "q", "q.go"), "package q\n\n//agentidem:write identity=nope\nfunc put(id string) error { return nil }\n")
	writeFile(t, filepath.Join(dir, "q", "q_test.go"), "package q\n\n//agentidem:write identity=nada\nfunc fake(id string) error { return nil }\n")
	_, err = generator.Generate(generator.Config{Dir: dir, Tests: true}, "./q")
	require.Error(t, err)
	assert.Equal(t, 1, strings.Count(err.Error(), "identity=nope: undefined"), err.Error())
	assert.Equal(t, 1, strings.Count(err.Error(), "identity=nada: undefined"), err.Error())
}
