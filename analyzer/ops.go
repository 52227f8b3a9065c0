package analyzer

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/constant"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/agentidem/agentidem-go/internal/directive"
)

// OpFact is the fact exported for every function annotated with
// //agentidem:read or //agentidem:write. It lets a package that calls the op,
// directly or through its generated wrapper, know what the op declares.
type OpFact struct {
	Name       string   // logical op name (name=, else "fn" or "Type.Method")
	Kind       string   // "read" or "write"
	Func       string   // declared name, "refund" or "Svc.Refund"
	After      []string // ops that must happen before this one
	Entity     []string // entity expressions (entity=, else identity= for writes)
	Identity   []string // identity expressions (writes)
	Params     []string // parameter names, receiver excluded
	Recv       string   // receiver name; empty for functions
	Variadic   bool     // the last parameter is variadic
	Wrapper    string   // name of the generated wrapper
	Idempotent bool     // declared idempotent, or the body makes the write idempotent at its sink
	// DistinctRows: every statement the body runs is an INSERT that
	// skips a row already there on a conflict of columns holding every
	// identity parameter (ON CONFLICT (post, tag) DO NOTHING for
	// identity="post, tag"). Two calls with different identities then
	// add different rows, and in either order end alike.
	DistinctRows bool
}

// AFact marks OpFact as an analysis fact.
func (*OpFact) AFact() {}

func (f *OpFact) String() string {
	s := fmt.Sprintf("%s op %s wrapper=%s", f.Kind, f.Name, f.Wrapper)
	if len(f.After) > 0 {
		s += " after=" + strings.Join(f.After, ",")
	}
	if len(f.Entity) > 0 {
		s += " entity=" + strings.Join(f.Entity, ",")
	}
	if f.Idempotent {
		s += " idempotent"
	}
	return s
}

// WrapperFact is the fact exported for the generated wrapper of an
// annotated function: calling the wrapper runs the op under the trace.
type WrapperFact struct {
	Op OpFact
}

// AFact marks WrapperFact as an analysis fact.
func (*WrapperFact) AFact() {}

func (f *WrapperFact) String() string { return "wrapper of " + f.Op.Name }

// FanOutFact is the fact exported for a function that runs some of its
// function-typed parameters in goroutines, such as a helper
// parallel(calls ...func() error). Its arguments there form a concurrent
// batch at every call.
type FanOutFact struct {
	Params []int // indices of the parameters it runs concurrently
}

// AFact marks FanOutFact as an analysis fact.
func (*FanOutFact) AFact() {}

// SinkFact summarises the writes of a function that a write's body may
// delegate to (a store's InsertUserIfAbsent, a dedup package's Do): the
// INSERT statements it runs, itself or through helpers of its package,
// how many of them resolve conflicts (ON CONFLICT ...), and whether it
// uses package idem. A write whose body calls it is as idempotent as
// those are.
type SinkFact struct {
	Inserts, Safe int
	Idem          bool
}

// AFact marks SinkFact as an analysis fact.
func (*SinkFact) AFact() {}

func (f *SinkFact) String() string {
	return fmt.Sprintf("sink: %d inserts, %d resolve conflicts, idem %v", f.Inserts, f.Safe, f.Idem)
}

// WaitsFact marks a function that waits on what a caller passes it: a
// Wait, Lock or RLock on a parameter (syncutil.WaitAll(&g), whose body is
// g.Wait()), a receive from or range over a parameter's channel, a select
// on one. Its callers in other packages end a concurrent batch there, as
// they do at a helper of their own package that waits. A function that
// waits only on what it holds itself (a logger's mutex) orders nothing
// between its callers' calls, and has no fact.
type WaitsFact struct{}

// AFact marks WaitsFact as an analysis fact.
func (*WaitsFact) AFact() {}

func (*WaitsFact) String() string { return "waits on a parameter" }

