package generator

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"sort"
	"strconv"
	"strings"

	"github.com/agentidem/agentidem-go/internal/directive"
	"github.com/dave/jennifer/jen"
)

const runtimePath = "github.com/agentidem/agentidem-go/runtime"

// emit renders the generated file of p. The output depends only on the IR:
// ops are in source order, nothing ranges over a map, and jennifer's Render
// gofmt's the result.
func emit(p *Package) ([]byte, error) {
	f := jen.NewFilePathName(p.Path, p.Name)
	f.HeaderComment(Header)
	e := &emitter{pkg: p, imports: map[string]string{}, tpNames: map[*types.TypeName]string{}}
	e.names()

	f.Comment("The guards below break the build when an annotated function's signature")
	f.Comment("changed and go generate was not run again; the compiler's error names")
	f.Comment("SignatureChangedRunGoGenerate.")
	var guards []jen.Code
	for _, op := range p.Ops {
		if op.TypeParams.Len() == 0 && (op.Recv == nil || op.Recv.TypeParams.Len() == 0) {
			guards = append(guards, jen.Id("_").Op("=").Add(e.rt("SignatureChangedRunGoGenerate")).Types(e.funcType(op, true)).Call(e.methodExpr(op)))
		}
	}
	if len(guards) > 0 {
		f.Var().Defs(guards...)
		f.Line()
	}
	for _, op := range p.Ops {
		if op.TypeParams.Len() > 0 || (op.Recv != nil && op.Recv.TypeParams.Len() > 0) {
			f.Func().Id("_").Types(e.typeParams(op)...).Params().Block(
				jen.Id("_").Op("=").Add(e.rt("SignatureChangedRunGoGenerate")).Types(e.funcType(op, true)).Call(e.methodExpr(op)),
			)
		}
	}
	for _, op := range p.Ops {
		e.op(f, op)
	}
	e.importAliases(f)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", p.Path, err)
	}
	return buf.Bytes(), nil
}

type emitter struct {
	pkg *Package
	// imports maps the path of every package the file refers to to its
	// package name, filled while the code is built.
	imports map[string]string
	// opVars names each op's descriptor variable.
	opVars map[*Op]string
	// tpNames names type parameters; a blank one gets a fresh name, as a
	// guard must refer to it.
	tpNames map[*types.TypeName]string
	// taken holds every name declared in the package or in some wrapper's
	// signature: names the file's own package-level names and import
	// aliases must not take.
	taken map[string]bool
}

// names chooses the package-level names of the file (descriptor variables)
// and the names of blank type parameters, none of them equal to a name the
// package or a wrapper already uses.
func (e *emitter) names() {
	e.taken = map[string]bool{}
	if e.pkg.Types != nil {
		for _, name := range e.pkg.Types.Scope().Names() {
			e.taken[name] = true
		}
	}
	for _, op := range e.pkg.Ops {
		e.taken[op.Wrapper] = true
		for _, p := range op.Params {
			e.taken[p.Name] = true
		}
		if op.Recv != nil {
			e.taken[op.Recv.Name] = true
		}
		for _, list := range []*types.TypeParamList{op.TypeParams, recvTypeParams(op)} {
			for i := 0; i < list.Len(); i++ {
				e.taken[list.At(i).Obj().Name()] = true
			}
		}
	}
	for _, op := range e.pkg.Ops {
		for _, list := range []*types.TypeParamList{op.TypeParams, recvTypeParams(op)} {
			for i := 0; i < list.Len(); i++ {
				obj := list.At(i).Obj()
				if obj.Name() == "_" {
					e.tpNames[obj] = e.fresh("T" + strconv.Itoa(i))
				}
			}
		}
	}
	e.opVars = map[*Op]string{}
	for _, op := range e.pkg.Ops {
		name := op.Wrapper
		if op.Recv != nil {
			name = op.Recv.Named.Obj().Name() + "_" + op.Wrapper
		}
		e.opVars[op] = e.fresh("agentidemOp_" + name)
	}
}

// fresh returns name, or name with underscores appended, whichever is not
// taken yet, and takes it.
func (e *emitter) fresh(name string) string {
	for e.taken[name] {
		name += "_"
	}
	e.taken[name] = true
	return name
}

