package generator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests here take a package through what users do to code that has a
// generated file already (rename its package, move a fake out of a
// _test.go file, check it out with Windows line endings, embed a type
// whose wrapper is generated) and through signatures and package names
// that are legal Go: go generate must go on working, and what it writes
// must build.

// generateIn generates for patterns in dir, writes the output and returns
// it.
func generateIn(t *testing.T, dir string, cfg generator.Config, patterns ...string) *generator.Output {
	t.Helper()
	cfg.Dir = dir
	out, err := generator.Generate(cfg, patterns...)
	require.NoError(t, err)
	require.NoError(t, out.Write())
	return out
}

func buildAndVet(t *testing.T, dir string) {
	t.Helper()
	msg, err := goTool(t, dir, "vet", "./...")
	require.NoError(t, err, msg)
}

// TestRegeneratesAfterThePackageIsRenamed: package shop becomes package
// store in the same directory. The generated file still says shop, and go
// list reports two packages in one directory; the generated file is the
// one to replace, not an error.
func TestRegeneratesAfterThePackageIsRenamed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	src := filepath.Join(dir, "tool", "tool.go")
	writeFile(t, src, toolSrc)
	generateIn(t, dir, generator.Config{}, "./...")
	writeFile(t, src, strings.Replace(toolSrc, "package tool", "package store", 1))

	out := generateIn(t, dir, generator.Config{}, "./...")
	require.Len(t, out.Files, 1)
	data, err := os.ReadFile(filepath.Join(dir, "tool", generator.FileName))
	require.NoError(t, err)
	assert.Contains(t, string(data), "\npackage store\n")
	buildAndVet(t, dir)
}

// TestAStaleGeneratedTestFileIsReplaced: a fake annotated in a _test.go
// file (its wrapper in agentidem_gen_test.go) moves to a plain file. The
// old wrapper in the generated _test.go file is no clash: that file is
// what this run replaces (removes, here).
func TestAStaleGeneratedTestFileIsReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	fake := `package p

import "context"

//agentidem:write identity=id
func fakeCharge(ctx context.Context, id string) error { return nil }
`
	use := "package p\n\nimport (\n\t\"context\"\n\t\"testing\"\n)\n\nfunc TestFake(t *testing.T) { _ = fakeChargeTraced(context.Background(), \"x\") }\n"
	writeFile(t, filepath.Join(dir, "p", "p.go"), "package p\n")
	writeFile(t, filepath.Join(dir, "p", "fake_test.go"), use+`
//agentidem:write identity=id
func fakeCharge(ctx context.Context, id string) error { return nil }
`)
	generateIn(t, dir, generator.Config{Tests: true}, "./...")
	_, err := os.Stat(filepath.Join(dir, "p", generator.TestFileName))
	require.NoError(t, err, "the fake's wrapper goes to the generated _test.go file")

	writeFile(t, filepath.Join(dir, "p", "fake.go"), fake)
	writeFile(t, filepath.Join(dir, "p", "fake_test.go"), use)
	out, err := generator.Generate(generator.Config{Dir: dir, Tests: true}, "./...")
	require.NoError(t, err, "the stale generated _test.go file blocked regeneration")
	require.NoError(t, out.Write())
	_, err = os.Stat(filepath.Join(dir, "p", generator.TestFileName))
	assert.True(t, os.IsNotExist(err), "the stale generated _test.go file stays")
	data, err := os.ReadFile(filepath.Join(dir, "p", generator.FileName))
	require.NoError(t, err)
	assert.Contains(t, string(data), "func fakeChargeTraced(")
	msg, err := goTool(t, dir, "test", "-count=1", "./p")
	require.NoError(t, err, msg)
}

// TestAGeneratedFileWithWindowsLineEndings is the generated file: a copy
// checked out with "\r\n" endings (git's core.autocrlf) is up to date, and
// is replaced when the annotations change, never refused as the user's.
func TestAGeneratedFileWithWindowsLineEndings(t *testing.T) {
	dir := tempModule(t)
	src := filepath.Join(dir, "tool", "tool.go")
	gen := filepath.Join(dir, "tool", generator.FileName)
	writeFile(t, src, toolSrc)
	generateIn(t, dir, generator.Config{}, "./...")
	data, err := os.ReadFile(gen)
	require.NoError(t, err)
	writeFile(t, gen, strings.ReplaceAll(string(data), "\n", "\r\n"))

	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.NoError(t, err)
	assert.Empty(t, out.Stale(), "a copy with Windows line endings is up to date")

	writeFile(t, src, strings.Replace(toolSrc, "identity=id", "identity=id idempotent", 1))
	out = generateIn(t, dir, generator.Config{}, "./...")
	require.Len(t, out.Files, 1)
	data, err = os.ReadFile(gen)
	require.NoError(t, err)
	assert.Contains(t, string(data), "Idempotent: true")
}