func (f *FanOutFact) String() string { return fmt.Sprintf("fans out params %v", f.Params) }

// Directives reads //agentidem: directives, exports an OpFact for each
// annotated function and a WrapperFact for each wrapper it finds, and
// reports malformed directives. The other analyzers require it.
var Directives = &analysis.Analyzer{
	Name:       "directives",
	Doc:        "report malformed //agentidem: directives and export op facts",
	URL:        docURL + "#hdr-directives",
	Run:        runDirectives,
	FactTypes:  []analysis.Fact{new(OpFact), new(WrapperFact), new(FanOutFact), new(WaitsFact), new(SinkFact)},
	ResultType: reflect.TypeFor[*ops](),
}

const docURL = "https://pkg.go.dev/github.com/agentidem/agentidem-go/analyzer"

// ops is the result of Directives: every op known to the package being
// analyzed, and where diagnostics are silenced.
type ops struct {
	pass      *analysis.Pass
	ops       map[*types.Func]*OpFact // annotated functions called or declared here
	wrappers  map[*types.Func]*OpFact // their wrappers
	fanouts   map[*types.Func][]int   // functions that run parameters concurrently
	waitsExt  map[*types.Func]bool    // functions of other packages that wait on a parameter (WaitsFact)
	generated map[*token.File]bool
	// silenced lines per file, and silenced ranges (functions with a doc ignore).
	lines  map[*token.File]map[int]bool
	ranges [][2]token.Pos

	// Calls that do not name their op (indirect.go), computed on demand.
	binds       *bindings
	ifaces      map[*types.Func]*types.Func // interface method -> the implementation all agree on, or nil
	methodNames map[string]bool             // names of methods that are ops or wrappers
	modTypes    []*types.Named              // the module's types visible here
	// frozen is set at the end of Directives: the analyzers that use the
	// result run concurrently and only read it.
	frozen bool
}