func recvTypeParams(op *Op) *types.TypeParamList {
	if op.Recv == nil {
		return nil
	}
	return op.Recv.TypeParams
}

// importAliases gives every import of the file an alias that nothing in
// the package or in a wrapper uses: the runtime is agentidemrt, any other
// package ai_<name>. A package-level name of the user's package, a
// parameter or a type parameter then cannot collide with an import
// (var url = ... next to a *url.URL parameter).
func (e *emitter) importAliases(f *jen.File) {
	paths := make([]string, 0, len(e.imports))
	for path := range e.imports {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	if _, ok := e.imports[runtimePath]; ok {
		f.ImportAlias(runtimePath, e.fresh("agentidemrt"))
	}
	for _, path := range paths {
		if path != runtimePath {
			f.ImportAlias(path, e.fresh("ai_"+e.imports[path]))
		}
	}
}

// qual refers to name in the package at path, whose package name is pkg.
func (e *emitter) q(path, pkg, name string) *jen.Statement {
	e.imports[path] = pkg
	return jen.Qual(path, name)
}

// rt refers to a name of the runtime package.
func (e *emitter) rt(name string) *jen.Statement { return e.q(runtimePath, "runtime", name) }

// tpName is the name of a type parameter in the generated file.
func (e *emitter) tpName(tp *types.TypeParam) string {
	if name, ok := e.tpNames[tp.Obj()]; ok {
		return name
	}
	return tp.Obj().Name()
}

func (e *emitter) op(f *jen.File, op *Op) {
	kind := "KindRead"
	verb := "read"
	if op.Kind == directive.Write {
		kind, verb = "KindWrite", "write"
	}
	fields := jen.Dict{
		jen.Id("Name"): jen.Lit(op.Name),
		jen.Id("Kind"): e.rt(kind),
		jen.Id("Pos"):  jen.Lit(fmt.Sprintf("%s:%d", op.Pos.Filename, op.Pos.Line)),
		jen.Id("Pkg"):  jen.Lit(e.pkg.Path),
	}
	if op.Directive != "" {
		fields[jen.Id("Directive")] = jen.Lit(op.Directive)
	}
	var params []jen.Code
	for i, p := range op.Params {
		if i != op.CtxParam {
			params = append(params, jen.Lit(p.Label))
		}
	}
	if len(params) > 0 {
		fields[jen.Id("Params")] = jen.Index().String().Values(params...)
	}
	if len(op.After) > 0 {
		var after []jen.Code
		for i, a := range op.After {
			if i < len(op.AfterPkgs) && op.AfterPkgs[i] != "" {
				a = op.AfterPkgs[i] + " " + a // another package's op (runtime.Declare)
			}
			after = append(after, jen.Lit(a))
		}
		fields[jen.Id("After")] = jen.Index().String().Values(after...)
	}
	if !op.HasError {
		fields[jen.Id("NoError")] = jen.True()
	}
	if op.RedactIdentity {
		fields[jen.Id("RedactIdentity")] = jen.True()
	}
	if op.Idempotent {
		fields[jen.Id("Idempotent")] = jen.True()
	}
	f.Var().Id(e.opVars[op]).Op("=").Add(e.rt("Declare")).Call(jen.Op("&").Add(e.rt("Op")).Values(fields))

	names := e.localNames(op)
	f.Commentf("%s calls %s and records the call for agentidem (//agentidem:%s).", op.Wrapper, op.Func, verb)

	var head *jen.Statement
	if op.Recv != nil {
		head = jen.Func().Params(jen.Id(op.Recv.Name).Add(e.recvType(op))).Id(op.Wrapper)
	} else {
		head = jen.Func().Id(op.Wrapper).Types(e.typeParams(op)...)
	}
	head.Params(e.params(op)...).Params(e.namedResults(op, names)...)

	ctxName := ""
	if op.CtxParam >= 0 {
		ctxName = op.Params[op.CtxParam].Name
	}
	direct := e.call(op, ctxName)
	var inactive jen.Code
	if len(op.Results) > 0 || op.HasError {
		inactive = jen.Return(direct)
	} else {
		inactive = jen.Block(direct, jen.Return())
	}
	var body []jen.Code
	if len(op.Results) > 0 || op.HasError {
		body = append(body, jen.If(jen.Op("!").Add(e.rt("Enabled")).Call()).Block(inactive))
	} else {
		body = append(body, jen.If(jen.Op("!").Add(e.rt("Enabled")).Call()).Block(direct, jen.Return()))
	}

	// Recorded arguments, context excluded, redacted ones replaced. An
	// identity or entity that is just a recorded parameter reuses the
	// argument's interface value instead of converting it again: one
	// allocation less per such value on the active path.
	var args []jen.Code
	argIndex := map[string]int{}
	for i, p := range op.Params {
		switch {
		case i == op.CtxParam:
		case p.Redacted:
			args = append(args, e.rt("Redacted"))
		default:
			argIndex[p.Name] = len(args)
			args = append(args, jen.Id(p.Name))
		}
	}
	argList := jen.Nil()
	value := func(x Expr) jen.Code {
		if i, ok := argIndex[x.Src]; ok {
			return jen.Id(names.args).Index(jen.Lit(i))
		}
		return e.expr(x)
	}
	// values renders a list of expressions as a []any. When they are
	// consecutive recorded parameters, in order, it is a capped slice of
	// the arguments: no allocation at all (identity=id is the usual case).
	values := func(xs []Expr) *jen.Statement {
		first, ok := argIndex[xs[0].Src]
		for k, x := range xs {
			if i, isArg := argIndex[x.Src]; !isArg || i != first+k {
				ok = false
			}
		}
		if ok {
			end := jen.Lit(first + len(xs))
			return jen.Id(names.args).Index(jen.Lit(first), end, end)
		}
		var vals []jen.Code
		for _, x := range xs {
			vals = append(vals, value(x))
		}
		return jen.Index().Any().Values(vals...)
	}
	if len(args) > 0 {
		argList = jen.Index().Any().Values(args...)
	}
	// An expression that can panic (o.ID with a nil o) is evaluated under
	// a recover, so that the tool still runs as it would in production;
	// the call then records the panic (identity_panicked).
	var panics []jen.Code
	guarded := func(key string, xs []Expr, dst, panicked string) jen.Code {
		v := values(xs)
		if !canPanic(xs) {
			return v
		}
		body = append(body, jen.List(jen.Id(dst), jen.Id(panicked)).Op(":=").Add(e.rt("EvalIdentity")).Call(
			jen.Func().Params().Index().Any().Block(jen.Return(v))))
		panics = append(panics, jen.Id(names.call).Dot("IdentityPanicked").Call(jen.Lit(key+"="+srcList(xs)), jen.Id(panicked)))
		return jen.Id(dst)
	}
	ctxArg := jen.Nil()
	ctxRecv := jen.Id("_")
	if ctxName != "" {
		ctxArg = jen.Id(ctxName)
		ctxRecv = jen.Id(names.ctx)
	}
	// Begin and BeginArgs are called by the wrapper itself, never through
	// a helper: the runtime finds the agent's call site two frames above.
	idSpan, idOK := argSpan(op.Identity, argIndex)
	var entSpan [2]int
	entOK := true
	if op.Entity != nil {
		entSpan, entOK = argSpan([]Expr{*op.Entity}, argIndex)
	}
	if idOK && entOK {
		// The identity and the entity are arguments, or absent: the
		// arguments go to BeginArgs as Args, strings and numbers
		// unboxed, which records them without an allocation.
		var typed []jen.Code
		for i, p := range op.Params {
			switch {
			case i == op.CtxParam:
			case p.Redacted:
				typed = append(typed, e.rt("Val").Call(e.rt("Redacted")))
			default:
				typed = append(typed, e.rt(argKind(p.Type, op.Variadic && i == len(op.Params)-1)).Call(jen.Id(p.Name)))
			}
		}
		typedList := jen.Nil()
		if len(typed) > 0 {
			typedList = jen.Index().Add(e.rt("Arg")).Values(typed...)
		}
		span := func(s [2]int) jen.Code {
			if s[1] == 0 {
				return e.rt("ArgSpan").Values()
			}
			return e.rt("Span").Call(jen.Lit(s[0]), jen.Lit(s[1]))
		}
		body = append(body, jen.List(jen.Id(names.call), ctxRecv).Op(":=").Add(e.rt("BeginArgs")).Call(
			ctxArg, jen.Id(e.opVars[op]), typedList, span(idSpan), span(entSpan),
		))
	} else {
		if needArgs(op, argIndex) {
			body = append(body, jen.Id(names.args).Op(":=").Add(argList))
			argList = jen.Id(names.args)
		}
		var identity jen.Code = jen.Nil()
		if len(op.Identity) > 0 {
			identity = guarded("identity", op.Identity, names.id, names.idPanic)
		}
		var entity jen.Code = jen.Nil()
		if op.Entity != nil {
			entity = guarded("entity", []Expr{*op.Entity}, names.ent, names.entPanic)
		}
		body = append(body, jen.List(jen.Id(names.call), ctxRecv).Op(":=").Add(e.rt("Begin")).Call(
			ctxArg, jen.Id(e.opVars[op]), argList, identity, entity,
		))
	}
	body = append(body, panics...)
	// The values of redacted parameters go to the runtime, never to the
	// trace, so it can blank them in results, errors and findings.
	var secrets []jen.Code
	for _, p := range op.Params {
		if p.Redacted {
			secrets = append(secrets, jen.Id(p.Name))
		}
	}
	if len(secrets) > 0 {
		body = append(body, jen.Id(names.call).Dot("Redact").Call(secrets...))
	}
	traced := e.call(op, names.ctx)
	var results []jen.Code
	for i := range op.Results {
		results = append(results, jen.Id(names.results[i]))
	}
	if op.HasError {
		body = append(body,
			jen.If(jen.Id(names.err).Op("=").Id(names.call).Dot("Start").Call(), jen.Id(names.err).Op("!=").Nil()).Block(jen.Return()),
			jen.Defer().Id(names.call).Dot("Recover").Call(jen.Op("&").Id(names.err)),
		)
		if len(results) == 0 {
			body = append(body,
				jen.Id(names.err).Op("=").Add(traced),
				jen.If(jen.Id(names.lost).Op(":=").Id(names.call).Dot("Finish").Call(jen.Id(names.err)), jen.Id(names.lost).Op("!=").Nil()).Block(
					jen.Return(jen.Id(names.lost)),
				),
				jen.Return(),
			)
		} else {
			// The tool's results go to fresh variables, so the named
			// results are still zero when a lost acknowledgement must
			// hide them. No type is spelled in the body: a parameter that
			// shadows a type or package name cannot break it.
			var values []jen.Code
			for i := range op.Results {
				values = append(values, jen.Id(names.values[i]))
			}
			finishArgs := append([]jen.Code{jen.Id(names.err)}, values...)
			body = append(body,
				jen.List(append(values, jen.Id(names.err))...).Op(":=").Add(traced),
				jen.If(jen.Id(names.lost).Op(":=").Id(names.call).Dot("Finish").Call(finishArgs...), jen.Id(names.lost).Op("!=").Nil()).Block(
					jen.Return(append(results, jen.Id(names.lost))...),
				),
				jen.Return(append(values, jen.Id(names.err))...),
			)
		}
	} else {
		body = append(body,
			jen.Id("_").Op("=").Id(names.call).Dot("Start").Call(),
			jen.Defer().Id(names.call).Dot("Recover").Call(jen.Nil()),
		)
		if len(results) > 0 {
			body = append(body, jen.List(results...).Op("=").Add(traced))
		} else {
			body = append(body, traced)
		}
		finishArgs := append([]jen.Code{jen.Nil()}, results...)
		body = append(body, jen.Id("_").Op("=").Id(names.call).Dot("Finish").Call(finishArgs...), jen.Return())
	}
	f.Add(head.Block(body...))
}

// locals are the wrapper's own variable names, chosen not to collide with
// the parameters, receiver, type parameters or identifiers of the
// identity and entity expressions.
type locals struct {
	call, ctx, err, lost string
	id, idPanic          string // identity values and panic, when guarded
	ent, entPanic        string // entity values and panic, when guarded
	args                 string
	results              []string // the wrapper's named results
	values               []string // the tool's results, when it has an error
}

func (e *emitter) localNames(op *Op) locals {
	taken := map[string]bool{}
	for _, p := range op.Params {
		taken[p.Name] = true
	}
	if op.Recv != nil {
		taken[op.Recv.Name] = true
		for i := 0; i < op.Recv.TypeParams.Len(); i++ {
			taken[e.tpName(op.Recv.TypeParams.At(i))] = true
		}
	}
	for i := 0; i < op.TypeParams.Len(); i++ {
		taken[e.tpName(op.TypeParams.At(i))] = true
	}
	exprs := append([]Expr(nil), op.Identity...)
	if op.Entity != nil {
		exprs = append(exprs, *op.Entity)
	}
	for _, x := range exprs {
		if expr, err := parser.ParseExpr(x.Src); err == nil {
			ast.Inspect(expr, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					taken[id.Name] = true
				}
				return true
			})
		}
	}
	pick := func(name string) string {
		for taken[name] {
			name += "_"
		}
		taken[name] = true
		return name
	}
	l := locals{call: pick("aiCall"), ctx: pick("aiCtx"), err: pick("aiErr"), lost: pick("aiLost"), args: pick("aiArgs"),
		id: pick("aiID"), idPanic: pick("aiIDPanic"), ent: pick("aiEnt"), entPanic: pick("aiEntPanic")}
	for i := range op.Results {
		l.results = append(l.results, pick("aiR"+strconv.Itoa(i)))
	}
	if op.HasError {
		for i := range op.Results {
			l.values = append(l.values, pick("aiV"+strconv.Itoa(i)))
		}
	}
	return l
}

