package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// What serializes a check and its insert in the database, resolved from
// what the code runs rather than from what it mentions (red team rtM, L1
// and L2: a serializable level named by a package-level variable, or a
// lock taken by a helper, was not seen, and a log line saying SERIALIZABLE
// silenced a plain check-then-insert). A transaction serializes its check
// and its insert when it is begun serializable, or when it runs, before
// the check, a statement that takes a lock held to its end (a
// transaction-scoped advisory lock, LOCK TABLE, SET TRANSACTION ISOLATION
// LEVEL SERIALIZABLE), itself or through a helper (LockFact). Outside a
// transaction only a lock that outlives its statement serializes anything
// (a session advisory lock, MySQL's GET_LOCK): a transaction-scoped one
// taken on a *sql.DB is released when its one statement ends.

// LockFact is exported for a function that runs, on its handle parameter
// Param (a database, connection or transaction), a statement that takes a
// lock: func lockKey(ctx, tx *sql.Tx, key string) running SELECT
// pg_advisory_xact_lock(hashtext($1)). Session says the lock outlives the
// statement's transaction (pg_advisory_lock, GET_LOCK); such a lock taken
// on a handle that is no parameter (a store's s.db) has Param -1.
type LockFact struct {
	Param   int
	Session bool
}

// AFact marks LockFact as an analysis fact.
func (*LockFact) AFact() {}

// String renders the fact for tests.
func (f *LockFact) String() string {
	if f.Session {
		return fmt.Sprintf("locks on param %d (session)", f.Param)
	}
	return fmt.Sprintf("locks on param %d", f.Param)
}

// lockKind is what a statement locks.
type lockKind int

const (
	lockNone    lockKind = iota
	lockTx               // held until the transaction ends
	lockSession          // held until released, or the connection closes
)

// lockSQL tells what a query locks.
func lockSQL(q string) lockKind {
	q = normSQL(q)
	switch {
	case strings.Contains(q, "PG_ADVISORY_LOCK") || strings.Contains(q, "PG_TRY_ADVISORY_LOCK") || strings.Contains(q, "GET_LOCK("):
		return lockSession
	case strings.Contains(q, "PG_ADVISORY_XACT_LOCK") || strings.Contains(q, "PG_TRY_ADVISORY_XACT_LOCK"),
		strings.HasPrefix(q, "LOCK "),
		strings.Contains(q, "ISOLATION LEVEL SERIALIZABLE"):
		return lockTx
	}
	return lockNone
}

// level is an isolation level as far as checkbeforecreate cares.
type level int

const (
	levelDefault level = iota // known not serializable
	levelSerial
	levelUnknown // not resolved: may be serializable
)

// join is the level of a value that holds a or b, not known which.
func join(a, b level) level {
	switch {
	case a == levelUnknown || b == levelUnknown:
		return levelUnknown
	case a == b:
		return a
	}
	return levelDefault // one path is not serializable
}

// constLevel resolves an isolation level constant: sql.LevelSerializable
// and pgx.Serializable (by the value of the constant of that name in the
// level type's package), or a level given as a string ("serializable").
func constLevel(info *types.Info, e ast.Expr) level {
	tv := info.Types[e]
	if tv.Value == nil {
		return levelUnknown
	}
	return valueLevel(tv.Type, tv.Value)
}

// valueLevel is constLevel of a constant of type t and value v.
func valueLevel(t types.Type, v constant.Value) level {
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		for _, name := range []string{"LevelSerializable", "Serializable"} {
			if c, ok := n.Obj().Pkg().Scope().Lookup(name).(*types.Const); ok && types.Identical(c.Type(), t) {
				if constant.Compare(c.Val(), token.EQL, v) {
					return levelSerial
				}
				return levelDefault
			}
		}
	}
	if v.Kind() == constant.String {
		if strings.EqualFold(constant.StringVal(v), "serializable") {
			return levelSerial
		}
		return levelDefault
	}
	return levelUnknown
}

// isoField reports whether a struct field is a transaction's isolation
// level: sql.TxOptions.Isolation, pgx.TxOptions.IsoLevel.
func isoField(name string) bool { return name == "Isolation" || name == "IsoLevel" }

