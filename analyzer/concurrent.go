package analyzer

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// ConcurrentDeps reports an op and an op it declares after= started in one
// concurrent batch. See the package documentation.
var ConcurrentDeps = &analysis.Analyzer{
	Name:     "concurrentdeps",
	Doc:      "report ops started concurrently with an op they follow",
	URL:      docURL + "#hdr-concurrentdeps",
	Requires: []*analysis.Analyzer{Directives},
	Run:      runConcurrentDeps,
}

// ConcurrentWrites reports two writes of one op on the same entity started
// in one concurrent batch. See the package documentation.
var ConcurrentWrites = &analysis.Analyzer{
	Name:     "concurrentwrites",
	Doc:      "report concurrent writes of one op on one entity",
	URL:      docURL + "#hdr-concurrentwrites",
	Requires: []*analysis.Analyzer{Directives},
	Run:      runConcurrentWrites,
}

func runConcurrentDeps(pass *analysis.Pass) (any, error) {
	r := pass.ResultOf[Directives].(*ops)
	if r.quiet(false) {
		return nil, nil
	}
	seen := map[token.Pos]bool{}
	for _, bt := range newBatcher(r).batches() {
		bt.concurrent(func(_, _ *member, u, v *opUse) {
			for _, p := range [][2]*opUse{{u, v}, {v, u}} {
				first, then := p[0], p[1]
				if !contains(then.op.After, first.op.Name) || seen[then.expr.Pos()] || otherEntities(pass, first, then) {
					continue
				}
				seen[then.expr.Pos()] = true
				r.report(pass, analysis.Diagnostic{
					Pos: then.expr.Pos(),
					End: then.expr.End(),
					Message: fmt.Sprintf("%s is declared after=%s but both start in one concurrent batch (line %d): %s may run before %s is done; "+
						"call %s and wait for it before starting %s",
						then.op.Name, first.op.Name, pass.Fset.Position(first.expr.Pos()).Line,
						then.op.Name, first.op.Name, first.op.Name, then.op.Name),
				})
			}
		})
	}
	return nil, nil
}

// otherEntities reports whether the calls u and v are on entities known to
// differ: each op names its entity (entity=, or a write's identity=), and
// the keys of their arguments differ (attachInvoice(b) beside
// createInvoice(a), each pipeline creating its own invoice first). An
// attach depends on the create of its own entity, not on one beside it.
// Keys that differ as written may still hold one value (two variables of
// one id): such a pair is not reported.
func otherEntities(pass *analysis.Pass, u, v *opUse) bool {
	if u.call == nil || v.call == nil || len(u.op.Entity) == 0 || len(v.op.Entity) == 0 {
		return false
	}
	a, ok1 := opKeys(&keyer{info: pass.TypesInfo, local: u.local, bind: u.bind}, u.op, u.call, u.op.Entity)
	b, ok2 := opKeys(&keyer{info: pass.TypesInfo, local: v.local, bind: v.bind}, v.op, v.call, v.op.Entity)
	return ok1 && ok2 && strings.Join(a, "\x00") != strings.Join(b, "\x00")
}

func runConcurrentWrites(pass *analysis.Pass) (any, error) {
	r := pass.ResultOf[Directives].(*ops)
	if r.quiet(false) {
		return nil, nil
	}
	seen := map[token.Pos]bool{}
	b := newBatcher(r)
	for _, bt := range b.batches() {
		bt.concurrent(func(mu, mv *member, u, v *opUse) {
			if u.op.Kind != "write" || v.op.Kind != "write" || u.op.Name != v.op.Name {
				return
			}
			if !mu.direct || mu.loop || mv.loop || u.inLoop || v.inLoop || u.call == nil || v.call == nil || seen[v.call.Pos()] {
				return
			}
			ku := &keyer{info: pass.TypesInfo, local: u.local, bind: u.bind}
			kv := &keyer{info: pass.TypesInfo, local: v.local, bind: v.bind}
			a, ok1 := opKeys(ku, u.op, u.call, u.op.Entity)
			b, ok2 := opKeys(kv, v.op, v.call, v.op.Entity)
			if !ok1 || !ok2 || strings.Join(a, "\x00") != strings.Join(b, "\x00") {
				return
			}
			// Rows of one entity that differ by identity, each added
			// only when absent (two tags of one post), commute.
			if addDistinctRows(pass.TypesInfo, u, v) {
				return
			}
			// A variable of the key assigned between the two starts may
			// hold another value by then.
			if assignedBetween(pass.TypesInfo, pass.Files, ku.objs, mu.stmt.End(), mv.stmt.Pos(), mu.stmt, mv.stmt) {
				return
			}
			seen[v.call.Pos()] = true
			r.report(pass, analysis.Diagnostic{
				Pos: v.call.Pos(),
				End: v.call.End(),
				Message: fmt.Sprintf("two %s writes on the same entity (%s) start in one concurrent batch (line %d): they race on one entity; "+
					"make it one write, or run them one after the other",
					v.op.Name, entityText(pass.TypesInfo, v.op, v.call), pass.Fset.Position(u.expr.Pos()).Line),
			})
		})
	}
	loopWrites(pass, r, b, seen)
	return nil, nil
}

