package directive

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var at = token.Position{Filename: "agent.go", Line: 10, Column: 1}

func texts(vs []Value) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Text)
	}
	return out
}

func TestParseWriteFull(t *testing.T) {
	d, errs := Parse(`//agentidem:write identity=id,key(a,"x y,z"),m["k"] name=refund entity=acct.ID after=getPayment,audit redact=card,cvv wrapper=RefundT`, at)
	require.Empty(t, errs)
	assert.Equal(t, Write, d.Kind)
	assert.Equal(t, []string{"id", `key(a,"x y,z")`, `m["k"]`}, texts(d.Identity))
	assert.Equal(t, "refund", d.Name.Text)
	assert.Equal(t, "acct.ID", d.Entity.Text)
	assert.Equal(t, []string{"getPayment", "audit"}, texts(d.After))
	assert.Equal(t, []string{"card", "cvv"}, texts(d.Redact))
	assert.Equal(t, "RefundT", d.Wrapper.Text)
	// Columns point into the comment: "//agentidem:write identity=" is 27 bytes.
	assert.Equal(t, 28, d.Identity[0].Pos.Column)
	assert.Equal(t, 31, d.Identity[1].Pos.Column)
}

func TestParseQuoted(t *testing.T) {
	d, errs := Parse(`//agentidem:write identity="order.ID, fmt.Sprint(n)" name="billing.refund"`, at)
	require.Empty(t, errs)
	assert.Equal(t, []string{"order.ID", "fmt.Sprint(n)"}, texts(d.Identity))
	assert.Equal(t, "billing.refund", d.Name.Text)
}

func TestParseRead(t *testing.T) {
	d, errs := Parse(`//agentidem:read`, at)
	require.Empty(t, errs)
	assert.Equal(t, Read, d.Kind)
	assert.Nil(t, d.Name)
	d, errs = Parse("//agentidem:read\tname=find entity=id", at)
	require.Empty(t, errs)
	assert.Equal(t, "id", d.Entity.Text)
}

func TestParseIgnore(t *testing.T) {
	d, errs := Parse(`//agentidem:ignore the sink has a unique index`, at)
	require.Empty(t, errs)
	assert.Equal(t, Ignore, d.Kind)
	assert.Equal(t, "the sink has a unique index", d.Reason)
}

// TestIsIgnoreKnowsAnIgnoreWithOrWithoutItsReason: the generator skips
// every ignore, including the bare one that Parse refuses, and only those.
func TestIsIgnoreKnowsAnIgnoreWithOrWithoutItsReason(t *testing.T) {
	for text, want := range map[string]bool{
		"//agentidem:ignore":                         true,
		"//agentidem:ignore\t":                       true,
		"//agentidem:ignore the sink is keyed":       true,
		"//agentidem:ignored":                        false,
		"//agentidem:read":                           false,
		"// agentidem:ignore prose, not a directive": false,
	} {
		assert.Equal(t, want, IsIgnore(text), text)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`//agentidem:write`, "agent.go:10:1: //agentidem:write needs identity=EXPRS"},
		{`//agentidem:write name=x`, "needs identity="},
		{`//agentidem:wirte identity=x`, `agent.go:10:13: unknown directive "wirte"`},
		{`//agentidem:`, "empty directive"},
		{`//agentidem:write identity=x colour=red`, `agent.go:10:30: unknown key "colour" for //agentidem:write`},
		{`//agentidem:read identity=x`, `unknown key "identity" for //agentidem:read`},
		{`//agentidem:write identity=x identity=y`, `agent.go:10:30: duplicate key "identity" (first at column 19)`},
		{`//agentidem:write identity="x`, `agent.go:10:28: unterminated quoted value for identity`},
		{`//agentidem:write identity="x\q"`, "malformed quoted value"},
		{`//agentidem:write identity=a"b"`, "is not a Go expression"},
		{`//agentidem:write identity=f("x)`, "unterminated string literal in the value of identity"},
		{`//agentidem:write identity="a"b`, "want a space after the quoted value"},
		{`//agentidem:write identity=a+`, `"a+" is not a Go expression`},
		{`//agentidem:write identity=a,,b`, "empty expression in identity="},
		{`//agentidem:write identity=`, "empty value for identity"},
		{`//agentidem:write identity=x entity=a,b`, "entity= takes one expression, got 2"},
		{`//agentidem:write identity=x wrapper=1x`, `wrapper="1x" is not a Go identifier`},
		{`//agentidem:write identity=x name=a!b`, `an op name is letters`},
		{`//agentidem:write identity=x after=a,a`, `"a" listed twice`},
		{`//agentidem:write identity=x redact=a.b`, `"a.b" is not a parameter name`},
		{`//agentidem:write identity=x plain`, `"plain" is not key=value`},
		{`//agentidem:write identity=x idempotent=yes`, `want idempotent, idempotent=true or idempotent=false`},
		{`//agentidem:write identity=x idempotent idempotent=false`, `duplicate key "idempotent"`},
		{`//agentidem:read idempotent`, `"idempotent" is not key=value`},
		{`//agentidem:write identity=x =y`, `missing key before '='`},
		{`//agentidem:ignore`, "needs a reason"},
		// A space after a comma (rtV, item 6): one error that says how
		// to write it, not "empty expression" and "is not key=value".
		{`//agentidem:write identity=orderID, cents name=refund`, `agent.go:10:28: the value of identity= ends at the space after "orderID,": a value with spaces must be quoted: identity="orderID, cents" (or write it without spaces: identity=orderID,cents)`},
		{`//agentidem:write identity=key(a, b)`, `identity="key(a, b)" (or write it without spaces: identity=key(a,b))`},
		{`//agentidem:write identity=key(a, "x y") name=r`, `agent.go:10:28: the value of identity= ends at the space after "key(a,": a value with spaces must be quoted: identity="key(a, \"x y\")"`},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			_, errs := Parse(c.src, at)
			require.NotEmpty(t, errs)
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			assert.Contains(t, strings.Join(all, "\n"), c.want)
		})
	}
}

