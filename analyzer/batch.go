package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// A batch is what runs at the same time: the goroutines a block starts
// (go statements, errgroup.Group.Go, sync.WaitGroup.Go) before the first
// statement that waits (a Wait call, a channel receive, a select), and what
// the starting goroutine does meanwhile.
type batch struct {
	members []*member
}

// A member is one statement of a batch.
type member struct {
	stmt   ast.Stmt
	uses   []*opUse
	direct bool // the statement itself starts one goroutine
	loop   bool // the statement is a loop: its ops repeat
}

// An opUse is a call of an op inside a batch member.
type opUse struct {
	expr     ast.Expr // the call, or the function value handed to Go
	call     *ast.CallExpr
	op       *OpFact
	launched bool // runs in a goroutine of the batch, not in the starter
	inLoop   bool
	local    [2]token.Pos // innermost function literal around the call
	// bind maps the parameters of a local closure the call is in to the
	// arguments of the closure's call (process(a) for process :=
	// func(id string) {...}).
	bind map[types.Object]binding
}

// A binding is the argument a closure's parameter holds, and the innermost
// function literal around that argument.
type binding struct {
	arg   ast.Expr
	local [2]token.Pos
}

// batcher finds batches in the functions of a package.
type batcher struct {
	r        *ops
	info     *types.Info
	closures map[*types.Var]*ast.FuncLit
	// funcs are the package's functions by their object, for waits
	// through a helper; waiting caches what waits found for them.
	funcs   map[*types.Func]*ast.FuncDecl
	waiting map[*types.Func]bool
	// limited holds the errgroup.Group variables the package limits to
	// one goroutine with a SetLimit(1) that runs whenever its function
	// does (not under an if, a switch, a select or a loop); read once per
	// package (limits), where each Go call walked every file again.
	limited map[types.Object]bool
	// bind is the binding of the parameters of the local closure that
	// collect is following, nil elsewhere.
	bind map[types.Object]binding
}

// serialGroup reports whether a Go call is on an errgroup.Group that the
// package limits to one goroutine (g.SetLimit(1)): each Go then waits for
// the previous goroutine to finish.
func (b *batcher) serialGroup(s ast.Node) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || !b.isGroupMethod(call, "Go") {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := ast.Unparen(sel.X).(*ast.Ident)
	if !ok {
		return false
	}
	if b.limited == nil {
		b.limited = b.limits()
	}
	return b.limited[b.info.Uses[id]]
}

// limits finds the errgroup.Group variables limited to one goroutine by a
// SetLimit(1) that runs whenever its function does. One under a condition
// (if serial { g.SetLimit(1) }) leaves the group's Go calls concurrent
// when it does not run.
func (b *batcher) limits() map[types.Object]bool {
	limited := map[types.Object]bool{}
	var stack []ast.Node
	for _, f := range filesOf(b) {
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, n)
			c, ok := n.(*ast.CallExpr)
			if !ok || !b.isGroupMethod(c, "SetLimit") || len(c.Args) != 1 {
				return true
			}
			tv := b.info.Types[c.Args[0]]
			if tv.Value == nil || tv.Value.ExactString() != "1" {
				return true
			}
			sx, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := ast.Unparen(sx.X).(*ast.Ident)
			if !ok || !unconditional(stack) {
				return true
			}
			limited[b.info.Uses[x]] = true
			return true
		})
	}
	return limited
}

// unconditional reports whether the innermost node of stack, a path from
// a file down, runs whenever the function around it does: no if, switch,
// select or loop between it and that function.
func unconditional(stack []ast.Node) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].(type) {
		case *ast.FuncDecl, *ast.FuncLit:
			return true
		case *ast.IfStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.ForStmt, *ast.RangeStmt:
			return false
		}
	}
	return true
}

func filesOf(b *batcher) []*ast.File {
	if b.r == nil {
		return nil
	}
	return b.r.pass.Files
}