func runDirectives(pass *analysis.Pass) (any, error) {
	r := &ops{
		pass:      pass,
		ops:       map[*types.Func]*OpFact{},
		wrappers:  map[*types.Func]*OpFact{},
		fanouts:   map[*types.Func][]int{},
		waitsExt:  map[*types.Func]bool{},
		generated: map[*token.File]bool{},
		lines:     map[*token.File]map[int]bool{},
	}
	var local []*types.Func
	// The package's functions, for a write that reaches idem through a
	// helper of its own.
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
	sinks := newSinkScan(pass, funcs)
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.Pos())
		gen := ast.IsGenerated(f)
		r.generated[tf] = gen
		docs := map[*ast.CommentGroup]bool{}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Doc == nil {
				continue
			}
			docs[fd.Doc] = true
			d, ignores, errs := directive.FromDoc(pass.Fset, fd.Doc)
			if !gen {
				for _, err := range errs {
					reportDirectiveError(pass, fd.Doc, err)
				}
			}
			if len(ignores) > 0 {
				r.ranges = append(r.ranges, [2]token.Pos{fd.Pos(), fd.End()})
			}
			if d == nil || d.Kind == directive.Ignore {
				continue
			}
			fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			fact := newOpFact(fd, fn, d)
			if fact.Kind == "write" {
				// A declared idempotent write (an upsert, a create that
				// skips what exists) is as safe to repeat as one behind
				// an idempotency key.
				fact.Idempotent = d.Idempotent || sinks.idempotent(fd.Body)
				fact.DistinctRows = insertsDistinctRows(pass, fd.Body, fact.Identity)
			}
			pass.ExportObjectFact(fn, fact)
			r.ops[fn] = fact
			local = append(local, fn)
		}
		// Line directives: ignores anywhere, and errors in stray directives.
		for _, cg := range f.Comments {
			if docs[cg] {
				continue
			}
			for _, c := range cg.List {
				if !directive.IsDirective(c.Text) {
					continue
				}
				pos := pass.Fset.Position(c.Slash)
				d, errs := directive.Parse(c.Text, pos)
				if len(errs) > 0 {
					if !gen {
						for _, err := range errs {
							pass.Report(analysis.Diagnostic{Pos: c.Slash, End: c.End(), Message: directiveMessage(err)})
						}
					}
					continue
				}
				if d.Kind == directive.Ignore {
					m := r.lines[tf]
					if m == nil {
						m = map[int]bool{}
						r.lines[tf] = m
					}
					m[pos.Line] = true
					m[pos.Line+1] = true
				}
			}
		}
	}
	// Wrappers of the ops declared here live in this package.
	for _, fn := range local {
		fact := r.ops[fn]
		if w := wrapperObject(pass.Pkg, fn, fact.Wrapper); w != nil {
			pass.ExportObjectFact(w, &WrapperFact{Op: *fact})
			r.wrappers[w] = fact
		}
	}
	// Helpers that fan their function parameters out to goroutines.
	for _, f := range pass.Files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, ok := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			if params := fanOutParams(r, pass.TypesInfo, fn, fd.Body); len(params) > 0 {
				pass.ExportObjectFact(fn, &FanOutFact{Params: params})
				r.fanouts[fn] = params
			}
			if r.ops[fn] == nil && waitsOnParam(pass.TypesInfo, fn, fd.Body) {
				pass.ExportObjectFact(fn, &WaitsFact{})
			}
			if sum := sinks.sinkOf(fd.Body, 0); sum.Inserts > 0 || sum.Idem {
				pass.ExportObjectFact(fn, &sum)
			}
		}
	}
	// The variables bound once, for calls that do not name their op: the
	// analyzers that read them run concurrently.
	r.bindings()
	// Ops of other packages, as far as this package calls them.
	for _, f := range pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			var fn *types.Func
			switch n := n.(type) {
			case *ast.CallExpr:
				fn, _ = typeutil.Callee(pass.TypesInfo, n).(*types.Func)
			case *ast.SelectorExpr: // method values: g.Go(s.Create)
				fn, _ = pass.TypesInfo.Uses[n.Sel].(*types.Func)
			case *ast.Ident:
				fn, _ = pass.TypesInfo.Uses[n].(*types.Func)
			}
			if fn == nil {
				return true
			}
			fn = fn.Origin()
			if types.IsInterface(recvType(fn)) {
				// d.FindTicketTraced(ctx, id) on an interface whose
				// implementations run one op: that op's fact.
				r.ifaceImpl(fn)
				return true
			}
			if fn.Pkg() == nil || fn.Pkg() == pass.Pkg || inGOROOT(pass.Fset, fn.Pos()) {
				return true
			}
			if _, ok := r.ops[fn]; ok {
				return true
			}
			if _, ok := r.wrappers[fn]; ok {
				return true
			}
			var of OpFact
			if pass.ImportObjectFact(fn, &of) {
				r.ops[fn] = &of
				return true
			}
			var wf WrapperFact
			if pass.ImportObjectFact(fn, &wf) {
				r.wrappers[fn] = &wf.Op
				return true
			}
			var ff FanOutFact
			if _, seen := r.fanouts[fn]; !seen && pass.ImportObjectFact(fn, &ff) {
				r.fanouts[fn] = ff.Params
			}
			var wt WaitsFact
			if _, seen := r.waitsExt[fn]; !seen {
				r.waitsExt[fn] = pass.ImportObjectFact(fn, &wt)
			}
			return true
		})
	}
	r.frozen = true
	return r, nil
}

func reportDirectiveError(pass *analysis.Pass, doc *ast.CommentGroup, err error) {
	pos := doc.Pos()
	if de, ok := err.(*directive.Error); ok {
		for _, c := range doc.List {
			if pass.Fset.Position(c.Slash).Line == de.Pos.Line {
				pos = c.Slash + token.Pos(de.Pos.Column-pass.Fset.Position(c.Slash).Column)
				break
			}
		}
	}
	pass.Report(analysis.Diagnostic{Pos: pos, Message: directiveMessage(err)})
}