// optionsLevel resolves the level of a transaction's options, as they are
// at pos: nil, a composite literal (&sql.TxOptions{Isolation: ...},
// pgx.TxOptions{IsoLevel: ...}), a package-level variable the package
// never assigns, or a local variable with what is assigned to it (and to
// its isolation field) before pos; an assignment under a branch leaves
// the level of the path that skips it possible. Anything else (a
// parameter, a field, a call) is unknown.
func optionsLevel(info *types.Info, files []*ast.File, e ast.Expr, pos token.Pos, depth int) level {
	if depth > 4 {
		return levelUnknown
	}
	if isNil(info, e) {
		return levelDefault
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return optionsLevel(info, files, x.X, pos, depth+1)
		}
	case *ast.CompositeLit:
		if _, ok := info.TypeOf(x).Underlying().(*types.Struct); !ok {
			return levelUnknown
		}
		for _, el := range x.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				return levelUnknown
			}
			if k, ok := kv.Key.(*ast.Ident); ok && isoField(k.Name) {
				return constLevel(info, kv.Value)
			}
		}
		return levelDefault
	case *ast.Ident:
		v, ok := info.Uses[x].(*types.Var)
		if !ok || v.Pkg() == nil {
			return levelUnknown
		}
		return varLevel(info, files, v, pos, depth)
	}
	return levelUnknown
}

// varLevel is optionsLevel of a variable, in the package's files.
func varLevel(info *types.Info, files []*ast.File, v *types.Var, pos token.Pos, depth int) level {
	pkgLevel := v.Parent() == v.Pkg().Scope()
	var file *ast.File
	for _, f := range files {
		if f.FileStart <= v.Pos() && v.Pos() < f.FileEnd {
			file = f
		}
	}
	if file == nil {
		return levelUnknown // declared in another package
	}
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.ObjectOf(id) == v
	}
	// The definition, then each later assignment before pos, in order.
	type set struct {
		pos   token.Pos
		val   level
		block ast.Node // innermost block or clause around the assignment
	}
	var def *set
	var sets []set
	bad := false
	var stack []ast.Node
	block := func() ast.Node {
		for i := len(stack) - 1; i >= 0; i-- {
			switch stack[i].(type) {
			case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause, *ast.File:
				return stack[i]
			}
		}
		return nil
	}
	visit := func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if info.Defs[id] != v {
					continue
				}
				val := levelDefault // var opts sql.TxOptions: the zero value
				if i < len(n.Values) && len(n.Values) == len(n.Names) {
					val = optionsLevel(info, files, n.Values[i], n.Pos(), depth+1)
				} else if len(n.Values) > 0 {
					val = levelUnknown
				}
				def = &set{n.Pos(), val, block()}
			}
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				var val level
				switch {
				case is(l):
					val = levelUnknown
					if len(n.Rhs) == len(n.Lhs) {
						val = optionsLevel(info, files, n.Rhs[i], n.Pos(), depth+1)
					}
					if id := ast.Unparen(l).(*ast.Ident); info.Defs[id] == v {
						def = &set{n.Pos(), val, block()}
						continue
					}
				default:
					sel, ok := ast.Unparen(l).(*ast.SelectorExpr)
					if !ok || !is(sel.X) {
						continue
					}
					if !isoField(sel.Sel.Name) {
						continue // opts.ReadOnly = true
					}
					val = levelUnknown
					if len(n.Rhs) == len(n.Lhs) && n.Tok == token.ASSIGN {
						val = constLevel(info, n.Rhs[i])
					}
				}
				if pkgLevel {
					bad = true // assigned at run time: which value, when?
				}
				if n.Pos() < pos {
					sets = append(sets, set{n.Pos(), val, block()})
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND && is(n.X) && !(n.Pos() <= pos && pos <= n.End()) {
				bad = true // handed on: may be changed
			}
		}
		return true
	}
	if pkgLevel {
		for _, f := range files {
			ast.Inspect(f, visit)
		}
	} else {
		ast.Inspect(file, visit)
	}
	if bad || def == nil {
		return levelUnknown
	}
	lv := def.val
	for _, s := range sets {
		if s.pos < def.pos {
			continue
		}
		if s.block == def.block {
			lv = s.val
		} else {
			lv = join(lv, s.val)
		}
	}
	return lv
}