// loopWrites reports a write started in a goroutine at each turn of a
// loop, on an entity the turns share: the goroutines run at once, as two
// written out do (for _, t := range titles { wg.Go(func() {
// SetTitleTraced(ctx, post, t) }) }). An entity that depends on a
// variable the loop declares or assigns (one order per turn) differs
// between turns, or may: not reported. Nor are loops that wait between
// their starts (a Wait, a receive or a send in the loop, a group limited
// to one goroutine, a range over a channel, a sleep), or calls the
// goroutine waits before.
func loopWrites(pass *analysis.Pass, r *ops, b *batcher, seen map[token.Pos]bool) {
	for _, f := range pass.Files {
		if ast.IsGenerated(f) {
			continue
		}
		labels := map[ast.Stmt]string{} // a loop's own label
		ast.Inspect(f, func(n ast.Node) bool {
			if l, ok := n.(*ast.LabeledStmt); ok {
				labels[l.Stmt] = l.Label.Name
			}
			loop, ok := n.(ast.Stmt)
			switch n.(type) {
			case *ast.ForStmt, *ast.RangeStmt:
			default:
				return true
			}
			if !ok || !launchesTogether(b, &ast.BlockStmt{List: []ast.Stmt{loop}}) || paced(pass.TypesInfo, loop) {
				return true
			}
			m := &member{stmt: loop, loop: true}
			b.collect(m, loop, false, false, [2]token.Pos{}, 0)
			for _, u := range m.uses {
				if !u.launched || u.call == nil || u.op.Kind != "write" || seen[u.call.Pos()] {
					continue
				}
				k := &keyer{info: pass.TypesInfo, local: u.local, bind: u.bind}
				if _, ok := opKeys(k, u.op, u.call, u.op.Entity); !ok || turnsDiffer(pass, loop, k.objs) {
					continue
				}
				if turnsAddDistinctRows(pass, loop, u) || dispatched(pass, loop, u.call) || leavesLoop(loop, labels[loop], u.launch) {
					continue
				}
				seen[u.call.Pos()] = true
				r.report(pass, analysis.Diagnostic{
					Pos: u.call.Pos(),
					End: u.call.End(),
					Message: fmt.Sprintf("%s writes on the same entity (%s) start at each turn of a loop (line %d) whose goroutines run at once: they race on one entity; "+
						"make it one write, or run them one after the other",
						u.op.Name, entityText(pass.TypesInfo, u.op, u.call), pass.Fset.Position(loop.Pos()).Line),
				})
			}
			return true
		})
	}
}

// leavesLoop reports whether the starter, having run the statement at pos
// inside loop (whose own label is label, if any), surely ends the loop's
// turns: a return, a panic, a break of the loop, a continue or goto to a
// label outside it follows pos in one of the blocks around it. A write
// started so runs at one turn (start the first match, then break: red team
// fF). Function literals are not entered.
func leavesLoop(loop ast.Stmt, label string, pos token.Pos) bool {
	path := pathTo(loop, pos)
	inner := declaredLabels(loop)
	for i, n := range path {
		for _, s := range after(n, pos) {
			switch s := s.(type) {
			case *ast.ReturnStmt:
				return true
			case *ast.ExprStmt:
				if isPanic(s) {
					return true
				}
			case *ast.BranchStmt:
				if s.Label != nil {
					if !inner[s.Label.Name] && (s.Label.Name != label || s.Tok == token.BREAK) {
						return true
					}
					continue
				}
				if s.Tok != token.BREAK {
					continue
				}
				// An unlabeled break ends the loop when no loop, switch
				// or select between them takes it.
				mine := true
				for _, o := range path[1 : i+1] {
					switch o.(type) {
					case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
						mine = false
					}
				}
				if mine {
					return true
				}
			}
		}
	}
	return false
}

