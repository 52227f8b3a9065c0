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
	// site is the call of the local closure the call is in, when it is
	// in one: where the goroutine around that call makes it.
	site token.Pos
	// bind maps the parameters of a local closure the call is in to the
	// arguments of the closure's call (process(a) for process :=
	// func(id string) {...}).
	bind map[types.Object]binding
	// launch is the statement of the starter that starts the goroutine
	// the call runs in (a go statement, a Go call), when it is known.
	launch token.Pos
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
	waiting map[waitKey]bool
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
		funcs: map[*types.Func]*ast.FuncDecl{}, waiting: map[waitKey]bool{}}
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
		// The body of a switch, a type switch or a select is a block of
		// clauses of which one runs: they are no batch (a red team's
		// false positive, fF). Each clause's own body is one.
		clauses := map[*ast.BlockStmt]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			var list []ast.Stmt
			switch n := n.(type) {
			case *ast.SwitchStmt:
				clauses[n.Body] = true
				return true
			case *ast.TypeSwitchStmt:
				clauses[n.Body] = true
				return true
			case *ast.SelectStmt:
				clauses[n.Body] = true
				return true
			case *ast.BlockStmt:
				if clauses[n] {
					return true
				}
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
			// A deferred call runs as the function returns, after this
			// wait on the path that reaches it here: it is no member
			// (red team fF: defer attachInvoice(ctx, id) beside the
			// Go of its create, then return g.Wait()).
			if cur != nil {
				kept := cur.members[:0]
				for _, m := range cur.members {
					if _, deferred := m.stmt.(*ast.DeferStmt); !deferred {
						kept = append(kept, m)
					}
				}
				cur.members = kept
			}
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
			b.collectGoroutine(m, lit, false, 0)
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
// func() { wg.Wait() }). Ordering may be enforced there, so the batch
// ends: when in doubt, say nothing. This is the starter's view; a
// goroutine of the batch is judged by waitsBefore.
func (b *batcher) waits(n ast.Node) bool {
	return b.waitsIn(n, 0, false, token.NoPos)
}

// waitsBefore reports whether a goroutine's body waits, before pos (the
// op call, or the call of the closure holding it), on something another
// goroutine of the batch may signal: a Wait, a sync.Once's Do, a channel
// receive, a range over a channel, a helper that waits so. Only such a
// wait can hold the call back until the prerequisite is done. What orders
// nothing is not a wait here (a red team's misses: each goroutine was
// left out when it waited anywhere): a Lock (a mutex around each call
// serializes them in either order, one taken after the call to collect
// its error holds nothing back), a deferred or later wait (a semaphore's
// release, defer func() { <-sem }()), a receive of ctx.Done() (no
// goroutine signals it to let another start), a select with a default
// case (it does not block). A wait inside a loop that also holds the call
// precedes the call of the next round, so it counts.
func (b *batcher) waitsBefore(body ast.Node, pos token.Pos) bool {
	return b.waitsIn(body, 0, true, pos)
}

// waitKey caches what waitsIn found for a function of the package, in the
// starter's view or a goroutine's.
type waitKey struct {
	fn        *types.Func
	goroutine bool
}

// waitsIn is waits (goroutine unset) or waitsBefore (goroutine set, pos
// valid; an invalid pos is anywhere), depth calls of the package's
// functions deep.
func (b *batcher) waitsIn(n ast.Node, depth int, goroutine bool, pos token.Pos) bool {
	var loops []ast.Node
	if pos.IsValid() {
		ast.Inspect(n, func(m ast.Node) bool {
			switch m.(type) {
			case *ast.ForStmt, *ast.RangeStmt:
				if m.Pos() <= pos && pos < m.End() {
					loops = append(loops, m)
				}
			}
			return m == nil || m.Pos() <= pos
		})
	}
	before := func(m ast.Node) bool {
		if !pos.IsValid() || m.End() <= pos {
			return true
		}
		for _, l := range loops {
			if l.Pos() <= m.Pos() && m.End() <= l.End() {
				return true
			}
		}
		return false
	}
	found := false
	noBlock := map[*ast.CommClause]bool{} // clauses of a select with a default
	var visit func(m ast.Node) bool
	visit = func(m ast.Node) bool {
		if found || m == nil {
			return false
		}
		if goroutine {
			switch m := m.(type) {
			case *ast.DeferStmt, *ast.GoStmt:
				return false // runs after the call, or elsewhere
			case *ast.SelectStmt:
				for _, c := range m.Body.List {
					if c.(*ast.CommClause).Comm == nil {
						for _, c := range m.Body.List {
							noBlock[c.(*ast.CommClause)] = true
						}
					}
				}
			case *ast.CommClause:
				if noBlock[m] {
					for _, s := range m.Body {
						ast.Inspect(s, visit)
					}
					return false
				}
			case *ast.UnaryExpr:
				if m.Op == token.ARROW && b.ctxDone(m.X) {
					return true
				}
			case *ast.CallExpr:
				if sel, ok := ast.Unparen(m.Fun).(*ast.SelectorExpr); ok {
					switch sel.Sel.Name {
					case "Lock", "RLock", "TryLock", "TryRLock":
						return true
					}
				}
			}
		}
		if _, ok := waitedOn(b.info, m); ok && before(m) {
			found = true
			return false
		}
		switch m := m.(type) {
		case *ast.SelectStmt:
			// A goroutine's select waits on its receives, found one by one.
			found = !goroutine && before(m)
		case *ast.CallExpr:
			if !before(m) {
				return true
			}
			if sel, ok := ast.Unparen(m.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Do" {
				found = isSyncOnce(b.info.TypeOf(sel.X))
			}
			if found || depth >= 2 {
				return !found
			}
			if id, ok := ast.Unparen(m.Fun).(*ast.Ident); ok {
				// A local closure that waits: wait := func() { wg.Wait() }.
				if v, ok := b.info.Uses[id].(*types.Var); ok {
					if lit := b.closures[v]; lit != nil && b.waitsIn(lit.Body, depth+1, goroutine, token.NoPos) {
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
					k := waitKey{fn.Origin(), goroutine}
					w, ok := b.waiting[k]
					if !ok {
						b.waiting[k] = false // a recursion waits for nothing more
						w = b.waitsIn(fd.Body, depth+1, goroutine, token.NoPos)
						b.waiting[k] = w
					}
					found = w
				}
			}
		}
		return !found
	}
	ast.Inspect(n, visit)
	return found
}

// ctxDone reports whether e is ctx.Done() of a context.Context: a
// cancellation, which no goroutine of the batch sends to let another go.
func (b *batcher) ctxDone(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Done" {
		return false
	}
	t := b.info.TypeOf(sel.X)
	return t != nil && isContext(t)
}

// collectGoroutine records the op calls of a goroutine's function literal
// into m, but those it waits before (waitsBefore): their order may be
// enforced.
func (b *batcher) collectGoroutine(m *member, lit *ast.FuncLit, inLoop bool, depth int) {
	start := len(m.uses)
	b.collect(m, lit.Body, true, inLoop, [2]token.Pos{lit.Pos(), lit.End()}, depth)
	b.dropWaited(m, start, lit.Body)
}

// dropWaited drops from m.uses[start:] the calls body waits before.
func (b *batcher) dropWaited(m *member, start int, body ast.Node) {
	kept := m.uses[:start]
	for _, u := range m.uses[start:] {
		at := u.expr.Pos()
		if u.site.IsValid() {
			at = u.site
		}
		if !b.waitsBefore(body, at) {
			kept = append(kept, u)
		}
	}
	m.uses = kept
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
					b.collectGoroutine(m, b.closures[v], inLoop, 1)
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
				start := len(m.uses)
				defer func() {
					for _, u := range m.uses[start:] {
						u.launch = n.Pos()
					}
				}()
				if lit, ok := arg.(*ast.FuncLit); ok {
					b.collectGoroutine(m, lit, inLoop, depth)
					return false
				}
				if call, ok := arg.(*ast.CallExpr); ok {
					if lit, ok := call.Fun.(*ast.FuncLit); ok {
						b.collectGoroutine(m, lit, inLoop, depth)
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
					start := len(m.uses)
					b.bind = b.bindParams(lit, n, local)
					b.collect(m, lit.Body, launched, inLoop, [2]token.Pos{lit.Pos(), lit.End()}, 1)
					b.bind = nil
					if launched {
						// In a goroutine, what the closure waits before a
						// call holds it back; the goroutine's own waits are
						// judged at the closure's call.
						b.dropWaited(m, start, lit.Body)
						for _, u := range m.uses[start:] {
							u.site = n.Pos()
						}
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
// time: u in an earlier member and started in a goroutine, v later. A
// goroutine started in a branch of mu that then leaves the block (if fresh
// { wg.Go(create); return }, or continue) runs beside no later member.
func (bt *batch) concurrent(fn func(mu, mv *member, u, v *opUse)) {
	for i, mu := range bt.members {
		if i == len(bt.members)-1 {
			break
		}
		var beside []*opUse // mu's goroutines that run beside what follows
		for _, u := range mu.uses {
			if u.launched && !leavesAfter(mu.stmt, u.launch) {
				beside = append(beside, u)
			}
		}
		for _, mv := range bt.members[i+1:] {
			for _, u := range beside {
				for _, v := range mv.uses {
					fn(mu, mv, u, v)
				}
			}
		}
	}
}

// leavesAfter reports whether the starter, having run the statement at
// pos inside stmt, surely leaves the statement list stmt is in: a return,
// a panic, or a break, continue or goto out of stmt follows pos in one of
// the blocks around it. Function literals are not entered.
func leavesAfter(stmt ast.Stmt, pos token.Pos) bool {
	path := pathTo(stmt, pos)
	if len(path) == 0 {
		return false
	}
	labels := declaredLabels(stmt)
	for i, n := range path {
		for _, s := range after(n, pos) {
			if leaves(s, path[:i+1], labels) {
				return true
			}
		}
	}
	return false
}

// pathTo returns the nodes from root down to the innermost one holding
// pos, a function literal at most: what its body does is not the
// starter's. None when pos is not in root.
func pathTo(root ast.Node, pos token.Pos) []ast.Node {
	if !pos.IsValid() || pos < root.Pos() || pos >= root.End() {
		return nil
	}
	var path []ast.Node
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil || pos < n.Pos() || pos >= n.End() {
			return false
		}
		path = append(path, n)
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
	return path
}

// after returns the statements that follow, in the block or clause n, the
// one holding pos; none when n is no block or holds pos in none.
func after(n ast.Node, pos token.Pos) []ast.Stmt {
	var list []ast.Stmt
	switch n := n.(type) {
	case *ast.BlockStmt:
		list = n.List
	case *ast.CaseClause:
		list = n.Body
	case *ast.CommClause:
		list = n.Body
	}
	for i, s := range list {
		if s.Pos() <= pos && pos < s.End() {
			return list[i+1:]
		}
	}
	return nil
}

// declaredLabels returns the labels declared in root, outside function
// literals.
func declaredLabels(root ast.Node) map[string]bool {
	labels := map[string]bool{}
	ast.Inspect(root, func(n ast.Node) bool {
		if l, ok := n.(*ast.LabeledStmt); ok {
			labels[l.Label.Name] = true
		}
		_, lit := n.(*ast.FuncLit)
		return !lit
	})
	return labels
}

// isPanic reports whether s calls the builtin panic (not a variable that
// shadows it).
func isPanic(s *ast.ExprStmt) bool {
	call, ok := s.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	return ok && id.Name == "panic" && id.Obj == nil
}

// leaves reports whether s, run in the statements around it (outer, from
// the root statement down), always leaves the root: a return, a panic, a
// goto or labeled branch to a label outside it, a break or continue whose
// loop, switch or select is outside it.
func leaves(s ast.Stmt, outer []ast.Node, labels map[string]bool) bool {
	switch s := s.(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.ExprStmt:
		return isPanic(s)
	case *ast.BranchStmt:
		if s.Label != nil {
			return !labels[s.Label.Name]
		}
		switch s.Tok {
		case token.BREAK, token.CONTINUE:
			for _, n := range outer {
				switch n.(type) {
				case *ast.ForStmt, *ast.RangeStmt:
					return false
				case *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
					if s.Tok == token.BREAK {
						return false
					}
				}
			}
			return true
		}
	}
	return false
}