// call is the direct call of the annotated function, with ctxName in place
// of the context parameter.
func (e *emitter) call(op *Op, ctxName string) *jen.Statement {
	var args []jen.Code
	for i, p := range op.Params {
		a := jen.Id(p.Name)
		if i == op.CtxParam {
			a = jen.Id(ctxName)
		}
		if op.Variadic && i == len(op.Params)-1 {
			a = a.Op("...")
		}
		args = append(args, a)
	}
	if op.Recv != nil {
		return jen.Id(op.Recv.Name).Dot(op.Func).Call(args...)
	}
	fn := jen.Id(op.Func)
	if op.TypeParams.Len() > 0 {
		var tps []jen.Code
		for i := 0; i < op.TypeParams.Len(); i++ {
			tps = append(tps, jen.Id(e.tpName(op.TypeParams.At(i))))
		}
		fn = fn.Types(tps...)
	}
	return fn.Call(args...)
}

// methodExpr names the annotated function as a value, for the guard.
func (e *emitter) methodExpr(op *Op) *jen.Statement {
	if op.Recv != nil {
		return jen.Parens(e.recvType(op)).Dot(op.Func)
	}
	fn := jen.Id(op.Func)
	if op.TypeParams.Len() > 0 {
		var tps []jen.Code
		for i := 0; i < op.TypeParams.Len(); i++ {
			tps = append(tps, jen.Id(e.tpName(op.TypeParams.At(i))))
		}
		fn = fn.Types(tps...)
	}
	return fn
}