// dispatched reports whether call runs only at the turns of loop where a
// value of the turn equals a constant: under if tc.Name == "attach", or
// in a case "attach": of a switch on tc.Name (an agent running the tool
// calls a model returned, each in a goroutine). How many turns run it is
// decided at run time, by the model; one may (red team fF: reported as
// starting "at each turn"). A filter (if t != "") is no dispatch.
func dispatched(pass *analysis.Pass, loop ast.Stmt, call *ast.CallExpr) bool {
	info := pass.TypesInfo
	turnValue := func(e ast.Expr) bool {
		var objs []types.Object
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok {
					objs = append(objs, v)
				}
			}
			return true
		})
		return len(objs) > 0 && turnsDiffer(pass, loop, objs)
	}
	constant := func(e ast.Expr) bool {
		tv, ok := info.Types[e]
		return ok && tv.Value != nil
	}
	// A value as it is (tc.Name, kinds[i]), not arithmetic on it: i%2 ==
	// 0 holds at every other turn.
	plain := func(e ast.Expr) bool {
		switch ast.Unparen(e).(type) {
		case *ast.BinaryExpr, *ast.UnaryExpr:
			return false
		}
		return true
	}
	// selects reports whether cond holds only when a value of the turn
	// equals a constant: x == c, or such a test joined by &&.
	var selects func(cond ast.Expr) bool
	selects = func(cond ast.Expr) bool {
		be, ok := ast.Unparen(cond).(*ast.BinaryExpr)
		if !ok {
			return false
		}
		switch be.Op {
		case token.LAND:
			return selects(be.X) || selects(be.Y)
		case token.EQL:
			return constant(be.X) && plain(be.Y) && turnValue(be.Y) || constant(be.Y) && plain(be.X) && turnValue(be.X)
		}
		return false
	}
	pos := call.Pos()
	in := func(n ast.Node) bool { return n != nil && n.Pos() <= pos && pos < n.End() }
	found := false
	ast.Inspect(loop, func(n ast.Node) bool {
		if found || !in(n) {
			return false
		}
		switch n := n.(type) {
		case *ast.IfStmt:
			found = in(n.Body) && selects(n.Cond)
		case *ast.SwitchStmt:
			for _, c := range n.Body.List {
				cc := c.(*ast.CaseClause)
				if !in(cc) || len(cc.List) == 0 {
					continue
				}
				all := true
				for _, e := range cc.List {
					if n.Tag != nil {
						all = all && constant(e) && plain(n.Tag) && turnValue(n.Tag)
					} else {
						all = all && selects(e)
					}
				}
				found = all
			}
		}
		return !found
	})
	return found
}

// turnsDiffer reports whether a key over objs may differ between turns of
// loop: one of them is declared or assigned in it.
func turnsDiffer(pass *analysis.Pass, loop ast.Stmt, objs []types.Object) bool {
	for _, o := range objs {
		if loop.Pos() <= o.Pos() && o.Pos() < loop.End() {
			return true
		}
	}
	return assignedBetween(pass.TypesInfo, pass.Files, objs, loop.Pos(), loop.End(), loop)
}

