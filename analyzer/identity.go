package analyzer

import (
	"fmt"
	"go/ast"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"github.com/agentidem/agentidem-go/internal/directive"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// Identity reports writes whose identity is built from non-deterministic
// values at the call site, and direct calls of annotated tool functions in
// agent code, which escape the trace. See the package documentation.
var Identity = &analysis.Analyzer{
	Name:     "identity",
	Doc:      "report unstable identities and calls that escape the trace",
	URL:      docURL + "#hdr-identity",
	Requires: []*analysis.Analyzer{Directives},
	Run:      runIdentity,
}

var idemKeyParam = regexp.MustCompile(`(?i)^(idempotency_?key|idem_?key|dedup(e|lication)?_?key)$`)

func runIdentity(pass *analysis.Pass) (any, error) {
	r := pass.ResultOf[Directives].(*ops)
	if r.quiet(false) && len(pass.Files) > 0 && inGOROOT(pass.Fset, pass.Files[0].Pos()) {
		return nil, nil
	}
	funcs := map[*types.Func]*ast.FuncDecl{}
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func); ok {
					funcs[fn] = fd
				}
			}
		}
	}
	for _, f := range pass.Files {
		if ast.IsGenerated(f) {
			continue
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			checkIdentities(pass, r, fd, funcs)
			checkEscapes(pass, r, fd, funcs)
		}
	}
	return nil, nil
}

// checkIdentities reports identity and idempotency-key arguments that are
// fresh on every run.
func checkIdentities(pass *analysis.Pass, r *ops, fd *ast.FuncDecl, funcs map[*types.Func]*ast.FuncDecl) {
	nd := &nondet{info: pass.TypesInfo, body: fd.Body, funcs: funcs}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if op, _, _ := r.opCall(call); op != nil && op.Kind == "write" {
			reported := map[string]bool{}
			for _, expr := range op.Identity {
				for _, p := range paramsIn(expr, op.Params) {
					i := indexOf(op.Params, p)
					if reported[p] || i < 0 || i >= len(call.Args) || (op.Variadic && i == len(op.Params)-1) {
						continue
					}
					if src := nd.source(call.Args[i], 0); src != "" {
						reported[p] = true
						// Made before the call, in a variable: a retry loop
						// around the call may reuse it, a redelivery, which
						// runs the function again, may not (red team fF: the
						// message said "at the call site" of a key made
						// before the loop).
						where, who := "at the call site", "every retry or redelivery"
						if nd.source(call.Args[i], maxDepth) == "" {
							where, who = "in this function before the call", "every run of the function, as a redelivery,"
						}
						r.report(pass, analysis.Diagnostic{
							Pos: call.Args[i].Pos(),
							End: call.Args[i].End(),
							Message: fmt.Sprintf("identity of %s (%s) is built from %s %s: %s gets a fresh identity, so a repeat looks like a new effect; "+
								"derive it from the request (an order ID, the tool-call ID)", op.Name, expr, src, where, who),
						})
					}
				}
			}
			checkOpKeys(pass, r, nd, op, call, reported)
			return true
		}
		fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
		if !ok {
			return true
		}
		sig := fn.Type().(*types.Signature)
		for i := 0; i < sig.Params().Len() && i < len(call.Args); i++ {
			if sig.Variadic() && i == sig.Params().Len()-1 {
				break
			}
			p := sig.Params().At(i)
			if !idemKeyParam.MatchString(p.Name()) {
				continue
			}
			// Only a fresh value made right at the call site: a key made
			// once before a retry loop is the usual, correct use.
			if src := nd.source(call.Args[i], maxDepth); src != "" {
				r.report(pass, analysis.Diagnostic{
					Pos: call.Args[i].Pos(),
					End: call.Args[i].End(),
					Message: fmt.Sprintf("idempotency key %s of %s is built from %s at the call site: every retry or redelivery gets a fresh key, so the sink cannot recognise a repeat; "+
						"derive it from the request (an order ID, the tool-call ID)", p.Name(), fn.Name(), src),
				})
			}
		}
		return true
	})
}

