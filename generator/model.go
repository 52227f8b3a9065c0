package generator

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/agentidem/agentidem-go/internal/directive"
	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/packages"
)

// Package is the IR of one package: where its generated file goes and the
// annotated functions in it, in source order.
type Package struct {
	Path string // import path
	Name string // package name
	Dir  string
	Ops  []*Op
	// Types is the checked package, used to print types relative to it.
	Types *types.Package
}

// Op is one annotated function or method.
type Op struct {
	Name    string         // logical op name
	Kind    directive.Kind // Read or Write
	Func    string         // Go name of the function or method
	Wrapper string         // Go name of the generated wrapper
	Recv    *Recv          // nil for a plain function
	// TypeParams are the function's own type parameters.
	TypeParams *types.TypeParamList
	Params     []Param
	Variadic   bool
	Results    []types.Type // without a trailing error
	HasError   bool         // the last result is error
	CtxParam   int          // index into Params of the context.Context, or -1
	Identity   []Expr       // identity= expressions, in order
	Entity     *Expr        // entity= expression, or nil
	After      []string
	// AfterPkgs holds, for each entry of After, the import path of the
	// package that declares the op it names when that is another package
	// ("" for an op of this one): the generated file writes it, so that
	// the runtime follows the op if it renames it (runtime.Declare).
	AfterPkgs []string
	// RedactIdentity says identity or entity mention a redacted parameter:
	// the runtime then records a digest instead of the value.
	RedactIdentity bool
	// Idempotent is the directive's idempotent flag.
	Idempotent bool
	Pos        token.Position // of the func keyword; Filename is the base name
	Sig        *types.Signature
	// Directive is the annotation's text as written (runtime.Op.Directive).
	Directive string

	decl token.Position // Pos with the full file name, for errors
}

// Expr is a directive expression ready to print: its source split into
// verbatim text and references to imported packages, so the generated file
// imports them under names of its own whatever the annotated file calls them.
type Expr struct {
	Src   string // as written in the directive
	Parts []ExprPart
}

// ExprPart is verbatim source Text, or, when Path is set, the qualified
// reference Path.Name to a member of the package named Pkg.
type ExprPart struct {
	Text       string
	Path, Name string
	Pkg        string
}

// Param is one parameter of an op's function.
type Param struct {
	Name string // a usable name: the source name, or p<i> when blank, or a
	// fresh name when the source name would hide what the wrapper needs
	Label    string // the name in reports and messages: the source name, or Name when blank
	Type     types.Type
	Redacted bool
}

// Recv is the receiver of a method.
type Recv struct {
	Name    string
	Pointer bool
	Named   *types.Named // the receiver's named type (generic origin for generic types)
	// TypeParams are the receiver type's parameters as the method names them.
	TypeParams *types.TypeParamList
}

// Errors lists every error found, each "file:line:col: message".
type Errors []error

// Error returns every error, one per line.
func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// posError is an error at a source position.
type posError struct {
	pos token.Position
	msg string
}

func (e *posError) Error() string { return e.pos.String() + ": " + e.msg }

func errAt(pos token.Position, format string, args ...any) error {
	return &posError{pos, fmt.Sprintf(format, args...)}
}

// builder collects the IR of one package and every problem with it.
type builder struct {
	pkg      *packages.Package
	fset     *token.FileSet
	errs     Errors
	warnings []string
	typeErrs []packages.Error
	ctx      buildContext
}

// buildContext is what buildPackage needs to know beyond the package.
type buildContext struct {
	// knownOps are the op names declared in the package, its _test.go
	// files and its dependencies (what after= may name), each with the
	// import paths of the packages that declare it.
	knownOps map[string][]string
	// testDecls are the top-level declarations of the package's own
	// _test.go files (Name, or Type.Method), which the type check of a
	// plain build does not see but go test compiles with the wrappers.
	testDecls map[string]token.Position
}