// turnsAddDistinctRows is addDistinctRows for the turns of a loop: the
// op adds distinct rows, its identity differs between turns, and every
// other argument (a context aside) is the same at every turn.
func turnsAddDistinctRows(pass *analysis.Pass, loop ast.Stmt, u *opUse) bool {
	if !u.op.DistinctRows {
		return false
	}
	k := &keyer{info: pass.TypesInfo, local: u.local, bind: u.bind}
	if _, ok := opKeys(k, u.op, u.call, u.op.Identity); !ok || !turnsDiffer(pass, loop, k.objs) {
		return false
	}
	for i, p := range u.op.Params {
		if i >= len(u.call.Args) || contains(u.op.Identity, p) {
			continue
		}
		if u.op.Variadic && i == len(u.op.Params)-1 {
			return false
		}
		if t := pass.TypesInfo.TypeOf(u.call.Args[i]); t != nil && isContext(t) {
			continue
		}
		ka := &keyer{info: pass.TypesInfo, local: u.local, bind: u.bind}
		if _, ok := ka.key(u.call.Args[i]); !ok || turnsDiffer(pass, loop, ka.objs) {
			return false
		}
	}
	return true
}

// paced reports whether loop's turns may wait for each other, or for
// time, outside the code they start: a send (on a full semaphore it waits,
// and with room for one it runs the turns one after the other), a range
// over a channel (a ticker's, a queue's), a time.Sleep or time.After. Its
// goroutines may then never overlap: when in doubt, say nothing.
func paced(info *types.Info, loop ast.Stmt) bool {
	if rs, ok := loop.(*ast.RangeStmt); ok {
		if t := info.TypeOf(rs.X); t != nil {
			if _, isChan := t.Underlying().(*types.Chan); isChan {
				return true
			}
		}
	}
	found := false
	ast.Inspect(loop, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.SendStmt:
			found = true
		case *ast.CallExpr:
			if fn, ok := typeutil.Callee(info, n).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "time" {
				switch fn.Name() {
				case "Sleep", "After", "Tick":
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// assignedBetween reports whether any of objs is assigned in the source
// range (from, to), or inside the two statements themselves.
func assignedBetween(info *types.Info, files []*ast.File, objs []types.Object, from, to token.Pos, stmts ...ast.Stmt) bool {
	if len(objs) == 0 {
		return false
	}
	set := map[types.Object]bool{}
	for _, o := range objs {
		set[o] = true
	}
	hit := false
	check := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && set[info.Uses[id]] {
					hit = true
				}
			}
		case *ast.IncDecStmt:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && set[info.Uses[id]] {
				hit = true
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND && set[info.Uses[id]] {
				hit = true
			}
		}
		return !hit
	}
	for _, s := range stmts {
		ast.Inspect(s, check)
	}
	if !hit {
		for _, f := range files {
			if f.Pos() > from || f.End() < to {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if n == nil || n.End() <= from || n.Pos() >= to {
					return n != nil && n.Pos() < to && n.End() > from
				}
				if n.Pos() >= from && n.End() <= to {
					ast.Inspect(n, check)
					return false
				}
				return true
			})
		}
	}
	return hit
}

// entityText shows an op's entity at a call site: the argument text when
// the entity is one parameter, else the directive expression.
func entityText(info *types.Info, op *OpFact, call *ast.CallExpr) string {
	if len(op.Entity) == 1 {
		for i, p := range op.Params {
			if p == op.Entity[0] && i < len(call.Args) {
				return types.ExprString(call.Args[i])
			}
		}
	}
	return strings.Join(op.Entity, ", ")
}

// insertsDistinctRows computes OpFact.DistinctRows for a write's body.
// The statements are those the body holds in string literals and
// constants; a call of anything but the standard library or a SQL package
// (a helper, a store of another package, a function value) may write what
// the body does not show, and so may a statement that is neither a SELECT
// nor such an INSERT: the write is then not known to add distinct rows.
// The conflict target must name every identity parameter (matched to the
// column by name, case and underscores aside): with ON CONFLICT (post) DO
// NOTHING two tags of one post are one row, and the first to land wins.
// A target-less ON CONFLICT DO NOTHING, or DO UPDATE, is not taken.
func insertsDistinctRows(pass *analysis.Pass, body *ast.BlockStmt, identity []string) bool {
	if body == nil || len(identity) == 0 {
		return false
	}
	ids := map[string]bool{}
	for _, e := range identity {
		if !token.IsIdentifier(e) {
			return false
		}
		ids[columnName(e)] = true
	}
	inserts, ok := 0, true
	stmt := func(q string) {
		q = normSQL(q)
		switch {
		case isInsert(q):
			inserts++
			if !conflictTargetCovers(q, ids) {
				ok = false
			}
		case isSelect(q):
		case hasWord(q, "INSERT"), hasWord(q, "UPDATE"), hasWord(q, "DELETE"), hasWord(q, "MERGE"),
			hasWord(q, "REPLACE"), hasWord(q, "TRUNCATE"), hasWord(q, "UPSERT"):
			ok = false
		}
	}
	ast.Inspect(body, func(n ast.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				stmt(stringValue(n))
			}
		case *ast.Ident:
			if _, isConst := pass.TypesInfo.Uses[n].(*types.Const); isConst {
				if s, isStr := constString(pass, n); isStr {
					stmt(s)
				}
			}
		case *ast.SelectorExpr:
			if _, isConst := pass.TypesInfo.Uses[n.Sel].(*types.Const); isConst {
				if s, isStr := constString(pass, n); isStr {
					stmt(s)
				}
				return false
			}
		case *ast.CallExpr:
			if tv, found := pass.TypesInfo.Types[n.Fun]; found && tv.IsType() {
				return true // a conversion
			}
			switch fn := typeutil.Callee(pass.TypesInfo, n).(type) {
			case *types.Builtin:
			case *types.Func:
				if fn.Pkg() != nil && !inGOROOT(pass.Fset, fn.Pos()) && !sqlPackage(fn.Pkg().Path()) {
					ok = false
				}
			default:
				ok = false
			}
		}
		return ok
	})
	return ok && inserts > 0
}

