package generator_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExcludedFilesWarn: an annotated function in a file the build leaves
// out (//go:build ignore, a GOOS suffix, a custom tag) or in a _test.go file
// without --tests is not wrapped, and the generator says so, naming the
// file and the flag or tag that would include it (issue 12.4). A file with
// import "C" gets no warning: it is built (issue 12.5).
func TestExcludedFilesWarn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "p", "p.go"), "package p\n\n//agentidem:read\nfunc get(id string) (string, error) { return id, nil }\n")
	writeFile(t, filepath.Join(dir, "p", "ign.go"), "//go:build ignore\n\npackage p\n\n//agentidem:write identity=id\nfunc ignored(id string) error { return nil }\n")
	writeFile(t, filepath.Join(dir, "p", "win_windows.go"), "package p\n\n//agentidem:write identity=id\nfunc onWindows(id string) error { return nil }\n")
	writeFile(t, filepath.Join(dir, "p", "tag.go"), "//go:build pro && !lite\n\npackage p\n\n//agentidem:write identity=id\nfunc tagged(id string) error { return nil }\n")
	writeFile(t, filepath.Join(dir, "p", "p_test.go"), "package p\n\n//agentidem:write identity=id\nfunc fake(id string) error { return nil }\n")
	writeFile(t, filepath.Join(dir, "p", "c.go"), "package p\n\n// int twice(int x) { return 2 * x; }\nimport \"C\"\nimport \"context\"\n\n//agentidem:write identity=id\nfunc viaC(ctx context.Context, id int) (int, error) { return int(C.twice(C.int(id))), nil }\n")

	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	p := filepath.Join(dir, "p")
	want := []string{
		`^` + regexp.QuoteMeta(filepath.Join(p, "ign.go")) + `:6:1: warning: ignored is not wrapped: ign\.go is excluded from this build by its //go:build ignore line; no build includes it: move the function to a file every build includes, or remove the constraint$`,
		`^` + regexp.QuoteMeta(filepath.Join(p, "p_test.go")) + `:4:1: warning: fake is not wrapped: p_test\.go is a _test\.go file, which agentidem-gen reads only with --tests \(Config\.Tests\); run agentidem-gen --tests to wrap it$`,
		`^` + regexp.QuoteMeta(filepath.Join(p, "tag.go")) + `:6:1: warning: tagged is not wrapped: tag\.go is excluded from this build by its //go:build pro && !lite line; run agentidem-gen --tags lite,pro to include it$`,
		`^` + regexp.QuoteMeta(filepath.Join(p, "win_windows.go")) + `:4:1: warning: onWindows is not wrapped: win_windows\.go is excluded from this build by its _windows\.go suffix; run GOOS=windows agentidem-gen to include it$`,
	}
	require.Len(t, out.Warnings, len(want), strings.Join(out.Warnings, "\n"))
	for i, w := range want {
		assert.Regexp(t, w, out.Warnings[i])
	}
	require.Len(t, out.Files, 1)
	assert.Contains(t, string(out.Files[0].Data), "func viaCTraced(")

	// The tag named in the warning includes the file; what is left is the
	// warning that the generated file is built without the tag.
	out, err = generator.Generate(generator.Config{Dir: dir, Tags: []string{"pro"}}, "./...")
	require.NoError(t, err)
	assert.Contains(t, string(out.Files[0].Data), "func taggedTraced(")
	for _, w := range out.Warnings {
		if strings.Contains(w, "tag.go") && !strings.Contains(w, "no context.Context parameter") {
			assert.Contains(t, w, "tagged is in tag.go, which is built only under a build constraint")
		}
	}
}

// TestIdentityLeavingFieldsOutWarns: the identity of a struct is its JSON,
// so an identity of a whole struct with an id its JSON leaves out
// (json:"-", or unexported) makes two different values one identity, and
// the suite reports the second write as a repeat of the first. The
// generator says which fields, and how to name them; a field that cannot
// tell values apart (a mutex, an unexported struct), or the id named
// itself, gets no warning.
func TestIdentityLeavingFieldsOutWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "p", "p.go"), `package p

import (
	"context"
	"sync"
)

type Order struct {
	ID       string `+"`json:\"-\"`"+`
	Customer string
}

type Item struct {
	id    string
	Label string
}

type Req struct {
	mu    *sync.Mutex
	state struct{ n int }
	Key   string
}

//agentidem:write identity=o
func place(ctx context.Context, o Order) error { return nil }

//agentidem:write identity=it entity=it
func add(ctx context.Context, it *Item) error { return nil }

//agentidem:write identity=r
func send(ctx context.Context, r Req) error { return nil }

//agentidem:write identity=o.ID
func cancel(ctx context.Context, o Order) error { return nil }
`)
	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	var left []string
	for _, w := range out.Warnings {
		if strings.Contains(w, "leaves out") {
			left = append(left, w)
		}
	}
	p := regexp.QuoteMeta(filepath.Join(dir, "p", "p.go"))
	want := []string{
		`^` + p + `:\d+:\d+: warning: identity=o leaves out Order\.ID \(json:"-"\): the identity of a struct is its JSON, so two values that differ only there have one identity, and the suite takes the second for a repeat of the first \(duplicate_write\); if they tell the values apart, name what identifies the value \(identity=o\.ID, \.\.\.\)$`,
		`^` + p + `:\d+:\d+: warning: identity=it leaves out Item\.id \(unexported\): .* one identity, .*\(identity=it\.id, \.\.\.\)$`,
		`^` + p + `:\d+:\d+: warning: entity=it leaves out Item\.id \(unexported\): .* one entity,`,
	}
	require.Len(t, left, len(want), strings.Join(out.Warnings, "\n"))
	for i, w := range want {
		assert.Regexp(t, w, left[i])
	}
}