// checkOpKeys reports a key parameter of a write op outside its identity
// (an idempotency key the op hands its sink: key, requestKey, idem_key,
// idempotencyKey) whose argument is made fresh at the call site: a retry
// of the call, or a redelivery, sends another key, and the sink cannot
// tell the repeat (red team rtT #9: a retry loop around
// RefundWithKeyTraced(ctx, charge, amount, uuid.NewString()) passed vet,
// which looked at identity= parameters only). As for plain functions, a
// key made before the call is not judged: made once before a retry loop,
// it is the usual, correct use.
func checkOpKeys(pass *analysis.Pass, r *ops, nd *nondet, op *OpFact, call *ast.CallExpr, reported map[string]bool) {
	if op.Kind != "write" {
		return
	}
	for i, p := range op.Params {
		if reported[p] || !keyParam(p) || i >= len(call.Args) || (op.Variadic && i == len(op.Params)-1) {
			continue
		}
		if slices.ContainsFunc(op.Identity, func(expr string) bool { return slices.Contains(paramsIn(expr, op.Params), p) }) {
			continue
		}
		if src := nd.source(call.Args[i], maxDepth); src != "" {
			r.report(pass, analysis.Diagnostic{
				Pos: call.Args[i].Pos(),
				End: call.Args[i].End(),
				Message: fmt.Sprintf("the %s argument of %s, a key outside its identity, is built from %s at the call site: every retry or redelivery sends a fresh key, so the sink cannot recognise the repeat; "+
					"derive it from the request (an order ID, the tool-call ID)", p, op.Name, src),
			})
		}
	}
}

// keyParam reports whether a parameter's name says it is a key: key,
// one ending in Key or _key (requestKey, idem_key), or an idempotency
// key's (idemKeyParam).
func keyParam(name string) bool {
	return name == "key" || strings.HasSuffix(name, "Key") || strings.HasSuffix(strings.ToLower(name), "_key") || idemKeyParam.MatchString(name)
}

// nowChain reports whether e is time.Now(), or that moment through UTC,
// Local or In: a moment to the nanosecond still.
func nowChain(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	if nondetFunc(info, call) == "time.Now" {
		return true
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	switch sel.Sel.Name {
	case "UTC", "Local", "In":
		return nowChain(info, sel.X)
	}
	return false
}

// maxDepth is how many local variables nondet.source follows.
const maxDepth = 3

// nondet finds values that differ on every run.
type nondet struct {
	info  *types.Info
	body  *ast.BlockStmt
	funcs map[*types.Func]*ast.FuncDecl // functions of the package
}

// source returns the non-deterministic function e is built from (such as
// "uuid.New"), following local variables a few steps, or "".
func (nd *nondet) source(e ast.Expr, depth int) string {
	if depth > maxDepth {
		return ""
	}
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if s := nondetFunc(nd.info, n); s != "" {
				found = s
				return false
			}
			if s := nd.helper(n, depth); s != "" {
				found = s
				return false
			}
			// time.Now().Format("2006-01-02"), Truncate, ...: a coarse
			// key chosen on purpose.
			// Through UTC, Local or In, still the moment: time.Now().UTC()
			// is flagged, time.Now().UTC().Format(time.DateOnly) is not.
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && nowChain(nd.info, sel.X) {
				switch sel.Sel.Name {
				case "Unix", "UnixNano", "UnixMilli", "UnixMicro", "String", "UTC", "Local", "In":
					found = "time.Now"
				}
				return false
			}
		case *ast.Ident:
			v, ok := nd.info.Uses[n].(*types.Var)
			if !ok || depth >= maxDepth || v.Pos() < nd.body.Pos() || v.Pos() >= nd.body.End() {
				return true
			}
			// A local variable: look at what is assigned to it, and
			// whether random bytes are read into it.
			ast.Inspect(nd.body, func(m ast.Node) bool {
				if found != "" {
					return false
				}
				if call, ok := m.(*ast.CallExpr); ok {
					if s := randomFill(nd.info, call, v); s != "" {
						found = s
					}
					return true
				}
				as, ok := m.(*ast.AssignStmt)
				if !ok || len(as.Lhs) != len(as.Rhs) {
					return true
				}
				for i, l := range as.Lhs {
					if id, ok := l.(*ast.Ident); ok && nd.info.ObjectOf(id) == v {
						if s := nd.source(as.Rhs[i], depth+1); s != "" {
							found = s
						}
					}
				}
				return true
			})
		}
		return true
	})
	return found
}

// helper follows a call of a parameterless function of this package and
// returns "name (source)" when what it returns is non-deterministic:
// func randomKey() string { b := make([]byte, 8); rand.Read(b); return hex.EncodeToString(b) }.
func (nd *nondet) helper(call *ast.CallExpr, depth int) string {
	fn, ok := typeutil.Callee(nd.info, call).(*types.Func)
	if !ok || len(call.Args) > 0 {
		return ""
	}
	fd := nd.funcs[fn]
	if fd == nil || fd.Body == nil || fn.Type().(*types.Signature).Params().Len() > 0 {
		return ""
	}
	inner := &nondet{info: nd.info, body: fd.Body, funcs: nd.funcs}
	found := ""
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			for _, res := range n.Results {
				if s := inner.source(res, depth+1); s != "" {
					found = fn.Name() + " (" + s + ")"
					break
				}
			}
		}
		return true
	})
	return found
}