func newBatcher(r *ops) *batcher {
	b := &batcher{r: r, info: r.pass.TypesInfo, closures: map[*types.Var]*ast.FuncLit{},
		funcs: map[*types.Func]*ast.FuncDecl{}, waiting: map[*types.Func]bool{}}
	for _, f := range r.pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := b.info.Defs[fd.Name].(*types.Func); ok {
					b.funcs[fn] = fd
				}
			}
		}
	}
	// Local closures assigned exactly once: f := func() {...}.
	count := map[*types.Var]int{}
	note := func(id *ast.Ident, rhs ast.Expr) {
		v, ok := b.info.ObjectOf(id).(*types.Var)
		if !ok || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
			return
		}
		count[v]++
		if lit, ok := rhs.(*ast.FuncLit); ok {
			b.closures[v] = lit
		}
	}
	for _, f := range r.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					id, ok := l.(*ast.Ident)
					if !ok {
						continue
					}
					var rhs ast.Expr
					if len(n.Rhs) == len(n.Lhs) {
						rhs = n.Rhs[i]
					}
					note(id, rhs)
				}
			case *ast.ValueSpec:
				for i, id := range n.Names {
					var rhs ast.Expr
					if i < len(n.Values) {
						rhs = n.Values[i]
					}
					note(id, rhs)
				}
			case *ast.UnaryExpr:
				if n.Op == token.AND { // &f: may be reassigned elsewhere
					if id, ok := n.X.(*ast.Ident); ok {
						if v, ok := b.info.Uses[id].(*types.Var); ok {
							count[v] += 2
						}
					}
				}
			}
			return true
		})
	}
	for v, n := range count {
		if n != 1 {
			delete(b.closures, v)
		}
	}
	return b
}

// batches returns the batches of every block in the package's files that
// are not generated.
func (b *batcher) batches() []*batch {
	var out []*batch
	for _, f := range b.r.pass.Files {
		if ast.IsGenerated(f) {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var list []ast.Stmt
			switch n := n.(type) {
			case *ast.BlockStmt:
				list = n.List
			case *ast.CaseClause:
				list = n.Body
			case *ast.CommClause:
				list = n.Body
			default:
				return true
			}
			out = append(out, b.blockBatches(list)...)
			return true
		})
		// Calls of fan-out helpers: parallel(create, attach).
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if bt := b.fanOutBatch(call); bt != nil {
					out = append(out, bt)
				}
			}
			return true
		})
	}
	return out
}

func (b *batcher) blockBatches(list []ast.Stmt) []*batch {
	var out []*batch
	var cur *batch
	flush := func() {
		if cur != nil && len(cur.members) > 1 {
			out = append(out, cur)
		}
		cur = nil
	}
	for _, s := range list {
		direct := b.launchArg(s) != nil
		if !direct && b.waits(s) {
			flush()
			continue
		}
		if direct && b.serialGroup(s) {
			flush() // Go on a group limited to 1 waits for the previous one
		}
		launches := direct || b.containsLaunch(s)
		if cur == nil && !launches {
			continue
		}
		if cur == nil {
			cur = &batch{}
		}
		m := &member{stmt: s, direct: direct}
		switch s.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			m.loop = true
		}
		b.collect(m, s, false, false, [2]token.Pos{}, 0)
		cur.members = append(cur.members, m)
	}
	flush()
	return out
}

// fanOutBatch returns the batch of a call of a fan-out helper: one member
// per function argument it runs concurrently.
func (b *batcher) fanOutBatch(call *ast.CallExpr) *batch {
	fn, ok := typeutil.Callee(b.info, call).(*types.Func)
	if !ok {
		return nil
	}
	params := b.r.fanouts[fn.Origin()]
	if len(params) == 0 || call.Ellipsis.IsValid() {
		return nil
	}
	variadic := fn.Type().(*types.Signature).Variadic()
	last := fn.Type().(*types.Signature).Params().Len() - 1
	bt := &batch{}
	for i, arg := range call.Args {
		pi := i
		if variadic && pi > last {
			pi = last
		}
		if !containsInt(params, pi) {
			continue
		}
		stmt := &ast.ExprStmt{X: arg}
		m := &member{stmt: stmt, direct: true}
		if lit, ok := ast.Unparen(arg).(*ast.FuncLit); ok {
			if !b.waits(lit.Body) {
				b.collect(m, lit.Body, true, false, [2]token.Pos{lit.Pos(), lit.End()}, 0)
			}
		} else {
			b.collect(m, arg, true, false, [2]token.Pos{}, 0)
		}
		bt.members = append(bt.members, m)
	}
	if len(bt.members) < 2 {
		return nil
	}
	return bt
}

// launchArg returns what a statement starts in a new goroutine: the call
// of a go statement, or the function given to Group.Go / WaitGroup.Go.
func (b *batcher) launchArg(s ast.Node) ast.Node {
	switch s := s.(type) {
	case *ast.GoStmt:
		return s.Call
	case *ast.ExprStmt:
		call, ok := s.X.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return nil
		}
		if b.isGroupMethod(call, "Go") {
			return call.Args[0]
		}
	}
	return nil
}

// isGroupMethod reports whether call is errgroup.Group.name or
// sync.WaitGroup.name.
func (b *batcher) isGroupMethod(call *ast.CallExpr, name string) bool {
	fn, ok := typeutil.Callee(b.info, call).(*types.Func)
	if !ok || fn.Name() != name {
		return false
	}
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return false
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	switch n.Obj().Pkg().Path() + "." + n.Obj().Name() {
	case "golang.org/x/sync/errgroup.Group", "sync.WaitGroup":
		return true
	}
	return false
}

