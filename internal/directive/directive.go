// Package directive parses //agentidem: comments into a typed model.
//
// It is the one parser of the annotation grammar, shared by the generator
// (cmd/agentidem-gen) and the analyzer (cmd/agentidem-vet):
//
//	//agentidem:read [name=NAME] [entity=EXPR]
//	//agentidem:write identity=EXPRS [name=NAME] [entity=EXPR] [after=NAME,NAME] [redact=PARAM,PARAM] [wrapper=IDENT] [idempotent]
//	//agentidem:ignore REASON
//
// A value is a bare token (no spaces) or a double-quoted Go string literal.
// idempotent is a flag: written bare it means idempotent=true, and
// idempotent=true and idempotent=false are accepted too.
// EXPRS is a comma-separated list of Go expressions; commas inside
// parentheses, brackets, braces and string literals do not separate.
//
// The package checks syntax only. Whether an expression names a parameter
// and has a type that can be canonicalized is the generator's business, since
// it needs type information.
package directive

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"

	"github.com/agentidem/agentidem-go/internal/editdist"
)

// Prefix starts every directive comment. There is no space after "//": a
// directive is not godoc.
const Prefix = "//agentidem:"

// Kind says what a directive declares.
type Kind int

const (
	// Read marks a tool function without side effects.
	Read Kind = iota + 1
	// Write marks a tool function with a side effect that has a logical identity.
	Write
	// Ignore silences analyzer diagnostics on a line or function; it carries a reason.
	Ignore
)