// funcType is the function type of the annotated function; with recv, a
// method's receiver comes first, as in a method expression.
func (e *emitter) funcType(op *Op, withRecv bool) *jen.Statement {
	var params []jen.Code
	if withRecv && op.Recv != nil {
		params = append(params, e.recvType(op))
	}
	for i, p := range op.Params {
		if op.Variadic && i == len(op.Params)-1 {
			params = append(params, jen.Op("...").Add(e.typ(p.Type.(*types.Slice).Elem())))
			continue
		}
		params = append(params, e.typ(p.Type))
	}
	var results []jen.Code
	for _, t := range op.Results {
		results = append(results, e.typ(t))
	}
	if op.HasError {
		results = append(results, jen.Error())
	}
	return jen.Func().Params(params...).Params(results...)
}

func (e *emitter) recvType(op *Op) *jen.Statement {
	t := jen.Id(op.Recv.Named.Obj().Name())
	if n := op.Recv.TypeParams.Len(); n > 0 {
		var tps []jen.Code
		for i := 0; i < n; i++ {
			tps = append(tps, jen.Id(e.tpName(op.Recv.TypeParams.At(i))))
		}
		t = t.Types(tps...)
	}
	if op.Recv.Pointer {
		return jen.Op("*").Add(t)
	}
	return t
}

