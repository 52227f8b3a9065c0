package generator_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIgnoreWithoutAReasonDoesNotFailGeneration: //agentidem:ignore is
// agentidem-vet's directive (it silences the linter on a line or a
// function) and changes no wrapper. A bare one in a function body, at the
// end of a line or in a doc comment failed go generate with "is not in the
// doc comment of a function or method declaration, so it annotates
// nothing: put it right above func", advice that would silence the whole
// function. The generator leaves ignores to the vet tool, which reports
// "bad directive: //agentidem:ignore needs a reason" at the same place
// (analyzer/testdata/src/directives); a read directive in a body is still
// misplaced.
func TestIgnoreWithoutAReasonDoesNotFailGeneration(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "p", "p.go"), `package p

import "context"

//agentidem:ignore
//agentidem:write identity=id
func refund(ctx context.Context, id string) error { return nil }

func agent() {
	//agentidem:ignore
	_ = 1
	_ = 2 //agentidem:ignore
	_ = 3 //agentidem:ignore`+"\t"+`
	_ = 4 //agentidem:ignore the count is a constant
}
`)
	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	assert.Empty(t, out.Warnings)
	require.Len(t, out.Files, 1)
	assert.Contains(t, string(out.Files[0].Data), "func refundTraced(")

	writeFile(t, filepath.Join(dir, "p", "q.go"), "package p\n\nfunc body() {\n\t//agentidem:read\n\t_ = 1\n}\n")
	_, err = generator.Generate(generator.Config{Dir: dir}, "./...")
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, "p", "q.go")+":4:2: //agentidem:read is not in the doc comment of a function or method declaration, so it annotates nothing: put it right above func", strings.TrimSpace(err.Error()))
}
