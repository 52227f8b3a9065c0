package analyzer

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// Query builders whose chains the analyzer reads: the table and the verb
// come from constant arguments (From, InsertInto, Insert, Update), the key
// from the values of Where, Set and Values.
func builderPackage(path string) bool {
	return path == "github.com/leporo/sqlf" || path == "github.com/Masterminds/squirrel"
}

// builtQuery is what a builder chain says about its statement.
type builtQuery struct {
	verb   string // SELECT, INSERT or UPDATE
	table  string
	args   []ast.Expr // values the statement is keyed by
	dests  []ast.Expr // sqlf To(&x): where a row lands
	handle ast.Expr   // squirrel RunWith(db)
	// resolved is true when the chain may resolve conflicts itself
	// (Suffix, Options, Clause, ...): an INSERT is then not judged.
	resolved bool
}

var builderTerminals = map[string]bool{
	"QueryRow": true, "QueryRowContext": true, "Query": true, "QueryContext": true,
	"Exec": true, "ExecContext": true,
	"QueryRowAndClose": true, "QueryAndClose": true, "ExecAndClose": true,
}

// chain reads a builder chain ending at (not including) e's outermost
// call; ok is false when it is not a chain of a known builder rooted at
// the package (sqlf.From(...), sq.Insert(...)) or at a placeholder-format
// builder (sq.StatementBuilder.PlaceholderFormat(sq.Dollar)).
func (w *cbcWalker) chain(e ast.Expr) (bq builtQuery, ok bool) {
	for {
		call, isCall := ast.Unparen(e).(*ast.CallExpr)
		if !isCall {
			// A placeholder-format builder held in a variable or a field
			// carries no table.
			t := w.info.TypeOf(e)
			if n, isNamed := types.Unalias(derefType(t)).(*types.Named); isNamed && n.Obj().Pkg() != nil &&
				builderPackage(n.Obj().Pkg().Path()) && n.Obj().Name() == "StatementBuilderType" {
				return bq, bq.verb != "" && bq.table != ""
			}
			return bq, false
		}
		fn, isFn := typeutil.Callee(w.info, call).(*types.Func)
		if !isFn || fn.Pkg() == nil || !builderPackage(fn.Pkg().Path()) {
			return bq, false
		}
		sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !isSel {
			return bq, false
		}
		name := fn.Name()
		setTable := func(verb string) bool {
			if len(call.Args) == 0 {
				return false
			}
			s, known := w.sp.constString(w.strs, call.Args[0])
			if !known {
				return false
			}
			if f := strings.Fields(s); len(f) > 0 {
				bq.table = tableName(strings.ToUpper(f[0]))
			}
			if bq.verb == "" || verb != "SELECT" {
				bq.verb = verb
			}
			return bq.table != ""
		}
		switch name {
		case "From":
			if !setTable("SELECT") {
				return bq, false
			}
		case "InsertInto", "Insert", "Into", "Replace":
			if name == "Replace" || !setTable("INSERT") {
				return bq, false
			}
		case "Update", "Table":
			if !setTable("UPDATE") {
				return bq, false
			}
		case "DeleteFrom", "Delete", "New", "With", "Union", "SubQuery", "Bind":
			return bq, false
		case "Where", "Set", "Values", "SetMap", "Eq":
			args := call.Args
			if name == "Where" && len(args) > 0 {
				if _, isStr := w.sp.constString(w.strs, args[0]); isStr {
					args = args[1:]
				}
			}
			if name == "Set" && len(args) > 0 {
				args = args[1:]
			}
			bq.args = append(bq.args, args...)
		case "To", "Dest":
			bq.dests = append(bq.dests, call.Args...)
		case "RunWith":
			if len(call.Args) == 1 {
				bq.handle = call.Args[0]
			}
		case "Suffix", "SuffixExpr", "Options", "Clause", "Prefix", "PrefixExpr", "Expr", "SetExpr", "Returning":
			bq.resolved = true
		}
		if id, isID := ast.Unparen(sel.X).(*ast.Ident); isID {
			if _, isPkg := w.info.Uses[id].(*types.PkgName); isPkg {
				return bq, bq.verb != "" && bq.table != ""
			}
		}
		e = sel.X
	}
}

func derefType(t types.Type) types.Type {
	if p, ok := t.(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

// builderAccess recognizes a SELECT, an UPDATE or an INSERT run through a
// builder chain: sqlf's q.QueryRowAndClose(ctx, db), squirrel's
// q.RunWith(db).QueryRow().
func (w *cbcWalker) builderAccess(call *ast.CallExpr) (a *cbcAccess, isRead, ok bool) {
	fn, isFn := typeutil.Callee(w.info, call).(*types.Func)
	if !isFn || fn.Pkg() == nil || !builderPackage(fn.Pkg().Path()) || !builderTerminals[fn.Name()] {
		return nil, false, false
	}
	sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !isSel {
		return nil, false, true
	}
	bq, known := w.chain(sel.X)
	if !known {
		return nil, false, true
	}
	handle := bq.handle
	for _, arg := range call.Args {
		if t := w.info.TypeOf(arg); t != nil && !isContext(t) && handleOf(t) != handleOther {
			handle = arg
		}
	}
	if handle == nil {
		return nil, false, true
	}
	tx, hok := w.handleOK(handle)
	if !hok {
		return nil, false, true
	}
	a = &cbcAccess{call: call, table: bq.table, txParam: tx}
	exec := strings.HasPrefix(fn.Name(), "Exec")
	switch {
	case bq.verb == "SELECT" && !exec:
		isRead = true
	case bq.verb == "UPDATE" && exec:
		isRead, a.update = true, true
	case bq.verb == "INSERT" && !bq.resolved:
	default:
		return nil, false, true
	}
	k := &keyer{info: w.info, params: w.params}
	for _, arg := range bq.args {
		a.keys = append(a.keys, argKeys(k, arg)...)
	}
	if len(a.keys) == 0 {
		return nil, false, true
	}
	if isRead {
		w.reads = append(w.reads, a)
		var addrs []ast.Expr
		for _, d := range bq.dests {
			addrs = append(addrs, d)
		}
		w.deriveAddrs(addrs, []int{len(w.reads) - 1})
		return a, true, true
	}
	return a, false, true
}