// directiveMessage drops the "file:line:col: " prefix: the diagnostic
// carries the position.
func directiveMessage(err error) string {
	if de, ok := err.(*directive.Error); ok {
		return "bad directive: " + de.Msg
	}
	return "bad directive: " + err.Error()
}

func newOpFact(fd *ast.FuncDecl, fn *types.Func, d *directive.Directive) *OpFact {
	f := &OpFact{Kind: d.Kind.String(), Func: fd.Name.Name}
	sig := fn.Type().(*types.Signature)
	if recv := sig.Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			f.Func = n.Obj().Name() + "." + fd.Name.Name
		}
		f.Recv = recv.Name()
	}
	for i := 0; i < sig.Params().Len(); i++ {
		f.Params = append(f.Params, sig.Params().At(i).Name())
	}
	f.Variadic = sig.Variadic()
	f.Name = f.Func
	if d.Name != nil {
		f.Name = d.Name.Text
	}
	for _, v := range d.After {
		f.After = append(f.After, v.Text)
	}
	for _, v := range d.Identity {
		f.Identity = append(f.Identity, v.Text)
	}
	if d.Entity != nil {
		f.Entity = []string{d.Entity.Text}
	} else if d.Kind == directive.Write {
		f.Entity = f.Identity
	}
	f.Wrapper = fd.Name.Name + "Traced"
	if d.Wrapper != nil {
		f.Wrapper = d.Wrapper.Text
	}
	return f
}

// wrapperObject finds the generated wrapper of fn, if the package has it.
func wrapperObject(pkg *types.Package, fn *types.Func, name string) *types.Func {
	sig := fn.Type().(*types.Signature)
	if recv := sig.Recv(); recv != nil {
		obj, _, _ := types.LookupFieldOrMethod(recv.Type(), true, pkg, name)
		w, _ := obj.(*types.Func)
		if w != nil {
			// On a generic receiver (*Box[T]) the lookup gives the
			// method of the instance; calls are matched by origin.
			w = w.Origin()
		}
		return w
	}
	w, _ := pkg.Scope().Lookup(name).(*types.Func)
	return w
}

// fanOutParams returns the indices of fn's function-typed parameters that
// its body calls inside a goroutine it starts (go, Group.Go,
// WaitGroup.Go): directly, by index, or through a range over them.
func fanOutParams(r *ops, info *types.Info, fn *types.Func, body *ast.BlockStmt) []int {
	sig := fn.Type().(*types.Signature)
	index := map[types.Object]int{}
	for i := 0; i < sig.Params().Len(); i++ {
		p := sig.Params().At(i)
		t := p.Type()
		if s, ok := t.Underlying().(*types.Slice); ok {
			t = s.Elem()
		}
		if _, ok := t.Underlying().(*types.Signature); ok {
			index[p] = i
		}
	}
	if len(index) == 0 {
		return nil
	}
	// Range variables over a parameter stand for it.
	ast.Inspect(body, func(n ast.Node) bool {
		if rs, ok := n.(*ast.RangeStmt); ok {
			if id, ok := ast.Unparen(rs.X).(*ast.Ident); ok {
				if i, ok := index[info.Uses[id]]; ok {
					if v, ok := rs.Value.(*ast.Ident); ok && info.Defs[v] != nil {
						index[info.Defs[v]] = i
					}
				}
			}
		}
		return true
	})
	b := &batcher{r: r, info: info}
	if !launchesTogether(b, body) {
		return nil
	}
	seen := map[int]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		s, ok := n.(ast.Stmt)
		if !ok {
			return true
		}
		arg := b.launchArg(s)
		if arg == nil {
			return true
		}
		ast.Inspect(arg, func(m ast.Node) bool {
			var target ast.Expr
			switch m := m.(type) {
			case *ast.CallExpr:
				target = ast.Unparen(m.Fun)
			case *ast.Ident: // g.Go(call)
				if m == arg {
					target = m
				}
			}
			if ix, ok := target.(*ast.IndexExpr); ok {
				target = ix.X
			}
			if id, ok := target.(*ast.Ident); ok {
				if i, ok := index[info.Uses[id]]; ok {
					seen[i] = true
				}
			}
			return true
		})
		return true
	})
	var out []int
	for i := 0; i < sig.Params().Len(); i++ {
		if seen[i] {
			out = append(out, i)
		}
	}
	return out
}