// randomFill reports a call that reads random bytes into v:
// rand.Read(v), io.ReadFull(rand.Reader, v).
func randomFill(info *types.Info, call *ast.CallExpr, v *types.Var) string {
	uses := false
	random := ""
	for _, a := range call.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				obj := info.Uses[id]
				if obj == v {
					uses = true
				}
				if obj != nil && obj.Pkg() != nil && obj.Name() == "Reader" && strings.HasSuffix(obj.Pkg().Path(), "rand") {
					random = "rand.Reader"
				}
			}
			return true
		})
	}
	if !uses {
		return ""
	}
	if fn, ok := typeutil.Callee(info, call).(*types.Func); ok && fn.Name() == "Read" && fn.Pkg() != nil &&
		(fn.Pkg().Path() == "crypto/rand" || strings.HasPrefix(fn.Pkg().Path(), "math/rand")) {
		return "rand.Read"
	}
	return random
}

// nondetFunc names a call that returns a fresh value every time (see
// directive.Nondeterministic, the list the generator uses too).
func nondetFunc(info *types.Info, call *ast.CallExpr) string {
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Type().(*types.Signature).Recv() != nil {
		return ""
	}
	if fn.Pkg().Path() == "crypto/rand" && fn.Name() == "Read" {
		return "" // fills a buffer; the buffer is followed by randomBytes
	}
	return directive.Nondeterministic(fn.Pkg().Path(), fn.Name())
}

// checkEscapes reports, in agent code, direct calls of annotated
// functions. Agent code is a function (declaration or literal, each on its
// own) that calls a generated wrapper, or a literal started as a goroutine
// (go, Group.Go, WaitGroup.Go) by agent code. A literal that only reads
// state, or a benchmark that times the direct call beside the wrapper in
// separate literals, is not agent code.
func checkEscapes(pass *analysis.Pass, r *ops, fd *ast.FuncDecl, funcs map[*types.Func]*ast.FuncDecl) {
	self, _ := pass.TypesInfo.Defs[fd.Name].(*types.Func)
	b := &batcher{r: r, info: pass.TypesInfo}
	var unit func(body *ast.BlockStmt, launched, parentAgent bool)
	unit = func(body *ast.BlockStmt, launched, parentAgent bool) {
		agent := false
		var direct []*ast.CallExpr
		var handed []handedRaw
		var lits []*ast.FuncLit
		launchedLits := map[*ast.FuncLit]bool{}
		ast.Inspect(body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				lits = append(lits, n)
				return false
			case ast.Stmt:
				arg := b.launchArg(n)
				if call, ok := arg.(*ast.CallExpr); ok {
					arg = call.Fun
				}
				if lit, ok := arg.(*ast.FuncLit); ok {
					launchedLits[lit] = true
				}
			case *ast.CallExpr:
				if op, wrapper, _, h := r.resolve(n); op != nil {
					if wrapper {
						agent = true
					} else if h != viaIface {
						// Through an interface the value may be a traced
						// implementation the module does not show.
						direct = append(direct, n)
					}
				}
				handed = append(handed, rawHanded(r, funcs, n)...)
			}
			return true
		})
		agent = agent || (launched && parentAgent)
		if agent {
			for _, call := range direct {
				reportEscape(pass, r, self, call)
			}
			for _, hr := range handed {
				reportHanded(pass, r, self, hr)
			}
		}
		for _, lit := range lits {
			unit(lit.Body, launchedLits[lit], agent)
		}
	}
	unit(fd.Body, false, false)
}

func reportEscape(pass *analysis.Pass, r *ops, self *types.Func, call *ast.CallExpr) {
	op, _, fn, h := r.resolve(call)
	if fn == self {
		return
	}
	d := analysis.Diagnostic{
		Pos: call.Pos(),
		End: call.End(),
		Message: fmt.Sprintf("direct call of %s in agent code escapes the trace: the harness can neither see nor fault it; call %s",
			op.Func, op.Wrapper),
	}
	var name *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		name = f
	case *ast.SelectorExpr:
		name = f.Sel
	}
	if h == direct && name != nil && wrapperObject(fn.Pkg(), fn, op.Wrapper) != nil && (fn.Pkg() == pass.Pkg || ast.IsExported(op.Wrapper)) {
		d.SuggestedFixes = []analysis.SuggestedFix{{
			Message:   "call " + op.Wrapper,
			TextEdits: []analysis.TextEdit{{Pos: name.Pos(), End: name.End(), NewText: []byte(op.Wrapper)}},
		}}
	}
	r.report(pass, d)
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// handedRaw is an annotated function handed as a value to a helper that
// calls it (retry(ctx, tools.Refund, id)): the call the helper makes
// escapes the trace as a direct one does.
type handedRaw struct {
	arg    ast.Expr // the function value
	helper string   // the helper's name
	fn     *types.Func
	op     *OpFact
}