// TestAPlainPackageNamedLikeATestPackage: package e2e_test in plain files
// is a package like any other (legal Go), and its wrappers go to
// agentidem_gen.go, not to the external test package's file.
func TestAPlainPackageNamedLikeATestPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "e2e_test", "tools.go"), strings.Replace(toolSrc, "package tool", "package e2e_test", 1))
	out := generateIn(t, dir, generator.Config{}, "./...")
	require.Len(t, out.Files, 1)
	assert.Equal(t, filepath.Join(dir, "e2e_test", generator.FileName), out.Files[0].Path)
	buildAndVet(t, dir)
}

// TestAnUnsafePointerParameter is written as unsafe.Pointer, the type's
// Name being only "Pointer".
func TestAnUnsafePointerParameter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "buf", "buf.go"), `package buf

import (
	"context"
	"unsafe"
)

//agentidem:write identity=id
func Write(ctx context.Context, id string, p unsafe.Pointer, n int) error { return nil }
`)
	generateIn(t, dir, generator.Config{}, "./...")
	data, err := os.ReadFile(filepath.Join(dir, "buf", generator.FileName))
	require.NoError(t, err)
	assert.Contains(t, string(data), "ai_unsafe.Pointer")
	buildAndVet(t, dir)
}

// TestAWrapperShadowsAPromotedWrapper: a type embeds one whose method has
// a generated wrapper and overrides that method, annotated too. Its own
// wrapper shadows the promoted one, as the method shadows the embedded
// method: no clash, whether the embedded type's package was generated
// first (go generate ./... in order) or together with it.
func TestAWrapperShadowsAPromotedWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "base", "base.go"), `package base

import "context"

type Client struct{}

//agentidem:write identity=id
func (c *Client) Send(ctx context.Context, id string) error { return nil }
`)
	writeFile(t, filepath.Join(dir, "svc", "svc.go"), `package svc

import (
	"context"

	"example.com/e2e/base"
)

// Audited sends through the embedded client and audits.
type Audited struct{ *base.Client }

//agentidem:write identity=id name=Audited.Send
func (a *Audited) Send(ctx context.Context, id string) error { return a.Client.SendTraced(ctx, id) }
`)
	generateIn(t, dir, generator.Config{}, "./base")
	out, err := generator.Generate(generator.Config{Dir: dir}, "./svc")
	require.NoError(t, err, "the promoted wrapper was taken for a clash")
	require.NoError(t, out.Write())
	generateIn(t, dir, generator.Config{}, "./...")
	buildAndVet(t, dir)

	// A field or method of the type itself still clashes.
	writeFile(t, filepath.Join(dir, "svc", "own.go"), "package svc\n\nfunc (a *Audited) SendTraced() {}\n")
	_, err = generator.Generate(generator.Config{Dir: dir}, "./svc")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wrapper name SendTraced is already a field or method of Audited")
}

// TestAfterNamesAnotherPackagesOp: after= naming an op of a package this
// one imports is written with that package's path, so that the runtime
// follows the op when ops of one name in two packages of the test binary
// are renamed after their packages (runtime.Declare); where two imported
// packages declare the name, after= cannot tell which, and says so.
func TestAfterNamesAnotherPackagesOp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	dir := tempModule(t)
	gateway := `package %s

import "context"

type Client struct{}

//agentidem:write identity=id
func (c *Client) Refund(ctx context.Context, id string) error { return nil }
`
	for _, p := range []string{"stripe", "paypal"} {
		writeFile(t, filepath.Join(dir, p, p+".go"), strings.Replace(gateway, "%s", p, 1))
	}
	billing := `package billing

import (
	"context"

	_ "example.com/e2e/stripe"
)

//agentidem:write identity=id after=Client.Refund
func notify(ctx context.Context, id string) error { return nil }
`
	writeFile(t, filepath.Join(dir, "billing", "billing.go"), billing)
	generateIn(t, dir, generator.Config{}, "./...")
	data, err := os.ReadFile(filepath.Join(dir, "billing", generator.FileName))
	require.NoError(t, err)
	assert.Contains(t, string(data), `After:     []string{"example.com/e2e/stripe Client.Refund"},`)
	assert.Contains(t, string(data), `Pkg:       "example.com/e2e/billing",`)
	buildAndVet(t, dir)

	writeFile(t, filepath.Join(dir, "billing", "billing.go"), strings.Replace(billing, "\t_ \"example.com/e2e/stripe\"\n", "\t_ \"example.com/e2e/paypal\"\n\t_ \"example.com/e2e/stripe\"\n", 1))
	_, err = generator.Generate(generator.Config{Dir: dir}, "./billing")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `after=Client.Refund: packages this one imports declare an op named "Client.Refund" each (example.com/e2e/`)
}
