package generator_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/generator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errorCase is one bad annotation in testdata/errors: the file it is in, the
// source text the reported column must point at (on the reported line), and
// a regexp the message must match.
type errorCase struct {
	file string
	at   string
	msg  string
}

// errorCases lists every error the packages of testdata/errors must produce,
// and no other. testdata/errors is a module of its own: it replaces
// github.com/google/uuid with a local stub.
var errorCases = []errorCase{
	// Syntax, from internal/directive.
	{"syntax/syntax.go", "colour=red", `^unknown key "colour" for //agentidem:write: want one of identity, `},
	{"syntax/syntax.go", "//agentidem:write name=missingIdentity", `^//agentidem:write needs identity=EXPRS`},
	{"syntax/syntax.go", "identity=n", `^duplicate key "identity" \(first at column 19\)`},
	{"syntax/syntax.go", `"id`, `^unterminated quoted value for identity`},
	{"syntax/syntax.go", `"a\q"`, `^malformed quoted value for name`},
	{"syntax/syntax.go", "identity=id\n", `^unknown key "identity" for //agentidem:read: want one of name, entity`},
	{"syntax/syntax.go", "delete", `^unknown directive "delete": want read, write or ignore`},
	{"syntax/syntax.go", "id+", `^identity=: "id\+" is not a Go expression`},
	{"syntax/syntax.go", "not-ident", `^wrapper="not-ident" is not a Go identifier`},
	// Types of identity and entity expressions.
	{"types/types.go", "orderID", `^identity=orderID: undefined: orderID \(parameters of noParam: id\)`},
	{"types/types.go", "cb", `^identity=cb has type func\(\), which cannot be canonicalized: a func has no comparable value; use values that name the effect`},
	{"types/types.go", "ch\n", `^identity=ch has type chan int, which cannot be canonicalized`},
	{"types/types.go", "c\n", `^identity=c has type complex128, which cannot be canonicalized: JSON has no complex numbers`},
	{"types/types.go", "p\n", `^identity=p has type unsafe\.Pointer, which cannot be canonicalized`},
	{"types/types.go", "o\n", `^identity=o has type opaque, which cannot be canonicalized: it has no exported fields`},
	{"types/types.go", "w\n", `^identity=w has type withFunc, which cannot be canonicalized: field On: a func`},
	{"types/types.go", "string", `^identity=string is a type, not a value`},
	{"types/types.go", "ch\nfunc chanEntity", `^entity=ch has type chan int, which cannot be canonicalized`},
	{"types/types.go", "ref\n", `^identity=ref: ref is a result of result, which has no value before the call: use parameters`},
	{"types/types.go", "<-ids", `^identity=<-ids receives from a channel: the wrapper evaluates it before the call`},
	// Non-deterministic identities, anywhere in the expression.
	{"nondet/nondet.go", "time.Now()\nfunc now", `^identity=time\.Now\(\): time\.Now is non-deterministic: a retry would get a fresh identity`},
	{"nondet/nondet.go", "fmt.Sprint(time.Now().Unix())", `^identity=fmt\.Sprint\(time\.Now\(\)\.Unix\(\)\): time\.Now is non-deterministic`},
	{"nondet/nondet.go", "rand.Int()", `^identity=rand\.Int\(\): rand\.Int is non-deterministic`},
	{"nondet/nondet.go", "randv2.IntN(10)", `: rand\.IntN is non-deterministic`},
	{"nondet/nondet.go", "crand.Text()", `: rand\.Text is non-deterministic`},
	{"nondet/nondet.go", "uuid.NewString()", `: uuid\.NewString is non-deterministic`},
	{"nondet/nondet.go", "uuid.New().String()", `: uuid\.New is non-deterministic`},
	{"nondet/dot.go", "Now().Unix()", `^identity=Now\(\)\.Unix\(\): time\.Now is non-deterministic`},
	// Directives in the wrong place.
	{"placement/placement.go", "//agentidem:write identity=id\ntype Order", `^//agentidem:write is not in the doc comment of a function or method declaration, so it annotates nothing: put it right above func`},
	{"placement/placement.go", "//agentidem:read\nvar x", `^//agentidem:read is not in the doc comment`},
	{"placement/placement.go", "//agentidem:write identity=id\nfunc twice", `^second //agentidem:write on one function \(first at line 12\): a function is one op`},
	{"placement/placement.go", "//agentidem:read\n\t_ = x", `^//agentidem:read is not in the doc comment`},
	{"placement/placement.go", "func init", `^func init cannot be called by an agent, so it cannot be wrapped: annotate the tool function it calls`},
	{"placement/placement.go", "func _", `^func _ cannot be called by an agent`},
	// Comments meant as directives that annotate nothing, in loaded
	// files and in files the load leaves out (fS): before, each left its
	// function unwrapped in silence.
	{"stray/stray.go", "wirte", `^unknown directive "wirte": want read, write or ignore$`},
	{"stray/stray.go", "//agentidem:write identity=id\nvar asVar", `^//agentidem:write is not in the doc comment`},
	{"stray/stray.go", "/*agentidem:write", `^"/\*agentidem:write identity=id\*/" is a block comment, not a directive, so it annotates nothing: write it as a line comment, //agentidem:read or //agentidem:write identity=\.\.\., with no space after //$`},
	{"stray/stray.go", "//agentidm:write", `^"//agentidm:write identity=id" is not a directive \(the prefix //agentidm: is misspelt\), so it annotates nothing: write it as a line comment`},
	{"stray/stray.go", "identiy=id", `^unknown key "identiy" for //agentidem:write`},
	{"stray/stray.go", "//agentidem:write identiy", `^//agentidem:write needs identity=EXPRS`},
	{"stray/stray_test.go", "wirte", `^unknown directive "wirte"`},
	{"stray/stray_test.go", "//agentidem:read\n\nfunc testSeparated", `^//agentidem:read is not in the doc comment`},
	{"stray/stray_other.go", "idempotnet", `^"idempotnet" is not key=value`},
	// Clashes between ops, and options naming what does not exist.
	{"clash/clash.go", "func payB", `^op name "pay" is also used by payA \(clash\.go:7\): .*give one of them name=`},
	{"clash/clash.go", "func refund(", `^wrapper name refundTraced is already declared at .*clash\.go:15:6: set wrapper=\.\.\. to another name`},
	{"clash/clash.go", "func sendB", `^wrapper Send is also generated for sendA \(clash\.go:18\): set wrapper=`},
	{"clash/clash.go", "func (s *Svc) Get", `^wrapper name GetTraced is already a field or method of Svc at .*clash\.go:24:18`},
	{"clash/clash.go", "cvv", `^redact=cvv: charge has no parameter cvv \(parameters: id, card\)`},
	{"clash/clash.go", "ctx\nfunc withCtx", `^redact=ctx: a context\.Context is never recorded`},
	{"clash/clash.go", "self name=self", `^after=self: an op cannot come after itself`},
	// A wrapper named like a dot-imported name or an import (issue 12.2).
	{"dotwrap/dotwrap.go", "func lower", `^wrapper name ToLower is dot-imported from package strings in dotwrap\.go, so declaring it in this package fails: set wrapper=\.\.\. to another name$`},
	{"dotwrap/dotwrap.go", "func escape", `^wrapper name neturl is the name of the import of net/url in dotwrap\.go, so declaring it in this package fails: set wrapper=`},
	// after= naming no op anywhere (issue 12.6).
	{"after/after.go", "ghost", `^after=ghost: no op named "ghost" in this package or the packages it imports \(ops: attach, create\): fix the name, or annotate the tool it means with //agentidem:write name=ghost$`},
	// A wrapper that clashes with a declaration of a _test.go file (issue 12.4).
	{"testclash/tool.go", "func save", `^wrapper name saveTraced is already declared at .*tool_test\.go:3:6, a _test\.go file that go test compiles with agentidem_gen\.go: set wrapper=\.\.\. to another name$`},
	{"testclash/tool.go", "func (s *Svc) Send", `^wrapper name SendTraced is already a method of Svc at .*tool_test\.go:5:15, a _test\.go file that go test compiles`},
	// Several files of one package.
	{"multi/a.go", "nope", `^identity=nope: undefined: nope`},
	{"multi/b.go", "bogus=1", `^unknown key "bogus"`},
	// A signature that does not type-check names its own type error, not
	// the first of the package (a call of a wrapper not generated yet).
	{"badsig/tools.go", "func broken", `^cannot generate a wrapper for broken: its signature does not type-check: undefined: Missing$`},
}