func (b *batcher) containsLaunch(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if found {
			return false
		}
		if _, ok := m.(*ast.FuncLit); ok && m != n {
			return false
		}
		if s, ok := m.(ast.Stmt); ok && b.launchArg(s) != nil {
			found = true
		}
		return true
	})
	return found
}

// waits reports whether n may wait for other goroutines: a Wait, Lock or
// RLock call, a sync.Once's Do (it returns once the function it runs, in
// whichever goroutine, has), a channel receive, a select, a range over a
// channel, or a call of a function of the package that waits so
// (waitAll(&g), whose body is g.Wait()), of another package that waits on
// what it is passed (WaitsFact), or a local closure that waits (wait :=
// func() { wg.Wait() }). Ordering may be enforced there, so
// the batch ends (or the goroutine is left out): when in doubt, say
// nothing.
func (b *batcher) waits(n ast.Node) bool {
	return b.waitsIn(n, 0)
}

// waitsIn is waits, depth calls of the package's functions deep.
func (b *batcher) waitsIn(n ast.Node, depth int) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if found {
			return false
		}
		if _, ok := waitedOn(b.info, m); ok {
			found = true
			return false
		}
		switch m := m.(type) {
		case *ast.SelectStmt:
			found = true
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(m.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Do" {
				found = isSyncOnce(b.info.TypeOf(sel.X))
			}
			if found || depth >= 2 {
				return !found
			}
			if id, ok := ast.Unparen(m.Fun).(*ast.Ident); ok {
				// A local closure that waits: wait := func() { wg.Wait() }.
				if v, ok := b.info.Uses[id].(*types.Var); ok {
					if lit := b.closures[v]; lit != nil && b.waitsIn(lit.Body, depth+1) {
						found = true
						return false
					}
				}
			}
			if fn, _ := typeutil.Callee(b.info, m).(*types.Func); fn != nil && b.r.ops[fn.Origin()] == nil && b.r.wrappers[fn.Origin()] == nil {
				// Not a tool, nor its wrapper: a tool's own lock
				// (a store's mutex) orders nothing between calls.
				if b.r.waitsExt[fn.Origin()] {
					// A helper of another package that waits on what it
					// is passed: syncutil.WaitAll(&g).
					found = true
					return false
				}
				if fd := b.funcs[fn.Origin()]; fd != nil {
					w, ok := b.waiting[fn.Origin()]
					if !ok {
						b.waiting[fn.Origin()] = false // a recursion waits for nothing more
						w = b.waitsIn(fd.Body, depth+1)
						b.waiting[fn.Origin()] = w
					}
					found = w
				}
			}
		}
		return true
	})
	return found
}

// waitedOn returns what n waits on, and whether it waits: the receiver of
// a Wait, Lock or RLock call (g in g.Wait()), the channel of a receive or
// of a range over a channel. A select waits on its cases' receives.
func waitedOn(info *types.Info, n ast.Node) (ast.Expr, bool) {
	switch n := n.(type) {
	case *ast.UnaryExpr:
		if n.Op == token.ARROW {
			return n.X, true
		}
	case *ast.RangeStmt:
		if t := info.TypeOf(n.X); t != nil {
			if _, ok := t.Underlying().(*types.Chan); ok {
				return n.X, true
			}
		}
	case *ast.CallExpr:
		if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
			switch sel.Sel.Name {
			case "Wait", "Lock", "RLock":
				return sel.X, true
			}
		}
	}
	return nil, false
}