// String returns the directive verb: "read", "write" or "ignore".
func (k Kind) String() string {
	switch k {
	case Read:
		return "read"
	case Write:
		return "write"
	case Ignore:
		return "ignore"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Value is one value of a key, with the position where it starts.
type Value struct {
	Text string
	Pos  token.Position
}

// Directive is one parsed //agentidem: comment.
type Directive struct {
	Kind Kind
	Pos  token.Position // of the "//" that starts the comment

	// Identity holds the expressions of identity= (writes only), in order.
	Identity []Value
	// Name is the logical op name; empty means the default (function name).
	Name *Value
	// Entity is the expression of entity=; nil means the default.
	Entity *Value
	// After lists the op names this op must follow.
	After []Value
	// Redact lists parameter names whose values never enter a trace.
	Redact []Value
	// Wrapper is the name of the generated wrapper; nil means the default.
	Wrapper *Value
	// Idempotent says a repeat of the write with equal arguments has no
	// further effect (an upsert, "set status to X", a create that skips
	// what exists): the fault suite records such a repeat as absorbed, not
	// as a duplicate. Set by a bare idempotent or idempotent=true.
	Idempotent bool
	// Reason is the text after //agentidem:ignore.
	Reason string
	// Text is the comment as written, without trailing white space: the
	// generated file records it, so that a suite finds a wrapper made from
	// an annotation the source no longer holds (runtime.Op.Directive).
	Text string
}

// Error is a parse error at a source position. Its message reads
// "file:line:col: message".
type Error struct {
	Pos token.Position
	Msg string
}

// Error returns "file:line:col: message".
func (e *Error) Error() string {
	if e.Pos.IsValid() || e.Pos.Filename != "" {
		return e.Pos.String() + ": " + e.Msg
	}
	return e.Msg
}

// IsDirective reports whether a comment's text is an //agentidem: directive.
func IsDirective(text string) bool { return strings.HasPrefix(text, Prefix) }

// IsIgnore reports whether a comment's text is an //agentidem:ignore
// directive, with its reason or without one (which Parse reports as an
// error). The generator skips such comments: an ignore silences the
// analyzer, which reads and checks it, and changes no wrapper.
func IsIgnore(text string) bool {
	rest, ok := strings.CutPrefix(text, Prefix+"ignore")
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// UnknownVerb reports whether the directive text names no verb the
// grammar has (//agentidem:wirte, //agentidem:Write, //agentidem: write).
func UnknownVerb(text string) bool {
	rest := strings.TrimPrefix(text, Prefix)
	verb, _, _ := strings.Cut(strings.ReplaceAll(rest, "\t", " "), " ")
	return verb != "read" && verb != "write" && verb != "ignore"
}

// NearMiss says why a comment that is not a directive was meant to be
// one, or "": a block comment /*agentidem:..., a line comment whose prefix
// is agentidem with another character than ':' (//agentidem write,
// //agentidem.write), or a misspelt prefix within two edits of agentidem
// followed by ':' and a verb (//agentidm:write). Go reads directives from
// line comments with no space after //, so each of these annotates
// nothing, and the function it sits on got no wrapper and no word
// (fS). Prose is left alone: it has a space after //, or another word.
// gofmt puts a space after the // of //agentidem write, which is then
// prose.
func NearMiss(text string) string {
	const want = "write it as a line comment, //agentidem:read or //agentidem:write identity=..., with no space after //"
	if rest, ok := strings.CutPrefix(text, "/*"); ok && strings.HasPrefix(rest, "agentidem:") {
		return fmt.Sprintf("%q is a block comment, not a directive, so it annotates nothing: %s", text, want)
	}
	rest, ok := strings.CutPrefix(text, "//")
	if !ok || IsDirective(text) {
		return ""
	}
	if after, ok := strings.CutPrefix(rest, "agentidem"); ok && after != "" && after[0] != ':' {
		if verb := strings.TrimLeft(after, " \t.;=-_/"); len(verb) < len(after) && startsWithVerb(verb) {
			return fmt.Sprintf("%q is not a directive (the prefix is //agentidem:), so it annotates nothing: %s", text, want)
		}
		return ""
	}
	word, verb, found := strings.Cut(rest, ":")
	if !found || len(word) < 6 || !startsWithVerb(verb) || strings.ContainsAny(word, " \t") {
		return ""
	}
	if d := editdist.Distance(word, "agentidem"); d > 0 && d <= 2 {
		return fmt.Sprintf("%q is not a directive (the prefix %s is misspelt), so it annotates nothing: %s", text, "//"+word+":", want)
	}
	return ""
}

// startsWithVerb reports whether s starts with read, write or ignore as a
// word.
func startsWithVerb(s string) bool {
	for _, v := range []string{"read", "write", "ignore"} {
		if after, ok := strings.CutPrefix(s, v); ok && (after == "" || after[0] == ' ' || after[0] == '\t' || after[0] == '*') {
			return true
		}
	}
	return false
}

// FromDoc parses the directives in a doc comment. It returns at most one
// read or write directive: a second one is an error. Comments that are not
// directives are ignored; ignore directives are returned in ignores.
func FromDoc(fset *token.FileSet, doc *ast.CommentGroup) (d *Directive, ignores []*Directive, errs []error) {
	if doc == nil {
		return nil, nil, nil
	}
	for _, c := range doc.List {
		if !IsDirective(c.Text) {
			continue
		}
		pd, err := Parse(c.Text, fset.Position(c.Slash))
		if err != nil {
			errs = append(errs, err...)
			continue
		}
		if pd.Kind == Ignore {
			ignores = append(ignores, pd)
			continue
		}
		if d != nil {
			errs = append(errs, &Error{pd.Pos, fmt.Sprintf("second //agentidem:%s on one function (first at line %d): a function is one op", pd.Kind, d.Pos.Line)})
			continue
		}
		d = pd
	}
	return d, ignores, errs
}

// Parse parses one comment's text, which starts with Prefix, found at pos.
// It returns every error it finds, not just the first.
func Parse(text string, pos token.Position) (*Directive, []error) {
	p := &parserState{text: text, base: pos}
	d := p.parse()
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return d, nil
}

type parserState struct {
	text string
	base token.Position
	errs []error
}

// posAt returns the position of byte offset off of the comment text.
func (p *parserState) posAt(off int) token.Position {
	pos := p.base
	pos.Offset += off
	pos.Column += off
	return pos
}

func (p *parserState) errorf(off int, format string, args ...any) {
	p.errs = append(p.errs, &Error{p.posAt(off), fmt.Sprintf(format, args...)})
}

var knownKeys = map[Kind][]string{
	Read:  {"name", "entity"},
	Write: {"identity", "name", "entity", "after", "redact", "wrapper", "idempotent"},
}

// flags are the keys that may be written bare, meaning key=true.
var flags = map[string]bool{"idempotent": true}

func (p *parserState) parse() *Directive {
	d := &Directive{Pos: p.base, Text: strings.TrimRight(p.text, " \t\r")}
	off := len(Prefix)
	rest := p.text[off:]
	verbEnd := strings.IndexAny(rest, " \t")
	if verbEnd < 0 {
		verbEnd = len(rest)
	}
	verb := rest[:verbEnd]
	switch verb {
	case "read":
		d.Kind = Read
	case "write":
		d.Kind = Write
	case "ignore":
		d.Kind = Ignore
		d.Reason = strings.TrimSpace(rest[verbEnd:])
		if d.Reason == "" {
			p.errorf(0, "//agentidem:ignore needs a reason: //agentidem:ignore <why this is safe>")
		}
		return d
	case "":
		p.errorf(0, "empty directive: want //agentidem:read or //agentidem:write identity=...")
		return d
	default:
		p.errorf(off, "unknown directive %q: want read, write or ignore", verb)
		return d
	}
	seen := map[string]int{}
	i := off + verbEnd
	for {
		for i < len(p.text) && (p.text[i] == ' ' || p.text[i] == '\t') {
			i++
		}
		if i >= len(p.text) {
			break
		}
		keyStart := i
		for i < len(p.text) && p.text[i] != '=' && p.text[i] != ' ' && p.text[i] != '\t' {
			i++
		}
		key := p.text[keyStart:i]
		if (i >= len(p.text) || p.text[i] != '=') && flags[key] && contains(knownKeys[d.Kind], key) {
			if first, dup := seen[key]; dup {
				p.errorf(keyStart, "duplicate key %q (first at column %d)", key, p.posAt(first).Column)
				continue
			}
			seen[key] = keyStart
			p.setKey(d, key, "true", keyStart, false)
			continue
		}
		if i >= len(p.text) || p.text[i] != '=' {
			p.errorf(keyStart, "%q is not key=value", key)
			// Skip to the next space and go on.
			for i < len(p.text) && p.text[i] != ' ' && p.text[i] != '\t' {
				i++
			}
			continue
		}
		i++ // '='
		valStart := i
		var val string
		if i < len(p.text) && p.text[i] == '"' {
			end, ok := quotedEnd(p.text, i)
			if !ok {
				p.errorf(valStart, "unterminated quoted value for %s", key)
				return d
			}
			s, err := strconv.Unquote(p.text[i:end])
			if err != nil {
				p.errorf(valStart, "malformed quoted value for %s: %v", key, err)
				i = end
				continue
			}
			val = s
			i = end
			if i < len(p.text) && p.text[i] != ' ' && p.text[i] != '\t' {
				p.errorf(i, "want a space after the quoted value of %s", key)
				for i < len(p.text) && p.text[i] != ' ' && p.text[i] != '\t' {
					i++
				}
			}
		} else {
			// A bare value ends at white space outside string literals,
			// so identity=m["a b"] is one value.
			for i < len(p.text) && p.text[i] != ' ' && p.text[i] != '\t' {
				if p.text[i] == '"' {
					end, ok := quotedEnd(p.text, i)
					if !ok {
						p.errorf(i, "unterminated string literal in the value of %s", key)
						return d
					}
					i = end
					continue
				}
				i++
			}
			val = p.text[valStart:i]
			if end, whole := p.spaced(i, val); end > i {
				// identity=orderID, cents: the value went on after a
				// space. One error that says to quote it, not two that
				// say "empty expression" and "cents is not key=value".
				hint := ""
				if !strings.Contains(whole, `"`) {
					hint = fmt.Sprintf(" (or write it without spaces: %s=%s)", key, strings.Join(strings.Fields(whole), ""))
				}
				p.errorf(valStart, "the value of %s= ends at the space after %q: a value with spaces must be quoted: %s=%s%s", key, val, key, strconv.Quote(whole), hint)
				val, i = whole, end
			}
		}
		if key == "" {
			p.errorf(keyStart, "missing key before '='")
			continue
		}
		if !contains(knownKeys[d.Kind], key) {
			p.errorf(keyStart, "unknown key %q for //agentidem:%s: want one of %s", key, d.Kind, strings.Join(knownKeys[d.Kind], ", "))
			continue
		}
		if first, dup := seen[key]; dup {
			p.errorf(keyStart, "duplicate key %q (first at column %d)", key, p.posAt(first).Column)
			continue
		}
		seen[key] = keyStart
		if val == "" {
			p.errorf(valStart, "empty value for %s", key)
			continue
		}
		quoted := p.text[valStart] == '"'
		p.setKey(d, key, val, valStart, quoted)
	}
	if d.Kind == Write {
		if _, ok := seen["identity"]; !ok {
			p.errorf(0, "//agentidem:write needs identity=EXPRS: the logical identity of the effect (e.g. identity=paymentID)")
		}
	}
	return d
}

func (p *parserState) setKey(d *Directive, key, val string, valOff int, quoted bool) {
	// For a quoted value, positions inside it point at the opening quote;
	// for a bare one, at the exact byte.
	at := func(rel int) token.Position {
		if quoted {
			return p.posAt(valOff)
		}
		return p.posAt(valOff + rel)
	}
	switch key {
	case "identity":
		d.Identity = p.exprList(key, val, at)
	case "entity":
		list := p.exprList(key, val, at)
		if len(list) > 1 {
			p.errorf(valOff, "entity= takes one expression, got %d", len(list))
		} else if len(list) == 1 {
			d.Entity = &list[0]
		}
	case "name":
		if !validOpName(val) {
			p.errorf(valOff, "name=%q: an op name is letters, digits, '_', '.', '-' and '/'", val)
			return
		}
		d.Name = &Value{val, at(0)}
	case "wrapper":
		if !token.IsIdentifier(val) {
			p.errorf(valOff, "wrapper=%q is not a Go identifier", val)
			return
		}
		d.Wrapper = &Value{val, at(0)}
	case "after":
		d.After = p.nameList(key, val, at, validOpName, "an op name")
	case "redact":
		d.Redact = p.nameList(key, val, at, token.IsIdentifier, "a parameter name")
	case "idempotent":
		switch val {
		case "true":
			d.Idempotent = true
		case "false":
			d.Idempotent = false
		default:
			p.errorf(valOff, "idempotent=%q: want idempotent, idempotent=true or idempotent=false", val)
		}
	}
}

func (p *parserState) nameList(key, val string, at func(int) token.Position, ok func(string) bool, what string) []Value {
	var out []Value
	seen := map[string]bool{}
	off := 0
	for _, part := range strings.Split(val, ",") {
		name := strings.TrimSpace(part)
		switch {
		case name == "":
			p.errs = append(p.errs, &Error{at(off), fmt.Sprintf("empty element in %s=", key)})
		case !ok(name):
			p.errs = append(p.errs, &Error{at(off), fmt.Sprintf("%s=: %q is not %s", key, name, what)})
		case seen[name]:
			p.errs = append(p.errs, &Error{at(off), fmt.Sprintf("%s=: %q listed twice", key, name)})
		default:
			seen[name] = true
			out = append(out, Value{name, at(off)})
		}
		off += len(part) + 1
	}
	return out
}

// spaced reports where a bare value val, which ended at white space at i,
// was meant to end, and the whole of it, when it is unfinished there: it
// ends in a comma or leaves a bracket open (identity=orderID, cents or
// identity=key(a, b)) and what follows is not key=value. end is i
// otherwise.
func (p *parserState) spaced(i int, val string) (end int, whole string) {
	end, whole = i, val
	for unfinished(whole) {
		j := end
		for j < len(p.text) && (p.text[j] == ' ' || p.text[j] == '\t') {
			j++
		}
		k := j
		for k < len(p.text) && p.text[k] != ' ' && p.text[k] != '\t' {
			k++
		}
		word := p.text[j:k]
		if word == "" || (strings.Contains(word, "=") && !strings.ContainsAny(word[:strings.Index(word, "=")], "()[]{},\"")) {
			break // the end of the comment, or the next key=value
		}
		whole, end = whole+" "+word, k
	}
	return end, whole
}

// unfinished reports whether a value ends in a comma or leaves a bracket
// open, outside string literals.
func unfinished(v string) bool {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			if end, ok := quotedEnd(v, i); ok {
				i = end - 1
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
	}
	return depth > 0 || strings.HasSuffix(v, ",")
}

// exprList splits val at top-level commas and checks that each part is a Go
// expression.
func (p *parserState) exprList(key, val string, at func(int) token.Position) []Value {
	var out []Value
	for _, part := range splitTopLevel(val) {
		src := strings.TrimSpace(part.text)
		lead := len(part.text) - len(strings.TrimLeft(part.text, " \t"))
		if src == "" {
			p.errs = append(p.errs, &Error{at(part.off), fmt.Sprintf("empty expression in %s=", key)})
			continue
		}
		if _, err := parser.ParseExpr(src); err != nil {
			p.errs = append(p.errs, &Error{at(part.off + lead), fmt.Sprintf("%s=: %q is not a Go expression: %s", key, src, firstLine(err))})
			continue
		}
		out = append(out, Value{src, at(part.off + lead)})
	}
	return out
}

type piece struct {
	text string
	off  int
}

// splitTopLevel splits s at commas outside brackets and literals, using the Go
// scanner so that string and rune literals are honoured.
func splitTopLevel(s string) []piece {
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(s))
	var sc scanner.Scanner
	sc.Init(f, []byte(s), func(token.Position, string) {}, 0)
	depth, start := 0, 0
	var out []piece
	for {
		pos, tok, _ := sc.Scan()
		if tok == token.EOF {
			break
		}
		switch tok {
		case token.LPAREN, token.LBRACK, token.LBRACE:
			depth++
		case token.RPAREN, token.RBRACK, token.RBRACE:
			depth--
		case token.COMMA:
			if depth == 0 {
				off := f.Offset(pos)
				out = append(out, piece{s[start:off], start})
				start = off + 1
			}
		}
	}
	return append(out, piece{s[start:], start})
}

func validOpName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '_', r == '.', r == '-', r == '/':
		default:
			return false
		}
	}
	return true
}

// quotedEnd returns the offset just past the closing quote of the Go string
// literal that starts at s[i].
func quotedEnd(s string, i int) (int, bool) {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func firstLine(err error) string {
	msg := err.Error()
	// go/parser prefixes "1:5: "; the position is ours to give.
	if i := strings.Index(msg, ": "); i >= 0 && strings.Count(msg[:i], ":") == 1 {
		msg = msg[i+2:]
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