// buildPackage validates the directives of pkg and returns its IR.
func buildPackage(pkg *packages.Package, typeErrs []packages.Error, ctx buildContext) (*Package, Errors, []string) {
	b := &builder{pkg: pkg, fset: pkg.Fset, typeErrs: typeErrs, ctx: ctx}
	out := &Package{Path: pkg.PkgPath, Name: pkg.Name, Types: pkg.Types}
	if len(pkg.GoFiles) > 0 {
		out.Dir = filepath.Dir(pkg.GoFiles[0])
	}
	for _, f := range pkg.Syntax {
		docs := map[*ast.CommentGroup]bool{}
		// The file's own name, not the name of what the compiler read:
		// a file with import "C" is type-checked from cgo's output in the
		// build cache, whose //line comments point back at the source.
		constrained := constrainedFile(b.fset.Position(f.Package).Filename)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Doc == nil {
				continue
			}
			docs[fn.Doc] = true
			op := b.buildOp(fn)
			if op == nil {
				continue
			}
			out.Ops = append(out.Ops, op)
			if constrained {
				b.warnings = append(b.warnings, fmt.Sprintf("%s: warning: %s is in %s, which is built only under a build constraint (a //go:build line or a GOOS/GOARCH file suffix); %s is not, so a build without the constraint fails with undefined: %s. Annotate functions in files every build includes", op.decl, op.Func, op.Pos.Filename, FileName, op.Func))
			}
		}
		b.misplaced(f, docs)
	}
	b.crossCheck(out)
	sortByPos(b.errs)
	return out, b.errs, b.warnings
}

// constrainedFile reports whether the Go file at path is left out of some
// ordinary builds: it has a build constraint that fails for one of a few
// common platforms with no extra tags, or a GOOS/GOARCH file name suffix.
func constrainedFile(path string) bool {
	dir, name := filepath.Split(path)
	for _, p := range [][2]string{{"linux", "amd64"}, {"darwin", "arm64"}, {"windows", "386"}} {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH = p[0], p[1]
		ctx.BuildTags, ctx.ToolTags, ctx.ReleaseTags = nil, nil, build.Default.ReleaseTags
		ctx.CgoEnabled = true
		if ok, err := ctx.MatchFile(dir, name); err == nil && !ok {
			return true
		}
	}
	return false
}

// sortByPos orders errors by file, line and column, so that the list reads
// like the source; errors without a position keep their order at the end.
func sortByPos(errs Errors) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, okA := posOf(errs[i])
		c, okC := posOf(errs[j])
		switch {
		case !okA || !okC:
			return okA && !okC
		case a.Filename != c.Filename:
			return a.Filename < c.Filename
		case a.Line != c.Line:
			return a.Line < c.Line
		}
		return a.Column < c.Column
	})
}

func posOf(err error) (token.Position, bool) {
	var pe *posError
	if errors.As(err, &pe) {
		return pe.pos, true
	}
	var de *directive.Error
	if errors.As(err, &de) {
		return de.Pos, true
	}
	return token.Position{}, false
}

// misplaced reports read and write directives that are not in the doc
// comment of a function declaration: they would silently do nothing.
// //agentidem:ignore is not one of them: it belongs on the line above the
// code it silences, and it is the analyzer's directive (see buildOp).
func (b *builder) misplaced(f *ast.File, docs map[*ast.CommentGroup]bool) {
	errs, warns := strayDirectives(b.fset, f, docs)
	b.errs = append(b.errs, errs...)
	b.warnings = append(b.warnings, warns...)
}

// strayDirectives returns what is wrong with the comments of f that look
// like directives and annotate nothing, docs being the doc comments of its
// function declarations (whose directives buildOp reads): an error for a
// read or write directive outside them, for one whose verb is unknown
// there (//agentidem:wirte, reported as such rather than as misplaced),
// and for a near miss of the directive form (a block comment
// /*agentidem:write, a misspelt prefix //agentidm:write or //agentidem
// write), which would otherwise leave a function unwrapped in silence; a
// warning for a directive written with a space after //, which Go tools
// read as prose, and which prose may well be.
func strayDirectives(fset *token.FileSet, f *ast.File, docs map[*ast.CommentGroup]bool) (errs []error, warns []string) {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			switch {
			case spaced(c.Text):
				warns = append(warns, fmt.Sprintf("%s: warning: %q is not a directive, so it annotates nothing: write //agentidem:... with no space after //", fset.Position(c.Slash), c.Text))
			case directive.NearMiss(c.Text) != "":
				errs = append(errs, errAt(fset.Position(c.Slash), "%s", directive.NearMiss(c.Text)))
			}
		}
		if docs[cg] {
			continue
		}
		for _, c := range cg.List {
			if !directive.IsDirective(c.Text) || directive.IsIgnore(c.Text) {
				continue
			}
			if d, perrs := directive.Parse(c.Text, fset.Position(c.Slash)); d == nil && directive.UnknownVerb(c.Text) {
				errs = append(errs, perrs...)
				continue
			}
			errs = append(errs, errAt(fset.Position(c.Slash), "%s is not in the doc comment of a function or method declaration, so it annotates nothing: put it right above func", strings.SplitN(c.Text, " ", 2)[0]))
		}
	}
	return errs, warns
}