// launchesTogether reports whether the goroutines a function body starts
// can run at the same time: no wait (Wait, Lock, a receive, a select)
// between two starts, and none in a loop that starts goroutines, outside
// the started code itself.
func launchesTogether(b *batcher, body *ast.BlockStmt) bool {
	var launches, waits []token.Pos
	var loops []ast.Node
	var skip []ast.Node // started code
	serial := false
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		for _, s := range skip {
			if s == n {
				return false
			}
		}
		switch n := n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			loops = append(loops, n)
		case ast.Stmt:
			if arg := b.launchArg(n); arg != nil {
				launches = append(launches, n.Pos())
				skip = append(skip, arg)
				if b.serialGroup(n) {
					serial = true
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				waits = append(waits, n.Pos())
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
				switch sel.Sel.Name {
				case "Wait", "Lock", "RLock":
					waits = append(waits, n.Pos())
				}
			}
		}
		if _, ok := n.(*ast.SelectStmt); ok {
			waits = append(waits, n.Pos())
		}
		return true
	})
	if serial {
		return false
	}
	in := func(p token.Pos, n ast.Node) bool { return n.Pos() <= p && p < n.End() }
	for _, w := range waits {
		before, after := false, false
		for _, l := range launches {
			before = before || l < w
			after = after || l > w
		}
		if before && after {
			return false
		}
		for _, loop := range loops {
			if !in(w, loop) {
				continue
			}
			for _, l := range launches {
				if in(l, loop) {
					return false
				}
			}
		}
	}
	return len(launches) > 0
}

// opCall resolves a call (or a function value) to the op it runs, and says
// whether it goes through the generated wrapper. It follows a variable or a
// map entry bound once to an op, and an interface method whose
// implementations in the module run one op (see resolve).
func (r *ops) opCall(e ast.Expr) (op *OpFact, wrapper bool, fn *types.Func) {
	op, wrapper, fn, _ = r.resolve(e)
	return op, wrapper, fn
}

// inGOROOT reports whether pos is in a file of the standard library.
func inGOROOT(fset *token.FileSet, pos token.Pos) bool {
	f := fset.File(pos)
	if f == nil {
		return false
	}
	name := filepath.ToSlash(f.Name())
	return strings.HasPrefix(name, goroot) || strings.HasPrefix(name, "$GOROOT/")
}

var goroot = filepath.ToSlash(filepath.Join(build.Default.GOROOT, "src")) + "/"

// quiet reports whether a package cannot have findings: it declares and
// calls no op, and (for the SQL checks, sql=true) imports no SQL package.
func (r *ops) quiet(sql bool) bool {
	if len(r.ops)+len(r.wrappers) > 0 {
		return false
	}
	if !sql {
		return true
	}
	for _, imp := range r.pass.Pkg.Imports() {
		if sqlPackage(imp.Path()) || strings.HasPrefix(imp.Path(), "github.com/jackc/pgx") {
			return false
		}
	}
	return true
}

// report reports d unless it is in a generated file or silenced by
// //agentidem:ignore.
func (r *ops) report(pass *analysis.Pass, d analysis.Diagnostic) {
	tf := pass.Fset.File(d.Pos)
	if tf == nil || r.generated[tf] {
		return
	}
	if r.lines[tf][tf.Line(d.Pos)] {
		return
	}
	for _, rg := range r.ranges {
		if rg[0] <= d.Pos && d.Pos < rg[1] {
			return
		}
	}
	pass.Report(d)
}