// beginLevel is the level of a transaction begun by call (Begin, BeginTx,
// Beginx, BeginTxx, pgx's BeginTx): of its options, the arguments but the
// context.
func (w *cbcWalker) beginLevel(call *ast.CallExpr) level {
	lv := levelDefault
	for _, a := range call.Args {
		if t := w.info.TypeOf(a); t != nil && isContext(t) {
			continue
		}
		switch optionsLevel(w.info, w.pass.Files, a, call.Pos(), 0) {
		case levelSerial:
			return levelSerial
		case levelUnknown:
			lv = levelUnknown
		}
	}
	return lv
}

// lockFact returns the lock fn takes on one of its parameters, if any.
func (p *sqlPkg) lockFact(fn *types.Func) (LockFact, bool) {
	if p == nil {
		return LockFact{}, false
	}
	fn = fn.Origin()
	if f, ok := p.locks[fn]; ok {
		return f, true
	}
	if fn.Pkg() == p.pass.Pkg || fn.Pkg() == nil || !hasHandleParam(fn) && fn.Type().(*types.Signature).Recv() == nil {
		return LockFact{}, false
	}
	var f LockFact
	if p.pass.ImportObjectFact(fn, &f) {
		return f, true
	}
	return LockFact{}, false
}

// hasHandleParam reports whether fn takes a database, connection or
// transaction: only such a function, or a method (on a store holding a
// database), may have a LockFact.
func hasHandleParam(fn *types.Func) bool {
	sig, ok := fn.Type().(*types.Signature)
	if !ok {
		return false
	}
	for i := 0; i < sig.Params().Len(); i++ {
		if handleOf(sig.Params().At(i).Type()) != handleOther {
			return true
		}
	}
	return false
}

// queryLock returns what a call locks by its own query: a query or exec
// method of a handle with a constant query. The handle is returned too.
func (p *sqlPkg) queryLock(info *types.Info, call *ast.CallExpr, locals map[types.Object]string) (ast.Expr, lockKind) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || handleOf(info.TypeOf(sel.X)) == handleOther {
		return nil, lockNone
	}
	if !queryMethods[sel.Sel.Name] && !execMethods[sel.Sel.Name] {
		return nil, lockNone
	}
	if _, q, ok := queryArg(info, call, func(e ast.Expr) (string, bool) { return p.constString(locals, e) }); ok {
		return sel.X, lockSQL(q)
	}
	// A query built at run time (fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)",
	// id)): the lock is in one of its literals.
	k := lockNone
	for _, a := range call.Args {
		ast.Inspect(a, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				k = max(k, lockSQL(stringValue(lit)))
			}
			return true
		})
	}
	return sel.X, k
}

// locksOn returns, for each call in body that takes a lock (by its query,
// or through a function with a LockFact), the handle expression it locks
// on and the lock's kind.
func (p *sqlPkg) locksOn(info *types.Info, body ast.Node, locals map[types.Object]string, fn func(call *ast.CallExpr, handle ast.Expr, k lockKind)) {
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if h, k := p.queryLock(info, call, locals); k != lockNone {
			fn(call, h, k)
			return true
		}
		if f, ok := typeutil.Callee(info, call).(*types.Func); ok {
			if lf, ok := p.lockFact(f); ok && lf.Param < len(call.Args) {
				k := lockTx
				if lf.Session {
					k = lockSession
				}
				var h ast.Expr
				if lf.Param >= 0 {
					h = call.Args[lf.Param]
				}
				fn(call, h, k)
			}
		}
		return true
	})
}