// withoutIgnores returns doc without its //agentidem:ignore lines. An
// ignore silences agentidem-vet's diagnostics and changes nothing the
// generator writes, so the generator leaves it, well formed or not, to the
// vet tool, which reads it and reports one without a reason ("bad
// directive: //agentidem:ignore needs a reason"): go generate does not fail
// over a linter's comment.
func withoutIgnores(doc *ast.CommentGroup) *ast.CommentGroup {
	if doc == nil {
		return nil
	}
	var kept []*ast.Comment
	for _, c := range doc.List {
		if !directive.IsIgnore(c.Text) {
			kept = append(kept, c)
		}
	}
	if len(kept) == len(doc.List) {
		return doc
	}
	return &ast.CommentGroup{List: kept}
}

// spaced reports whether a comment looks like a read or write directive
// written with a space after "//", which Go tools treat as prose.
func spaced(text string) bool {
	rest, ok := strings.CutPrefix(text, "//")
	if !ok || !strings.HasPrefix(rest, " ") && !strings.HasPrefix(rest, "\t") {
		return false
	}
	rest = strings.TrimLeft(rest, " \t")
	for _, verb := range []string{"agentidem:read", "agentidem:write"} {
		if after, ok := strings.CutPrefix(rest, verb); ok && (after == "" || after[0] == ' ' || after[0] == '\t') {
			return true
		}
	}
	return false
}