func TestParseIdempotent(t *testing.T) {
	for src, want := range map[string]bool{
		`//agentidem:write identity=x`:                           false,
		`//agentidem:write identity=x idempotent`:                true,
		`//agentidem:write idempotent identity=x name=set`:       true,
		`//agentidem:write identity=x idempotent=true`:           true,
		`//agentidem:write identity=x idempotent=false`:          false,
		`//agentidem:write identity=x idempotent="true" name=up`: true,
	} {
		d, errs := Parse(src, at)
		require.Empty(t, errs, src)
		assert.Equal(t, want, d.Idempotent, src)
	}
}

func TestParseListsEveryError(t *testing.T) {
	_, errs := Parse(`//agentidem:write colour=red size=9`, at)
	assert.Len(t, errs, 3) // two unknown keys and the missing identity
}

func TestFromDoc(t *testing.T) {
	src := `package p

// refund gives the money back.
//
//agentidem:write identity=id
//agentidem:ignore reviewed
func refund(id string) {}

//agentidem:read
//agentidem:write identity=id
func both(id string) {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	require.NoError(t, err)
	fn := f.Decls[0].(*ast.FuncDecl)
	d, ign, errs := FromDoc(fset, fn.Doc)
	require.Empty(t, errs)
	assert.Equal(t, Write, d.Kind)
	assert.Equal(t, "p.go:5:28", d.Identity[0].Pos.String())
	assert.Len(t, ign, 1)

	_, _, errs = FromDoc(fset, f.Decls[1].(*ast.FuncDecl).Doc)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "p.go:10:1: second //agentidem:write on one function (first at line 9)")
}

// FuzzParse proves the parser never panics and that every error carries a
// position inside the comment.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`//agentidem:write identity=id`,
		`//agentidem:write identity="a, b" name=x entity=e after=a,b redact=p wrapper=W`,
		`//agentidem:write identity=x idempotent`,
		`//agentidem:write identity=x idempotent=false`,
		`//agentidem:read name="q\"x"`,
		`//agentidem:write identity=f(a,[]int{1,2}[0]),"s"`,
		`//agentidem:ignore why`,
		`//agentidem:write identity="`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text := Prefix + s
		d, errs := Parse(text, at)
		if len(errs) == 0 && d == nil {
			t.Fatal("no directive and no error")
		}
		for _, e := range errs {
			pe, ok := e.(*Error)
			if !ok {
				t.Fatalf("error of type %T", e)
			}
			if pe.Pos.Column < 1 || pe.Pos.Column > len(text)+1 {
				t.Fatalf("error column %d outside the comment of %d bytes: %v", pe.Pos.Column, len(text), e)
			}
		}
	})
}

// NearMiss names the comments meant as directives that Go does not read as
// one (fS), and leaves prose and other tools' directives alone.
func TestNearMiss(t *testing.T) {
	for text, want := range map[string]string{
		"/*agentidem:write identity=id*/": "is a block comment",
		"//agentidm:write identity=id":    "the prefix //agentidm: is misspelt",
		"//Agentidem:read":                "the prefix //Agentidem: is misspelt",
		"//agentidem write identity=id":   "the prefix is //agentidem:",
		"//agentidem.read":                "the prefix is //agentidem:",
		"//agentidem_ignore reason":       "the prefix is //agentidem:",
	} {
		assert.Contains(t, NearMiss(text), want, text)
	}
	for _, text := range []string{
		"//agentidem:write identity=id",  // a directive: Parse's business
		"// agentidem:write identity=id", // spaced: the generator warns
		"//agentidem-gen writes the wrappers",
		"//agentidem.dev/write is the site",
		"//nolint:write",
		"//go:generate go tool agentidem-gen",
		"//agent:write", // too far and too short
		"//agentidem",
		"/* agentidem:write in prose */",
		"// see agentidem:write",
	} {
		assert.Empty(t, NearMiss(text), text)
	}
	assert.True(t, UnknownVerb("//agentidem:wirte identity=id"))
	assert.True(t, UnknownVerb("//agentidem: write"))
	assert.False(t, UnknownVerb("//agentidem:write identiy=id"))
	assert.False(t, UnknownVerb("//agentidem:ignore\tbecause"))
}

// TestParseSpacedValueOneError: a value with a space after its comma gives
// one error, and none for the words after the space.
func TestParseSpacedValueOneError(t *testing.T) {
	for _, src := range []string{
		`//agentidem:write identity=orderID, cents name=refund`,
		`//agentidem:write identity=key(a, "x y") name=r`,
		`//agentidem:write name=r identity=a, b, c`,
	} {
		_, errs := Parse(src, at)
		assert.Len(t, errs, 1, "%s: %v", src, errs)
	}
	// A trailing comma before a key=value is the old error still.
	_, errs := Parse(`//agentidem:write identity=a, name=r`, at)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Error(), "empty expression in identity=")
}