// typeParams declares the type parameters of a generic function, or of the
// receiver type of a generic method (for its guard).
func (e *emitter) typeParams(op *Op) []jen.Code {
	list := op.TypeParams
	if op.Recv != nil {
		list = op.Recv.TypeParams
	}
	var out []jen.Code
	for i := 0; i < list.Len(); i++ {
		tp := list.At(i)
		out = append(out, jen.Id(e.tpName(tp)).Add(e.constraint(tp.Constraint())))
	}
	return out
}

func (e *emitter) constraint(t types.Type) jen.Code {
	if iface, ok := t.(*types.Interface); ok && iface.IsImplicit() && iface.NumEmbeddeds() == 1 {
		return e.typ(iface.EmbeddedType(0))
	}
	return e.typ(t)
}

func (e *emitter) params(op *Op) []jen.Code {
	var out []jen.Code
	for i, p := range op.Params {
		if op.Variadic && i == len(op.Params)-1 {
			out = append(out, jen.Id(p.Name).Op("...").Add(e.typ(p.Type.(*types.Slice).Elem())))
			continue
		}
		out = append(out, jen.Id(p.Name).Add(e.typ(p.Type)))
	}
	return out
}

func (e *emitter) namedResults(op *Op, names locals) []jen.Code {
	var out []jen.Code
	for i, t := range op.Results {
		out = append(out, jen.Id(names.results[i]).Add(e.typ(t)))
	}
	if op.HasError {
		out = append(out, jen.Id(names.err).Error())
	}
	return out
}