// isSyncOnce reports whether t is sync.Once or a pointer to one.
func isSyncOnce(t types.Type) bool {
	if t == nil {
		return false
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "sync" && n.Obj().Name() == "Once"
}

// collect records the op calls under n into m. launched says n runs in a
// goroutine of the batch; depth counts local closures followed (one level).
func (b *batcher) collect(m *member, n ast.Node, launched, inLoop bool, local [2]token.Pos, depth int) {
	if e, ok := n.(ast.Expr); ok && launched {
		// A function value handed to Go: g.Go(s.Create) or g.Go(work).
		switch e := ast.Unparen(e).(type) {
		case *ast.Ident, *ast.SelectorExpr:
			if op, _, _ := b.r.opCall(e); op != nil {
				m.uses = append(m.uses, &opUse{expr: e, op: op, launched: true, inLoop: inLoop, local: local, bind: b.bind})
				return
			}
			if id, ok := e.(*ast.Ident); ok && depth == 0 {
				if v, ok := b.info.Uses[id].(*types.Var); ok && b.closures[v] != nil {
					lit := b.closures[v]
					if b.waits(lit.Body) {
						return
					}
					b.collect(m, lit.Body, true, inLoop, [2]token.Pos{lit.Pos(), lit.End()}, 1)
				}
			}
			return
		}
	}
	var visit func(n ast.Node, launched, inLoop bool, local [2]token.Pos) bool
	visit = func(n ast.Node, launched, inLoop bool, local [2]token.Pos) bool {
		switch n := n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			ast.Inspect(n, func(c ast.Node) bool {
				if c == n {
					return true
				}
				return visit(c, launched, true, local)
			})
			return false
		case ast.Stmt:
			if arg := b.launchArg(n); arg != nil && !launched {
				if lit, ok := arg.(*ast.FuncLit); ok {
					if !b.waits(lit.Body) {
						b.collect(m, lit.Body, true, inLoop, [2]token.Pos{lit.Pos(), lit.End()}, depth)
					}
					return false
				}
				if call, ok := arg.(*ast.CallExpr); ok {
					if lit, ok := call.Fun.(*ast.FuncLit); ok {
						if !b.waits(lit.Body) {
							b.collect(m, lit.Body, true, inLoop, [2]token.Pos{lit.Pos(), lit.End()}, depth)
						}
						return false
					}
				}
				b.collect(m, arg, true, inLoop, local, depth)
				return false
			}
		case *ast.FuncLit:
			// In a goroutine of the batch, a literal runs there (or
			// later); in the starter, only a literal that is called runs
			// now (see CallExpr): one stored for later is left out.
			if launched {
				ast.Inspect(n.Body, func(c ast.Node) bool {
					return visit(c, launched, inLoop, [2]token.Pos{n.Pos(), n.End()})
				})
			}
			return false
		case *ast.CallExpr:
			if lit, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok && !launched {
				ast.Inspect(lit.Body, func(c ast.Node) bool {
					return visit(c, launched, inLoop, [2]token.Pos{lit.Pos(), lit.End()})
				})
			}
			if op, _, _ := b.r.opCall(n); op != nil {
				m.uses = append(m.uses, &opUse{expr: n, call: n, op: op, launched: launched, inLoop: inLoop, local: local, bind: b.bind})
			} else if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && depth == 0 {
				if v, ok := b.info.Uses[id].(*types.Var); ok && b.closures[v] != nil {
					lit := b.closures[v]
					if !(launched && b.waits(lit.Body)) {
						b.bind = b.bindParams(lit, n, local)
						b.collect(m, lit.Body, launched, inLoop, [2]token.Pos{lit.Pos(), lit.End()}, 1)
						b.bind = nil
					}
				}
			}
		}
		return true
	}
	ast.Inspect(n, func(c ast.Node) bool { return visit(c, launched, inLoop, local) })
}

// bindParams binds the parameters of the closure lit to the arguments of
// its call, whose innermost function literal is local: in process(a), the
// id of process := func(id string) {...} is a. A parameter the closure
// assigns or takes the address of is left unbound (its key is then
// unknown), and so are variadic ones.
func (b *batcher) bindParams(lit *ast.FuncLit, call *ast.CallExpr, local [2]token.Pos) map[types.Object]binding {
	if call.Ellipsis.IsValid() {
		return nil
	}
	variadic := false
	if sig, ok := b.info.TypeOf(lit).(*types.Signature); ok {
		variadic = sig.Variadic()
	}
	var bind map[types.Object]binding
	i := 0
	for fi, field := range lit.Type.Params.List {
		names := field.Names
		if len(names) == 0 {
			i++
			continue
		}
		for _, id := range names {
			obj := b.info.Defs[id]
			last := fi == len(lit.Type.Params.List)-1
			if obj != nil && i < len(call.Args) && !(variadic && last) &&
				!assignedBetween(b.info, nil, []types.Object{obj}, token.NoPos, token.NoPos, lit.Body) {
				if bind == nil {
					bind = map[types.Object]binding{}
				}
				bind[obj] = binding{arg: call.Args[i], local: local}
			}
			i++
		}
	}
	return bind
}

// concurrent calls fn for every pair of op uses that may run at the same
// time: u in an earlier member and started in a goroutine, v later.
func (bt *batch) concurrent(fn func(mu, mv *member, u, v *opUse)) {
	for i, mu := range bt.members {
		for _, mv := range bt.members[i+1:] {
			for _, u := range mu.uses {
				if !u.launched {
					continue
				}
				for _, v := range mv.uses {
					fn(mu, mv, u, v)
				}
			}
		}
	}
}