func (b *builder) buildOp(fn *ast.FuncDecl) *Op {
	d, _, errs := directive.FromDoc(b.fset, withoutIgnores(fn.Doc))
	b.errs = append(b.errs, errs...)
	if d == nil {
		return nil
	}
	if fn.Recv == nil && (fn.Name.Name == "init" || fn.Name.Name == "_") {
		b.errs = append(b.errs, errAt(b.fset.Position(fn.Pos()), "func %s cannot be called by an agent, so it cannot be wrapped: annotate the tool function it calls", fn.Name.Name))
		return nil
	}
	obj, ok := b.pkg.TypesInfo.Defs[fn.Name].(*types.Func)
	if !ok {
		return nil
	}
	sig := obj.Type().(*types.Signature)
	pos := b.fset.Position(fn.Pos())
	if invalid(sig, map[types.Type]bool{}) {
		// Name the type errors inside the signature, not the first of
		// the package: that one is often a call of a wrapper that this
		// run is about to write.
		msg := "its signature does not type-check"
		var inSig []string
		for _, te := range b.pkg.TypeErrors {
			if te.Pos >= fn.Pos() && te.Pos < fn.Type.End() {
				inSig = append(inSig, te.Msg)
			}
		}
		if len(inSig) > 0 {
			msg += ": " + strings.Join(inSig, "; ")
		}
		b.errs = append(b.errs, errAt(pos, "cannot generate a wrapper for %s: %s", fn.Name.Name, msg))
		return nil
	}
	op := &Op{
		Kind:       d.Kind,
		Func:       fn.Name.Name,
		TypeParams: sig.TypeParams(),
		Variadic:   sig.Variadic(),
		CtxParam:   -1,
		Pos:        pos,
		Sig:        sig,
		Directive:  d.Text,
		decl:       pos,
	}
	op.Pos.Filename = filepath.Base(pos.Filename)
	op.Name = fn.Name.Name
	if recv := sig.Recv(); recv != nil {
		r, err := b.recv(recv, sig, pos)
		if err != nil {
			b.errs = append(b.errs, err)
			return nil
		}
		op.Recv = r
		op.Name = r.Named.Obj().Name() + "." + fn.Name.Name
	}
	if d.Name != nil {
		op.Name = d.Name.Text
	}
	op.Wrapper = fn.Name.Name + "Traced"
	if d.Wrapper != nil {
		op.Wrapper = d.Wrapper.Text
	}

	// Blank and unnamed parameters (and an unnamed receiver) get names
	// that nothing the wrapper's body refers to already uses: no other
	// parameter, receiver or type parameter, no package-level name (the
	// body calls the function and may use package-level names through
	// identity and entity), no identifier of those expressions, and not
	// nil or any, which the body spells. A named parameter or receiver that
	// would hide one of those from the body is renamed the same way; the
	// expressions that mention it are rewritten (rename).
	params := sig.Params()
	used := map[string]bool{"nil": true, "any": true}
	for _, name := range b.pkg.Types.Scope().Names() {
		used[name] = true
	}
	for _, v := range append(append([]directive.Value(nil), d.Identity...), optional(d.Entity)...) {
		for name := range exprIdents(v.Text) {
			used[name] = true
		}
	}
	needed := map[string]bool{"nil": true, "any": true}
	if op.Recv == nil {
		needed[fn.Name.Name] = true
	}
	for i := 0; i < params.Len(); i++ {
		used[params.At(i).Name()] = true
	}
	for _, list := range []*types.TypeParamList{sig.TypeParams(), sig.RecvTypeParams()} {
		for i := 0; i < list.Len(); i++ {
			used[list.At(i).Obj().Name()] = true
		}
	}
	fresh := func(name string) string {
		for used[name] {
			name += "_"
		}
		used[name] = true
		return name
	}
	rename := map[types.Object]string{}
	if op.Recv != nil {
		switch n := sig.Recv().Name(); {
		case n == "" || n == "_":
			op.Recv.Name = fresh("recv")
		case needed[n]:
			op.Recv.Name = fresh(n + "_")
			rename[sig.Recv()] = op.Recv.Name
		}
	}
	for i := 0; i < params.Len(); i++ {
		v := params.At(i)
		name, label := v.Name(), v.Name()
		switch {
		case name == "" || name == "_":
			name = fresh(fmt.Sprintf("p%d", i))
			label = name
		case needed[name]:
			name = fresh(name + "_")
			rename[v] = name
		}
		op.Params = append(op.Params, Param{Name: name, Label: label, Type: v.Type()})
		if isContext(v.Type()) && op.CtxParam < 0 {
			op.CtxParam = i
		}
	}
	results := sig.Results()
	for i := 0; i < results.Len(); i++ {
		t := results.At(i).Type()
		if i == results.Len()-1 && types.Identical(t, errorType) {
			op.HasError = true
			continue
		}
		op.Results = append(op.Results, t)
	}
	if op.Kind == directive.Write && !op.HasError {
		b.warnings = append(b.warnings, fmt.Sprintf("%s: warning: write %s has no error result: it is traced, but no failure or lost acknowledgement can be injected into it", pos, op.Name))
	}
	if op.Kind == directive.Write && op.CtxParam < 0 {
		b.warnings = append(b.warnings, fmt.Sprintf("%s: warning: write %s has no context.Context parameter: its calls are attributed to a delivery by the goroutine that makes them, which weakens crash_restart (the crash's cancellation never reaches it), duplicate_delivery/concurrent and tests run with t.Parallel (a call from a goroutine that descends from no delivery cannot be attributed and is refused); take ctx context.Context as the first parameter", pos, op.Name))
	}

	redacted := map[*types.Var]bool{}
	for _, r := range d.Redact {
		idx := -1
		for i, p := range op.Params {
			if p.Label == r.Text {
				idx = i
			}
		}
		switch {
		case idx < 0:
			b.errs = append(b.errs, errAt(r.Pos, "redact=%s: %s has no parameter %s (parameters: %s)", r.Text, op.Func, r.Text, paramNames(op)))
		case idx == op.CtxParam:
			b.errs = append(b.errs, errAt(r.Pos, "redact=%s: a context.Context is never recorded; remove it from redact=", r.Text))
		default:
			op.Params[idx].Redacted = true
			redacted[params.At(idx)] = true
		}
	}
	scope := fn.Type.End() - 1
	if fn.Body != nil {
		scope = fn.Body.Lbrace + 1
	}
	for _, v := range d.Identity {
		if x, ok := b.checkExpr(op, "identity", v, scope, redacted, rename); ok {
			op.Identity = append(op.Identity, x)
		}
	}
	if d.Entity != nil {
		if x, ok := b.checkExpr(op, "entity", *d.Entity, scope, redacted, rename); ok {
			op.Entity = &x
		}
	}
	for _, a := range d.After {
		if a.Text == op.Name {
			b.errs = append(b.errs, errAt(a.Pos, "after=%s: an op cannot come after itself; remove it from after=", a.Text))
			continue
		}
		pkg := ""
		if b.ctx.knownOps != nil {
			paths, ok := b.ctx.knownOps[a.Text]
			if !ok {
				b.errs = append(b.errs, errAt(a.Pos, "after=%s: no op named %q in this package or the packages it imports (ops: %s): fix the name, or annotate the tool it means with //agentidem:write name=%s", a.Text, a.Text, knownList(b.ctx.knownOps), a.Text))
				continue
			}
			if !slices.Contains(paths, b.pkg.PkgPath) {
				if len(paths) > 1 {
					b.errs = append(b.errs, errAt(a.Pos, "after=%s: packages this one imports declare an op named %q each (%s): after= cannot tell which; give one of them another name (name=...) and write that one here", a.Text, a.Text, strings.Join(paths, ", ")))
					continue
				}
				pkg = paths[0]
			}
		}
		op.After = append(op.After, a.Text)
		op.AfterPkgs = append(op.AfterPkgs, pkg)
	}
	op.Idempotent = d.Idempotent
	return op
}