// constString returns the value of e, a constant of a string type.
func constString(pass *analysis.Pass, e ast.Expr) (string, bool) {
	tv, ok := pass.TypesInfo.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// sinkScan answers sinkOf, keyedLits and reachesIdem for the functions
// of one package, each body at each depth once, and walks a body once
// for what reachesIdem reads of it at any depth (idemUse). The three
// call one another at every call they meet, two calls deep, and every
// function of every package is summarised (its SinkFact), the standard
// library's too, as go vet runs the tool on each dependency for its
// facts. Walked afresh each time, a package's helpers were walked again
// for every caller at every depth: since keyedLits (rtM L4) the
// analyzer's tests took 2.3x the CPU they took before (28 s user, then
// 64 s), and Directives 23.3 s a run on the bundled examples and their
// imports, 6.0 s before keyedLits, 3.3 s so (BenchmarkDirectives in
// ops_bench_test.go, medians of 3 alternated on a loaded 2-CPU machine).
// The answers depend only on the body and the depth, so remembering them
// changes no fact and no diagnostic.
type sinkScan struct {
	pass  *analysis.Pass
	funcs map[*types.Func]*ast.FuncDecl // the package's functions with a body
	sums  map[sinkAt]SinkFact
	reach map[reachAt]bool
	uses  map[ast.Node]*idemUse
	keyed map[*ast.BlockStmt]map[*ast.FuncLit]bool
}

type sinkAt struct {
	body  *ast.BlockStmt
	depth int
}

type reachAt struct {
	n     ast.Node
	depth int
}

func newSinkScan(pass *analysis.Pass, funcs map[*types.Func]*ast.FuncDecl) *sinkScan {
	return &sinkScan{
		pass:  pass,
		funcs: funcs,
		sums:  map[sinkAt]SinkFact{},
		reach: map[reachAt]bool{},
		uses:  map[ast.Node]*idemUse{},
		keyed: map[*ast.BlockStmt]map[*ast.FuncLit]bool{},
	}
}

// idempotent reports whether a write's body makes it idempotent at the
// sink: every INSERT it runs, itself or through the helpers sinkOf
// follows, resolves conflicts (ON CONFLICT ...) or runs in a function
// handed to package idem (idem.Do's fn), or to a function that reaches it
// (s.dedup.Once(ctx, key, fn) whose body is idem.Do); with no INSERT in
// sight, it uses package idem (the work under the key is an API call). A
// plain INSERT beside a use of idem (the notification's idem.Do after
// it, an idem.Key computed for a log) makes the write a create again: a
// red team's ticket inserts were taken for idempotent so.
func (sc *sinkScan) idempotent(body *ast.BlockStmt) bool {
	if body == nil {
		return false
	}
	sum := sc.sinkOf(body, 0)
	return sum.Inserts == sum.Safe && (sum.Inserts > 0 || sum.Idem)
}

// idemPath is package idem's import path. Only the package itself
// deduplicates: its backends (idem/postgres, idem/sqlite) store keys for
// it, and code under its tree (their test agents) is code like any other.
const idemPath = "github.com/agentidem/agentidem-go/idem"

// sinkOf summarises the writes of body: the INSERT statements it holds,
// in string literals or constants, those of the helpers of this package it
// calls (depth calls deep, at most two), and those of the functions of
// other packages it calls (their SinkFact), and whether it reaches package
// idem. A red team's add_user returned its store's InsertUserIfAbsent
// (INSERT ... ON CONFLICT DO NOTHING, in another package), and add_team a
// helper of its package holding such a constant: both were taken for
// plain creates, and the check before them for a race. An INSERT in a
// function literal handed to package idem, or to a function that reaches
// it (keyed), counts as one that resolves conflicts: the key makes it.
func (sc *sinkScan) sinkOf(body *ast.BlockStmt, depth int) SinkFact {
	at := sinkAt{body, depth}
	if sum, ok := sc.sums[at]; ok {
		return sum
	}
	pass := sc.pass
	var sum SinkFact
	if depth == 0 && sc.reachesIdem(body, 0) {
		sum.Idem = true
	}
	keyed := sc.keyedLits(body)
	for lit := range keyed {
		sub := sc.sinkOf(lit.Body, depth)
		sum.Inserts += sub.Inserts
		sum.Safe += sub.Inserts
	}
	query := func(q string) {
		if q = normSQL(q); isInsert(q) {
			sum.Inserts++
			if insertResolvesConflict(q) {
				sum.Safe++
			}
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return !keyed[n] // summed above
		case *ast.Ident:
			// A query held in a constant (const insertTicket = "INSERT
			// ... ON CONFLICT ..."), of this package or another.
			if _, ok := pass.TypesInfo.Uses[n].(*types.Const); ok {
				if s, ok := constString(pass, n); ok {
					query(s)
				}
			}
		case *ast.SelectorExpr:
			if _, ok := pass.TypesInfo.Uses[n.Sel].(*types.Const); ok {
				if s, ok := constString(pass, n); ok {
					query(s)
				}
				return false // its Sel is the constant read above
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			query(stringValue(n))
		case *ast.CallExpr:
			fn, ok := typeutil.Callee(pass.TypesInfo, n).(*types.Func)
			if !ok {
				return true
			}
			fn = fn.Origin()
			var callee SinkFact
			switch fd := sc.funcs[fn]; {
			case fd != nil:
				if depth < 2 && fd.Body != body {
					callee = sc.sinkOf(fd.Body, depth+1)
				}
			case fn.Pkg() != nil && fn.Pkg() != pass.Pkg:
				pass.ImportObjectFact(fn, &callee)
			}
			sum.Inserts += callee.Inserts
			sum.Safe += callee.Safe
			sum.Idem = sum.Idem || callee.Idem
		}
		return true
	})
	sc.sums[at] = sum
	return sum
}

// keyedLits returns the function literals of body that run under an
// idempotency key: handed to a function of package idem (idem.Do's fn),
// to a function of this package that reaches it, or to one of another
// package whose SinkFact says it does, directly or through a local
// variable that holds the literal (work := func(...) {...}; idem.Do(...,
// work)).
func (sc *sinkScan) keyedLits(body *ast.BlockStmt) map[*ast.FuncLit]bool {
	if keyed, ok := sc.keyed[body]; ok {
		return keyed
	}
	pass := sc.pass
	var keyed map[*ast.FuncLit]bool
	var closures map[types.Object]*ast.FuncLit
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, ok := typeutil.Callee(pass.TypesInfo, call).(*types.Func)
		if !ok || !sc.keys(fn.Origin()) {
			return true
		}
		for _, a := range call.Args {
			switch a := ast.Unparen(a).(type) {
			case *ast.FuncLit:
				if keyed == nil {
					keyed = map[*ast.FuncLit]bool{}
				}
				keyed[a] = true
			case *ast.Ident:
				if closures == nil {
					closures = localClosures(pass.TypesInfo, body)
				}
				if lit := closures[pass.TypesInfo.Uses[a]]; lit != nil {
					if keyed == nil {
						keyed = map[*ast.FuncLit]bool{}
					}
					keyed[lit] = true
				}
			}
		}
		return true
	})
	sc.keyed[body] = keyed
	return keyed
}