// typ renders a type, qualifying names from other packages so that jennifer
// writes their imports.
func (e *emitter) typ(t types.Type) jen.Code {
	switch t := t.(type) {
	case *types.Alias:
		obj := t.Obj()
		if obj.Pkg() == nil {
			return jen.Id(obj.Name()) // any
		}
		return e.qual(obj).Types(e.typeArgs(t.TypeArgs())...)
	case *types.Basic:
		if t.Kind() == types.UnsafePointer {
			return e.q("unsafe", "unsafe", "Pointer") // its Name is "Pointer"
		}
		return jen.Id(t.Name())
	case *types.Named:
		obj := t.Obj()
		if obj.Pkg() == nil {
			return jen.Id(obj.Name()) // error, comparable
		}
		return e.qual(obj).Types(e.typeArgs(t.TypeArgs())...)
	case *types.TypeParam:
		return jen.Id(e.tpName(t))
	case *types.Pointer:
		return jen.Op("*").Add(e.typ(t.Elem()))
	case *types.Slice:
		return jen.Index().Add(e.typ(t.Elem()))
	case *types.Array:
		return jen.Index(jen.Lit(int(t.Len()))).Add(e.typ(t.Elem()))
	case *types.Map:
		return jen.Map(e.typ(t.Key())).Add(e.typ(t.Elem()))
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return jen.Chan().Op("<-").Add(e.typ(t.Elem()))
		case types.RecvOnly:
			return jen.Op("<-").Chan().Add(e.typ(t.Elem()))
		}
		if elem, ok := t.Elem().(*types.Chan); ok && elem.Dir() == types.RecvOnly {
			// chan <-chan T would parse as chan<- (chan T).
			return jen.Chan().Parens(e.typ(elem))
		}
		return jen.Chan().Add(e.typ(t.Elem()))
	case *types.Signature:
		params, results := e.sigLists(t)
		return jen.Func().Params(params...).Params(results...)
	case *types.Struct:
		var fields []jen.Code
		for i := 0; i < t.NumFields(); i++ {
			f := t.Field(i)
			var fc *jen.Statement
			if f.Embedded() {
				fc = jen.Add(e.typ(f.Type()))
			} else {
				fc = jen.Id(f.Name()).Add(e.typ(f.Type()))
			}
			if tag := t.Tag(i); tag != "" {
				fc = fc.Op(strconv.Quote(tag))
			}
			fields = append(fields, fc)
		}
		return jen.Struct(fields...)
	case *types.Interface:
		var items []jen.Code
		for i := 0; i < t.NumEmbeddeds(); i++ {
			items = append(items, e.typ(t.EmbeddedType(i)))
		}
		for i := 0; i < t.NumExplicitMethods(); i++ {
			m := t.ExplicitMethod(i)
			params, results := e.sigLists(m.Type().(*types.Signature))
			items = append(items, jen.Id(m.Name()).Params(params...).Params(results...))
		}
		return jen.Interface(items...)
	case *types.Union:
		var terms []jen.Code
		for i := 0; i < t.Len(); i++ {
			term := t.Term(i)
			c := e.typ(term.Type())
			if term.Tilde() {
				c = jen.Op("~").Add(c)
			}
			terms = append(terms, c)
		}
		return jen.Union(terms...)
	}
	return jen.Id(types.TypeString(t, types.RelativeTo(e.pkg.Types)))
}