func (b *builder) recv(recv *types.Var, sig *types.Signature, pos token.Position) (*Recv, error) {
	r := &Recv{Name: recv.Name(), TypeParams: sig.RecvTypeParams()}
	if r.Name == "" || r.Name == "_" {
		r.Name = "recv"
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		r.Pointer = true
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return nil, errAt(pos, "receiver type %s is not a named type", t)
	}
	r.Named = named.Origin()
	return r, nil
}

// checkExpr type-checks one identity or entity expression in the scope of
// the function's parameters, and rejects values that are not canonical:
// non-deterministic calls and types that JSON cannot encode.
func (b *builder) checkExpr(op *Op, key string, v directive.Value, scope token.Pos, redacted map[*types.Var]bool, rename map[types.Object]string) (Expr, bool) {
	expr, err := parser.ParseExpr(v.Text)
	if err != nil {
		b.errs = append(b.errs, errAt(v.Pos, "%s=%s: %v", key, v.Text, err))
		return Expr{}, false
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	if err := types.CheckExpr(b.fset, b.pkg.Types, scope, expr, info); err != nil {
		msg := err.Error()
		var terr types.Error
		if errors.As(err, &terr) {
			msg = terr.Msg
		}
		b.errs = append(b.errs, errAt(v.Pos, "%s=%s: %s (parameters of %s: %s)", key, v.Text, msg, op.Func, paramNames(op)))
		return Expr{}, false
	}
	ok := true
	ast.Inspect(expr, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			obj, isVar := info.Uses[n].(*types.Var)
			if isVar && redacted[obj] {
				op.RedactIdentity = true
			}
			if isVar && isResult(op.Sig, obj) {
				b.errs = append(b.errs, errAt(v.Pos, "%s=%s: %s is a result of %s, which has no value before the call: use parameters", key, v.Text, n.Name, op.Func))
				ok = false
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				b.errs = append(b.errs, errAt(v.Pos, "%s=%s receives from a channel: the wrapper evaluates it before the call, so tracing would take a value the tool or agent expects; use the values the call works on", key, v.Text))
				ok = false
			}
		case *ast.CallExpr:
			if why := nondeterministic(calleeOf(n, info)); why != "" {
				b.errs = append(b.errs, errAt(v.Pos, "%s=%s: %s is non-deterministic: a retry would get a fresh identity, which defeats the point; derive the identity from the work (ids, session, intent)", key, v.Text, why))
				ok = false
			}
		}
		return ok
	})
	if !ok {
		return Expr{}, false
	}
	tv := info.Types[expr]
	if tv.IsType() {
		b.errs = append(b.errs, errAt(v.Pos, "%s=%s is a type, not a value", key, v.Text))
		return Expr{}, false
	}
	if tv.Type == nil {
		b.errs = append(b.errs, errAt(v.Pos, "%s=%s has no value", key, v.Text))
		return Expr{}, false
	}
	if why := canonicalizable(tv.Type, map[types.Type]bool{}); why != "" {
		b.errs = append(b.errs, errAt(v.Pos, "%s=%s has type %s, which cannot be canonicalized: %s; use values that name the effect instead (ids, keys, exported fields)", key, v.Text, types.TypeString(tv.Type, types.RelativeTo(b.pkg.Types)), why))
		return Expr{}, false
	}
	if key == "identity" || key == "entity" {
		if left, first := leftOut(tv.Type, b.pkg.Types); len(left) > 0 {
			b.warnings = append(b.warnings, fmt.Sprintf("%s: warning: %s=%s leaves out %s: the identity of a struct is its JSON, so two values that differ only there have one %s, and the suite takes the second for a repeat of the first (duplicate_write); if they tell the values apart, name what identifies the value (%s=%s.%s, ...)", v.Pos, key, v.Text, strings.Join(left, " and "), key, key, v.Text, first))
		}
	}
	return splitQuals(v.Text, expr, info, b.pkg.Types, rename), true
}