// keys reports whether fn runs what it is given under an idempotency key:
// it is of package idem, or reaches it.
func (sc *sinkScan) keys(fn *types.Func) bool {
	if fn.Pkg() == nil {
		return false
	}
	if fn.Pkg().Path() == idemPath {
		return true
	}
	if fd := sc.funcs[fn]; fd != nil {
		return sc.reachesIdem(fd.Body, 1)
	}
	var sum SinkFact
	return fn.Pkg() != sc.pass.Pkg && sc.pass.ImportObjectFact(fn, &sum) && sum.Idem
}

// localClosures maps the variables of body assigned a function literal
// exactly once (work := func(...) {...}) to it.
func localClosures(info *types.Info, body *ast.BlockStmt) map[types.Object]*ast.FuncLit {
	out := map[types.Object]*ast.FuncLit{}
	count := map[types.Object]int{}
	note := func(id *ast.Ident, rhs ast.Expr) {
		obj := info.ObjectOf(id)
		if obj == nil {
			return
		}
		count[obj]++
		if lit, ok := rhs.(*ast.FuncLit); ok {
			out[obj] = lit
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && len(n.Rhs) == len(n.Lhs) {
					note(id, n.Rhs[i])
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				var rhs ast.Expr
				if i < len(n.Values) {
					rhs = n.Values[i]
				}
				note(id, rhs)
			}
		}
		return true
	})
	for obj, n := range count {
		if n != 1 {
			delete(out, obj)
		}
	}
	return out
}