// computeLocks finds the package's functions that lock on a handle
// parameter, through each other too, and exports their LockFacts.
func (p *sqlPkg) computeLocks() {
	info := p.pass.TypesInfo
	type decl struct {
		fd *ast.FuncDecl
		fn *types.Func
	}
	var decls []decl
	for _, f := range p.pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
				decls = append(decls, decl{fd, fn})
			}
		}
	}
	for round := 0; round < 3; round++ {
		changed := false
		for _, d := range decls {
			sig := d.fn.Type().(*types.Signature)
			params := map[types.Object]int{}
			for i := 0; i < sig.Params().Len(); i++ {
				if handleOf(sig.Params().At(i).Type()) != handleOther {
					params[sig.Params().At(i)] = i
				}
			}
			if len(params) == 0 && sig.Recv() == nil {
				continue
			}
			best, found := p.locks[d.fn], false
			_, had := p.locks[d.fn]
			p.locksOn(info, d.fd.Body, nil, func(_ *ast.CallExpr, h ast.Expr, k lockKind) {
				i := -1
				if id, ok := ast.Unparen(h).(*ast.Ident); ok {
					if j, ok := params[info.Uses[id]]; ok {
						i = j
					}
				}
				if i < 0 && k != lockSession {
					return // a transaction's lock, in a transaction of its own
				}
				if !found || (k == lockSession && !best.Session) {
					best, found = LockFact{Param: i, Session: k == lockSession}, true
				}
			})
			if found && (!had || best != p.locks[d.fn]) {
				p.locks[d.fn] = best
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for _, d := range decls {
		if f, ok := p.locks[d.fn]; ok {
			p.pass.ExportObjectFact(d.fn, &f)
		}
	}
}

// serializedPair reports whether the database serializes the check rd
// and the insert a: both run in one transaction begun here that is
// serializable (or of a level not resolved here) or that takes a lock
// before the check; or, wherever they run, a lock that outlives its
// statement is taken before the check. An access whose handle is not
// resolved (a prepared statement, a builder's RunWith) may run in any
// transaction begun here: one such transaction serialized covers it.
func (w *cbcWalker) serializedPair(rd, a *cbcAccess) bool {
	if rd.call == nil || w.sp == nil {
		return false
	}
	unresolved := (a.tx == nil && !a.onDB) || (rd.tx == nil && !rd.onDB)
	for tx, lv := range w.txLevel {
		if lv != levelDefault && (unresolved || a.tx != nil && rd.tx == a.tx && tx == a.tx) {
			return true
		}
	}
	found := false
	w.sp.locksOn(w.info, w.outer, w.strs, func(call *ast.CallExpr, h ast.Expr, k lockKind) {
		if found || call.End() > rd.call.Pos() {
			return
		}
		if k == lockSession {
			found = true
			return
		}
		id, ok := ast.Unparen(h).(*ast.Ident)
		if !ok || !w.txs[w.info.Uses[id]] {
			return // a lock on a database ends with its statement
		}
		if unresolved || a.tx != nil && rd.tx == a.tx && w.info.Uses[id] == a.tx {
			found = true
		}
	})
	return found
}

// mentionsSerialization reports whether a function serializes something
// by what it says: a lock or serializable level in a query it runs, a
// serializable level constant or options variable it names, a lock helper
// (LockFact) it calls or a function named for it (withSerializableTx),
// or, with mutex set, a Lock or TryLock call. It
// stands where no access is resolved (an op's check and create, a
// function summarized for its callers, a transaction helper): there a
// mention says nothing for sure, and silence is the safe side. A string
// that is no query (a log line saying SERIALIZABLE) is no mention.
func (p *sqlPkg) mentionsSerialization(info *types.Info, files []*ast.File, body *ast.BlockStmt, mutex bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				q := normSQL(stringValue(n))
				if q == "SERIALIZABLE" || sqlStatement(q) && (lockSQL(q) != lockNone || strings.Contains(q, "FOR UPDATE") && mutex || strings.Contains(q, "FOR SHARE") && mutex) {
					found = true
				}
			}
		case *ast.Ident:
			switch obj := info.Uses[n].(type) {
			case *types.Const:
				if valueLevel(obj.Type(), obj.Val()) == levelSerial {
					found = true
				}
			case *types.Func:
				// A helper named for it (withSerializableTx): its body is
				// not read here.
				found = strings.Contains(obj.Name(), "Serializable")
			case *types.Var:
				if obj.Pkg() != nil && obj.Parent() == obj.Pkg().Scope() && optionsType(obj.Type()) &&
					varLevel(info, files, obj, body.End(), 0) != levelDefault {
					found = true
				}
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && mutex && (sel.Sel.Name == "Lock" || sel.Sel.Name == "TryLock") {
				found = true
			}
			if f, ok := typeutil.Callee(info, n).(*types.Func); ok && p != nil {
				if _, ok := p.lockFact(f); ok {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// sqlStatement reports whether a normalized string reads as a statement
// that may lock or set a level.
func sqlStatement(q string) bool {
	for _, k := range []string{"SELECT ", "SET ", "LOCK ", "WITH ", "BEGIN", "START ", "DO ", "CALL "} {
		if strings.HasPrefix(q, k) {
			return true
		}
	}
	return false
}

// optionsType reports whether t is a transaction's options
// (sql.TxOptions, pgx.TxOptions), or a pointer to them.
func optionsType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == "TxOptions"
}