// crossCheck finds clashes between ops of one package: two ops with one
// name, two wrappers with one name, a wrapper that collides with a
// declaration the user wrote.
func (b *builder) crossCheck(p *Package) {
	names := map[string]*Op{}
	wrappers := map[string]*Op{}
	for _, op := range p.Ops {
		if prev, dup := names[op.Name]; dup {
			b.errs = append(b.errs, errAt(op.decl, "op name %q is also used by %s (%s:%d): op names must be unique in a package; give one of them name=...", op.Name, prev.Func, prev.Pos.Filename, prev.Pos.Line))
		}
		names[op.Name] = op
		key := op.Wrapper
		if op.Recv != nil {
			key = op.Recv.Named.Obj().Name() + "." + op.Wrapper
		}
		if prev, dup := wrappers[key]; dup {
			b.errs = append(b.errs, errAt(op.decl, "wrapper %s is also generated for %s (%s:%d): set wrapper=... on one of them", key, prev.Func, prev.Pos.Filename, prev.Pos.Line))
		}
		wrappers[key] = op
		if op.Recv == nil {
			if obj := p.Types.Scope().Lookup(op.Wrapper); obj != nil {
				b.errs = append(b.errs, errAt(op.decl, "wrapper name %s is already declared at %s: set wrapper=... to another name", op.Wrapper, b.fset.Position(obj.Pos())))
			} else if obj, file := b.fileScopeLookup(op.Wrapper); obj != nil {
				how := "imported"
				if pn, ok := obj.(*types.PkgName); !ok {
					how = "dot-imported from package " + obj.Pkg().Path()
				} else {
					how = "the name of the import of " + pn.Imported().Path()
				}
				b.errs = append(b.errs, errAt(op.decl, "wrapper name %s is %s in %s, so declaring it in this package fails: set wrapper=... to another name", op.Wrapper, how, file))
			} else if pos, ok := b.ctx.testDecls[op.Wrapper]; ok {
				b.errs = append(b.errs, errAt(op.decl, "wrapper name %s is already declared at %s, a _test.go file that go test compiles with %s: set wrapper=... to another name", op.Wrapper, pos, FileName))
			}
		} else if pos, ok := b.ctx.testDecls[op.Recv.Named.Obj().Name()+"."+op.Wrapper]; ok {
			b.errs = append(b.errs, errAt(op.decl, "wrapper name %s is already a method of %s at %s, a _test.go file that go test compiles with %s: set wrapper=... to another name", op.Wrapper, op.Recv.Named.Obj().Name(), pos, FileName))
		} else if obj, index, _ := types.LookupFieldOrMethod(op.Recv.Named, true, p.Types, op.Wrapper); obj != nil && len(index) == 1 {
			// Only a field or method of the type itself: one promoted
			// from an embedded type (its own generated wrapper) is
			// shadowed by the wrapper, as a method declared on the type
			// shadows it.
			b.errs = append(b.errs, errAt(op.decl, "wrapper name %s is already a field or method of %s at %s: set wrapper=... to another name", op.Wrapper, op.Recv.Named.Obj().Name(), b.fset.Position(obj.Pos())))
		}
	}
	sort.SliceStable(p.Ops, func(i, j int) bool {
		a, c := p.Ops[i].Pos, p.Ops[j].Pos
		if a.Filename != c.Filename {
			return a.Filename < c.Filename
		}
		return a.Offset < c.Offset
	})
}

var errorType = types.Universe.Lookup("error").Type()

// fileScopeLookup finds name in the file scope of some file of the
// package (an import name or a dot-imported name) and returns it with the
// file's base name.
func (b *builder) fileScopeLookup(name string) (types.Object, string) {
	for _, f := range b.pkg.Syntax {
		scope := b.pkg.TypesInfo.Scopes[f]
		if scope == nil {
			continue
		}
		if obj := scope.Lookup(name); obj != nil {
			return obj, filepath.Base(b.fset.Position(f.Package).Filename)
		}
	}
	return nil, ""
}