// sigLists renders the parameter and result types of a signature.
func (e *emitter) sigLists(t *types.Signature) (params, results []jen.Code) {
	for i := 0; i < t.Params().Len(); i++ {
		pt := t.Params().At(i).Type()
		if t.Variadic() && i == t.Params().Len()-1 {
			params = append(params, jen.Op("...").Add(e.typ(pt.(*types.Slice).Elem())))
			continue
		}
		params = append(params, e.typ(pt))
	}
	for i := 0; i < t.Results().Len(); i++ {
		results = append(results, e.typ(t.Results().At(i).Type()))
	}
	return params, results
}

func (e *emitter) typeArgs(list *types.TypeList) []jen.Code {
	var out []jen.Code
	for i := 0; i < list.Len(); i++ {
		out = append(out, e.typ(list.At(i)))
	}
	return out
}

func (e *emitter) qual(obj *types.TypeName) *jen.Statement {
	if obj.Pkg().Path() == e.pkg.Path {
		return jen.Id(obj.Name())
	}
	return e.q(obj.Pkg().Path(), obj.Pkg().Name(), obj.Name())
}

// expr renders a directive expression; qualified references become
// jennifer Quals so the generated file imports what the expression uses.
func (e *emitter) expr(x Expr) jen.Code {
	out := jen.Empty()
	for _, part := range x.Parts {
		if part.Path != "" {
			out.Add(e.q(part.Path, part.Pkg, part.Name))
		} else {
			out.Op(part.Text)
		}
	}
	return out
}

// argSpan returns the recorded arguments xs are, [from, to), when they are
// consecutive recorded parameters in order; {0, 0} and ok for none.
func argSpan(xs []Expr, argIndex map[string]int) (span [2]int, ok bool) {
	if len(xs) == 0 {
		return span, true
	}
	first, ok := argIndex[xs[0].Src]
	for k, x := range xs {
		if i, isArg := argIndex[x.Src]; !isArg || i != first+k {
			return span, false
		}
	}
	return [2]int{first, first + len(xs)}, ok
}

// argKind is the runtime's constructor of the Arg of a parameter of type
// t (BeginArgs): Str for a string, Num for a number or a boolean, which
// are recorded unboxed, and Val for any other type (a variadic parameter
// is a slice).
func argKind(t types.Type, variadic bool) string {
	if variadic {
		return "Val"
	}
	if _, ok := t.(*types.TypeParam); ok {
		return "Val"
	}
	b, ok := t.Underlying().(*types.Basic)
	if !ok {
		return "Val"
	}
	switch info := b.Info(); {
	case info&types.IsString != 0:
		return "Str"
	case info&(types.IsInteger|types.IsFloat|types.IsBoolean) != 0:
		return "Num"
	}
	return "Val"
}

// needArgs reports whether a wrapper refers to its recorded arguments by
// name: an identity or entity expression is one of them.
func needArgs(op *Op, argIndex map[string]int) bool {
	xs := append([]Expr(nil), op.Identity...)
	if op.Entity != nil {
		xs = append(xs, *op.Entity)
	}
	for _, x := range xs {
		if _, ok := argIndex[x.Src]; ok {
			return true
		}
	}
	return false
}

// canPanic reports whether evaluating one of xs might panic: anything but
// a name or a literal (a field of a nil pointer, an index out of range, a
// call).
func canPanic(xs []Expr) bool {
	for _, x := range xs {
		expr, err := parser.ParseExpr(x.Src)
		if err != nil {
			return true
		}
		switch ast.Unparen(expr).(type) {
		case *ast.Ident, *ast.BasicLit:
		default:
			return true
		}
	}
	return false
}

// srcList is the directive text of xs, comma-separated.
func srcList(xs []Expr) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(x.Src)
	}
	return b.String()
}