var errLineRE = regexp.MustCompile(`^(/[^:]+\.go):(\d+):(\d+): (.+)$`)

func TestErrors(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "errors")
	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.Error(t, err)
	assert.Nil(t, out, "no output may be produced when any directive is bad")
	var list generator.Errors
	require.True(t, errors.As(err, &list), "want generator.Errors, got %T", err)

	type reported struct {
		file      string
		line, col int
		msg       string
		used      bool
	}
	var got []*reported
	for _, e := range list {
		m := errLineRE.FindStringSubmatch(e.Error())
		if !assert.NotNil(t, m, "not file:line:col: message: %q", e.Error()) {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		rel, _ := filepath.Rel(dir, m[1])
		got = append(got, &reported{file: filepath.ToSlash(rel), line: line, col: col, msg: m[4]})
	}
	for _, c := range errorCases {
		src, err := os.ReadFile(filepath.Join(dir, c.file))
		require.NoError(t, err)
		lines := strings.SplitAfter(string(src), "\n")
		var match *reported
		for _, r := range got {
			if r.used || r.file != c.file || !regexp.MustCompile(c.msg).MatchString(r.msg) {
				continue
			}
			rest := strings.Join(lines[r.line-1:], "")[r.col-1:]
			if strings.HasPrefix(rest, c.at) {
				match = r
				break
			}
		}
		if match == nil {
			t.Errorf("%s: no error matching %q at %q", c.file, c.msg, c.at)
			continue
		}
		match.used = true
	}
	for _, r := range got {
		if !r.used {
			t.Errorf("unexpected error %s:%d:%d: %s", r.file, r.line, r.col, r.msg)
		}
	}
}

// TestErrorsWriteNothing runs the generator on a package with one good and
// one bad op and on a good package next to it: nothing at all is written.
func TestErrorsWriteNothing(t *testing.T) {
	dir := tempModule(t)
	writeFile(t, filepath.Join(dir, "good", "good.go"), "package good\n\n//agentidem:read\nfunc get(id string) (string, error) { return id, nil }\n")
	writeFile(t, filepath.Join(dir, "mixed", "mixed.go"), "package mixed\n\n//agentidem:read\nfunc get(id string) (string, error) { return id, nil }\n\n//agentidem:write identity=nope\nfunc put(id string) error { return nil }\n")
	out, err := generator.Generate(generator.Config{Dir: dir}, "./...")
	require.Error(t, err)
	assert.Nil(t, out)
	assert.Contains(t, err.Error(), filepath.Join(dir, "mixed", "mixed.go")+":6:28: identity=nope: undefined: nope")
	for _, pkg := range []string{"good", "mixed"} {
		_, statErr := os.Stat(filepath.Join(dir, pkg, generator.FileName))
		assert.True(t, os.IsNotExist(statErr), "%s/%s was written", pkg, generator.FileName)
	}
}