// knownList lists op names, sorted, at most ten.
func knownList(ops map[string][]string) string {
	var names []string
	for n := range ops {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		names = append(names[:10], "...")
	}
	return strings.Join(names, ", ")
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func paramNames(op *Op) string {
	var names []string
	if op.Recv != nil {
		names = append(names, op.Recv.Name)
	}
	for _, p := range op.Params {
		names = append(names, p.Label)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// isResult reports whether v is one of sig's named results.
func isResult(sig *types.Signature, v *types.Var) bool {
	for i := 0; i < sig.Results().Len(); i++ {
		if sig.Results().At(i) == v {
			return true
		}
	}
	return false
}

// calleeOf returns the function a call expression calls, or nil.
func calleeOf(call *ast.CallExpr, info *types.Info) *types.Func {
	var id *ast.Ident
	switch fun := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = fun
	case *ast.SelectorExpr:
		id = fun.Sel
	case *ast.IndexExpr:
		if s, ok := fun.X.(*ast.SelectorExpr); ok {
			id = s.Sel
		} else if i, ok := fun.X.(*ast.Ident); ok {
			id = i
		}
	}
	if id == nil {
		return nil
	}
	f, _ := info.Uses[id].(*types.Func)
	return f
}

// nondeterministic says why calling f gives a different value each time,
// or "" when it has no known reason to (see directive.Nondeterministic;
// methods are never reported).
func nondeterministic(f *types.Func) string {
	if f == nil || f.Pkg() == nil || f.Type().(*types.Signature).Recv() != nil {
		return ""
	}
	return directive.Nondeterministic(f.Pkg().Path(), f.Name())
}

// canonicalizable says why values of t cannot be encoded as canonical JSON,
// or "" when they can.
func canonicalizable(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	if implementsMarshaler(t) {
		return ""
	}
	switch u := types.Unalias(t).Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Kind() == types.UnsafePointer:
			return "unsafe.Pointer has no value to compare"
		case u.Info()&types.IsComplex != 0:
			return "JSON has no complex numbers"
		case u.Kind() == types.UntypedNil:
			return "nil has no identity"
		}
		return ""
	case *types.Signature:
		return "a func has no comparable value"
	case *types.Chan:
		return "a channel has no comparable value"
	case *types.Pointer:
		return canonicalizable(u.Elem(), seen)
	case *types.Slice:
		return canonicalizable(u.Elem(), seen)
	case *types.Array:
		return canonicalizable(u.Elem(), seen)
	case *types.Map:
		k := types.Unalias(u.Key()).Underlying()
		if b, ok := k.(*types.Basic); !ok || b.Info()&(types.IsString|types.IsInteger) == 0 {
			if !implementsTextMarshaler(u.Key()) {
				return "map keys must be strings, integers or encoding.TextMarshaler"
			}
		}
		return canonicalizable(u.Elem(), seen)
	case *types.Struct:
		exported := 0
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if !f.Exported() && !f.Embedded() {
				continue
			}
			exported++
			if why := canonicalizable(f.Type(), seen); why != "" {
				return "field " + f.Name() + ": " + why
			}
		}
		if exported == 0 && u.NumFields() > 0 {
			return "it has no exported fields, so every value would encode as {} and share one identity"
		}
		return ""
	case *types.Interface:
		return "" // decided by the dynamic value, at run time
	case *types.TypeParam:
		return ""
	}
	return ""
}

// leftOut lists the fields of struct type t (through a pointer) that its
// JSON leaves out and that may tell two values apart: an exported field
// tagged json:"-", and an unexported one of a basic type (an id kept
// private). A type with a JSON or text marshaler decides for itself.
// Fields of other unexported types (a mutex, a cache, a protobuf message's
// internal state) are left alone.
func leftOut(t types.Type, pkg *types.Package) (left []string, first string) {
	if p, ok := types.Unalias(t).Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if implementsMarshaler(t) {
		return nil, ""
	}
	st, ok := types.Unalias(t).Underlying().(*types.Struct)
	if !ok {
		return nil, ""
	}
	name := types.TypeString(t, types.RelativeTo(pkg))
	for i := 0; i < st.NumFields(); i++ {
		f := st.Field(i)
		if f.Embedded() {
			continue
		}
		tag := reflect.StructTag(st.Tag(i)).Get("json")
		why := ""
		switch {
		case f.Exported() && tag == "-":
			why = `json:"-"`
		case !f.Exported():
			if _, basic := types.Unalias(f.Type()).Underlying().(*types.Basic); basic {
				why = "unexported"
			}
		}
		if why != "" {
			left = append(left, fmt.Sprintf("%s.%s (%s)", name, f.Name(), why))
			if first == "" {
				first = f.Name()
			}
		}
	}
	return left, first
}

func implementsMarshaler(t types.Type) bool {
	return hasMethod(t, "MarshalJSON") || hasMethod(t, "MarshalText")
}