// rawHanded returns the arguments of call that are annotated functions
// (named, or through a variable bound once to one) handed, unwrapped, to a
// helper of the package that calls that parameter itself: a function
// declared here, or a local closure bound once. A helper that only stores
// the value or returns a closure that calls it (it may trace the call), a
// helper of another package, and one that uses this toolkit's packages
// (it may trace the call itself) are not judged.
func rawHanded(r *ops, funcs map[*types.Func]*ast.FuncDecl, call *ast.CallExpr) []handedRaw {
	if call.Ellipsis.IsValid() {
		return nil
	}
	info := r.pass.TypesInfo
	var params *ast.FieldList
	var body *ast.BlockStmt
	name := ""
	if fn, _ := calleeFunc(info, call); fn != nil {
		if fd := funcs[fn.Origin()]; fd != nil {
			params, body, name = fd.Type.Params, fd.Body, fd.Name.Name
		}
	} else if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if v, ok := info.Uses[id].(*types.Var); ok {
			if lit, ok := ast.Unparen(r.boundValue(v)).(*ast.FuncLit); ok {
				params, body, name = lit.Type.Params, lit.Body, id.Name
			}
		}
	}
	if body == nil || usesToolkit(info, body) {
		return nil
	}
	var objs []types.Object
	for _, field := range params.List {
		if _, variadic := field.Type.(*ast.Ellipsis); variadic {
			break
		}
		if len(field.Names) == 0 {
			objs = append(objs, nil)
		}
		for _, n := range field.Names {
			objs = append(objs, info.Defs[n])
		}
	}
	var out []handedRaw
	for i, arg := range call.Args {
		if i >= len(objs) || objs[i] == nil {
			break
		}
		switch ast.Unparen(arg).(type) {
		case *ast.Ident, *ast.SelectorExpr:
		default:
			continue
		}
		op, wrapper, fn, h := r.resolve(arg)
		if op == nil || wrapper || h == viaIface || !callsParam(info, body, objs[i]) {
			continue
		}
		out = append(out, handedRaw{arg: arg, helper: name, fn: fn, op: op})
	}
	return out
}

// callsParam reports whether body calls the parameter p itself, outside
// the function literals it makes.
func callsParam(info *types.Info, body *ast.BlockStmt, p types.Object) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && info.Uses[id] == p {
				found = true
			}
		}
		return !found
	})
	return found
}

// usesToolkit reports whether n refers to a package of this toolkit (its
// runtime, say): such a helper may trace what it calls.
func usesToolkit(info *types.Info, n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if obj := info.Uses[id]; obj != nil && obj.Pkg() != nil && strings.HasPrefix(obj.Pkg().Path(), "github.com/agentidem/agentidem-go/") {
				found = true
			}
		}
		return !found
	})
	return found
}

func reportHanded(pass *analysis.Pass, r *ops, self *types.Func, hr handedRaw) {
	if hr.fn == self {
		return
	}
	d := analysis.Diagnostic{
		Pos: hr.arg.Pos(),
		End: hr.arg.End(),
		Message: fmt.Sprintf("%s handed to %s, which calls it, in agent code escapes the trace: the harness can neither see nor fault the call; hand it %s",
			hr.op.Func, hr.helper, hr.op.Wrapper),
	}
	var name *ast.Ident
	switch f := ast.Unparen(hr.arg).(type) {
	case *ast.Ident:
		if _, ok := pass.TypesInfo.Uses[f].(*types.Func); ok {
			name = f
		}
	case *ast.SelectorExpr:
		name = f.Sel
	}
	if name != nil && pass.TypesInfo.Uses[name] == hr.fn && wrapperObject(hr.fn.Pkg(), hr.fn, hr.op.Wrapper) != nil &&
		(hr.fn.Pkg() == pass.Pkg || ast.IsExported(hr.op.Wrapper)) {
		d.SuggestedFixes = []analysis.SuggestedFix{{
			Message:   "hand it " + hr.op.Wrapper,
			TextEdits: []analysis.TextEdit{{Pos: name.Pos(), End: name.End(), NewText: []byte(hr.op.Wrapper)}},
		}}
	}
	r.report(pass, d)
}