// reachesIdem reports whether n uses package idem (its own import path,
// not a path that begins so: idem/postgres, a module idempotency), or
// calls a function of this package that does, depth calls deep (at most
// two).
func (sc *sinkScan) reachesIdem(n ast.Node, depth int) bool {
	at := reachAt{n, depth}
	if found, ok := sc.reach[at]; ok {
		return found
	}
	u := sc.idemUseOf(n)
	found := u.direct
	for _, body := range u.calls {
		if found || depth >= 2 {
			break
		}
		found = sc.reachesIdem(body, depth+1)
	}
	sc.reach[at] = found
	return found
}

// idemUse is what reachesIdem reads of a node at any depth: whether it
// names something of package idem itself, and the bodies of the
// functions of this package it calls (n's own left out), one walk for
// the three depths.
type idemUse struct {
	direct bool
	calls  []*ast.BlockStmt
}

func (sc *sinkScan) idemUseOf(n ast.Node) *idemUse {
	if u, ok := sc.uses[n]; ok {
		return u
	}
	info := sc.pass.TypesInfo
	u := &idemUse{}
	ast.Inspect(n, func(m ast.Node) bool {
		switch m := m.(type) {
		case *ast.Ident:
			if obj := info.Uses[m]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == idemPath {
				u.direct = true
			}
		case *ast.CallExpr:
			if fn, ok := typeutil.Callee(info, m).(*types.Func); ok {
				if fd := sc.funcs[fn.Origin()]; fd != nil && fd.Body != n {
					u.calls = append(u.calls, fd.Body)
				}
			}
		}
		return !u.direct
	})
	sc.uses[n] = u
	return u
}

// waitsOnParam reports whether body, fn's, waits on one of fn's
// parameters (WaitsFact): a Wait, Lock or RLock whose receiver is a
// parameter or reached from one (g.Wait(), p.wg.Wait()), a receive from or
// range over such a channel, a select with such a receive.
func waitsOnParam(info *types.Info, fn *types.Func, body *ast.BlockStmt) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Params().Len() == 0 {
		return false
	}
	params := map[types.Object]bool{}
	for v := range sig.Params().Variables() {
		params[v] = true
	}
	fromParam := func(e ast.Expr) bool {
		for {
			switch x := ast.Unparen(e).(type) {
			case *ast.Ident:
				return params[info.Uses[x]]
			case *ast.SelectorExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.UnaryExpr:
				if x.Op != token.AND {
					return false
				}
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			default:
				return false
			}
		}
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if _, lit := n.(*ast.FuncLit); found || lit {
			return false // a literal runs when called, not here
		}
		if on, ok := waitedOn(info, n); ok && fromParam(on) {
			found = true
		}
		return !found
	})
	return found
}