// conflictTargetCovers reports whether q, a normalized INSERT, ends with
// ON CONFLICT (cols) DO NOTHING where cols hold every column of ids.
func conflictTargetCovers(q string, ids map[string]bool) bool {
	_, rest, found := strings.Cut(q, " ON CONFLICT (")
	if !found {
		return false
	}
	target, rest, found := strings.Cut(rest, ")")
	if !found || !strings.HasPrefix(strings.TrimSpace(rest), "DO NOTHING") || strings.Contains(rest, "ON CONFLICT") {
		return false
	}
	cols := map[string]bool{}
	for _, c := range strings.Split(target, ",") {
		cols[columnName(c)] = true
	}
	for id := range ids {
		if !cols[id] {
			return false
		}
	}
	return true
}

// columnName folds a column or parameter name for matching: order_id,
// "ORDER_ID" and orderID are one.
func columnName(s string) string {
	s = strings.Trim(strings.TrimSpace(s), `"`+"`")
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// addDistinctRows reports whether the writes u and v, of one op whose
// body adds distinct rows (OpFact.DistinctRows), add different rows, or
// the same row twice: their identities differ in two constants, or differ
// as written while every other argument (a context aside) is the same at
// both, so that two identities that differ as written yet hold one value
// make one row either way. AddTag(post, "go") and AddTag(post, "sql") end
// alike in either order; AddTag(post, tag, "red") and AddTag(post, tag2,
// "blue") may be one row whose color is the first to land.
func addDistinctRows(info *types.Info, u, v *opUse) bool {
	if !u.op.DistinctRows || u.call == nil || v.call == nil || len(u.call.Args) != len(v.call.Args) {
		return false
	}
	ku := &keyer{info: info, local: u.local, bind: u.bind}
	kv := &keyer{info: info, local: v.local, bind: v.bind}
	a, ok1 := opKeys(ku, u.op, u.call, u.op.Identity)
	b, ok2 := opKeys(kv, v.op, v.call, v.op.Identity)
	if !ok1 || !ok2 || len(a) != len(b) || strings.Join(a, "\x00") == strings.Join(b, "\x00") {
		return false
	}
	for i := range a {
		if strings.HasPrefix(a[i], "(c:") && strings.HasPrefix(b[i], "(c:") && a[i] != b[i] {
			return true // two constants: two rows
		}
	}
	for i, p := range u.op.Params {
		if i >= len(u.call.Args) || contains(u.op.Identity, p) {
			continue
		}
		if u.op.Variadic && i == len(u.op.Params)-1 {
			return false
		}
		if t := info.TypeOf(u.call.Args[i]); t != nil && isContext(t) {
			continue
		}
		x, ok1 := ku.key(u.call.Args[i])
		y, ok2 := kv.key(v.call.Args[i])
		if !ok1 || !ok2 || x != y {
			return false
		}
	}
	return true
}