func implementsTextMarshaler(t types.Type) bool { return hasMethod(t, "MarshalText") }

func hasMethod(t types.Type, name string) bool {
	if _, ok := types.Unalias(t).Underlying().(*types.Interface); ok {
		return false
	}
	for _, tt := range []types.Type{t, types.NewPointer(t)} {
		ms := types.NewMethodSet(tt)
		for i := 0; i < ms.Len(); i++ {
			if ms.At(i).Obj().Name() == name {
				return true
			}
		}
	}
	return false
}

// splitQuals prints expr with each selector on an imported package name
// split out as a qualified part, and each identifier of a renamed parameter
// (see buildOp) replaced by its new name.
func splitQuals(src string, expr ast.Expr, info *types.Info, pkg *types.Package, rename map[types.Object]string) Expr {
	type qual struct{ path, name, pkg string }
	var quals []qual
	// The placeholder must not occur in the printed expression (a string
	// literal may hold anything), or the text would be cut in the wrong
	// place.
	var orig bytes.Buffer
	_ = printer.Fprint(&orig, token.NewFileSet(), expr)
	marker := "agentidemQual"
	for strings.Contains(orig.String(), marker) {
		marker += "X"
	}
	placeholder := func(i int) string { return fmt.Sprintf("%s%d_", marker, i) }
	marked := astutil.Apply(expr, func(c *astutil.Cursor) bool {
		if id, ok := c.Node().(*ast.Ident); ok {
			obj := info.Uses[id]
			if name, ok := rename[obj]; ok && obj != nil {
				c.Replace(ast.NewIdent(name))
				return true
			}
			// A package-level name of another package used without a
			// qualifier comes from a dot import, which the generated
			// file does not have: qualify it.
			if obj != nil && obj.Pkg() != nil && obj.Pkg() != pkg && obj.Parent() == obj.Pkg().Scope() {
				c.Replace(ast.NewIdent(placeholder(len(quals))))
				quals = append(quals, qual{obj.Pkg().Path(), id.Name, obj.Pkg().Name()})
			}
			return true
		}
		sel, ok := c.Node().(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if pn, ok := info.Uses[id].(*types.PkgName); ok {
			c.Replace(ast.NewIdent(placeholder(len(quals))))
			quals = append(quals, qual{pn.Imported().Path(), sel.Sel.Name, pn.Imported().Name()})
			return false
		}
		return true
	}, nil)
	var buf bytes.Buffer
	_ = printer.Fprint(&buf, token.NewFileSet(), marked)
	text := buf.String()
	x := Expr{Src: src}
	for i, q := range quals {
		before, after, _ := strings.Cut(text, placeholder(i))
		if before != "" {
			x.Parts = append(x.Parts, ExprPart{Text: before})
		}
		x.Parts = append(x.Parts, ExprPart{Path: q.path, Name: q.name, Pkg: q.pkg})
		text = after
	}
	if text != "" {
		x.Parts = append(x.Parts, ExprPart{Text: text})
	}
	return x
}

// exprIdents returns the identifiers of a directive expression, or none when
// it does not parse (checkExpr reports that).
func exprIdents(src string) map[string]bool {
	out := map[string]bool{}
	if expr, err := parser.ParseExpr(src); err == nil {
		ast.Inspect(expr, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				out[id.Name] = true
			}
			return true
		})
	}
	return out
}

// optional returns the value v points at as a list of zero or one.
func optional(v *directive.Value) []directive.Value {
	if v == nil {
		return nil
	}
	return []directive.Value{*v}
}

// invalid reports whether t mentions a type that did not type-check.
func invalid(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t := t.(type) {
	case *types.Basic:
		return t.Kind() == types.Invalid
	case *types.Pointer:
		return invalid(t.Elem(), seen)
	case *types.Slice:
		return invalid(t.Elem(), seen)
	case *types.Array:
		return invalid(t.Elem(), seen)
	case *types.Map:
		return invalid(t.Key(), seen) || invalid(t.Elem(), seen)
	case *types.Chan:
		return invalid(t.Elem(), seen)
	case *types.Signature:
		return invalid(t.Params(), seen) || invalid(t.Results(), seen) || (t.Recv() != nil && invalid(t.Recv().Type(), seen))
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			if invalid(t.At(i).Type(), seen) {
				return true
			}
		}
	case *types.Named:
		args := t.TypeArgs()
		for i := 0; i < args.Len(); i++ {
			if invalid(args.At(i), seen) {
				return true
			}
		}
	}
	return false
}
