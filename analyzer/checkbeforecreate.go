package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// CheckBeforeCreate reports a write that runs when a read of the same key
// found nothing, where the write is not idempotent at its sink. See the
// package documentation.
var CheckBeforeCreate = &analysis.Analyzer{
	Name:     "checkbeforecreate",
	Doc:      "report creates guarded by a read of the same key",
	URL:      docURL + "#hdr-checkbeforecreate",
	Requires: []*analysis.Analyzer{Directives, sqlFacts},
	Run:      runCheckBeforeCreate,
}

func runCheckBeforeCreate(pass *analysis.Pass) (res any, err error) {
	// An unforeseen shape of code ends the package's check quietly (what
	// was reported stays) rather than stopping go vet.
	defer func() {
		if recover() != nil {
			res, err = nil, nil
		}
	}()
	r := pass.ResultOf[Directives].(*ops)
	p := pass.ResultOf[sqlFacts].(*sqlPkg)
	sqlUse := p != nil
	if len(r.ops)+len(r.wrappers) == 0 && !sqlUse && !importsAPI(pass.Pkg) {
		return nil, nil
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
			// Each function literal is a function of its own. One passed to
			// a helper that runs it in a transaction begun for it (withTx)
			// gets its transaction parameter as begun here.
			bodies := []*ast.BlockStmt{fd.Body}
			litTxs := map[*ast.BlockStmt][]types.Object{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					bodies = append(bodies, n.Body)
				case *ast.CallExpr:
					if !sqlUse {
						return true
					}
					fn, ok := typeutil.Callee(pass.TypesInfo, n).(*types.Func)
					if !ok {
						return true
					}
					i, ok := p.txParam(fn)
					if !ok || i >= len(n.Args) {
						return true
					}
					lit, ok := ast.Unparen(n.Args[i]).(*ast.FuncLit)
					if !ok {
						return true
					}
					if i >= 1 && strings.HasPrefix(fn.Pkg().Path(), "github.com/jackc/pgx/") && fn.Name() == "BeginTxFunc" &&
						optionsLevel(pass.TypesInfo, pass.Files, n.Args[i-1], n.Pos(), 0) != levelDefault {
						// pgx.BeginTxFunc(ctx, db, opts, fn) with options that
						// are (or may be) serializable: as a transaction from
						// elsewhere, say nothing.
						return true
					}
					for _, field := range lit.Type.Params.List {
						for _, name := range field.Names {
							if obj := pass.TypesInfo.Defs[name]; obj != nil && handleOf(obj.Type()) == handleTx {
								litTxs[lit.Body] = append(litTxs[lit.Body], obj)
							}
						}
					}
				}
				return true
			})
			for _, body := range bodies {
				w := newWalker(pass, r, p, body)
				w.outer = fd.Body
				for _, tx := range litTxs[body] {
					w.txs[tx] = true
				}
				w.stmts(body.List, nil)
			}
		}
	}
	return nil, nil
}

func newWalker(pass *analysis.Pass, r *ops, p *sqlPkg, body *ast.BlockStmt) *cbcWalker {
	w := &cbcWalker{pass: pass, r: r, sp: p, info: pass.TypesInfo, body: body,
		derived: map[types.Object][]int{}, txs: map[types.Object]bool{}, stmtq: map[types.Object]stmtInfo{},
		txLevel: map[types.Object]level{}}
	w.countFlags()
	return w
}

// A cbcAccess is a read or a write the walker found.
type cbcAccess struct {
	call  *ast.CallExpr
	op    *OpFact // an annotated op, or nil for SQL
	table string  // SQL table
	keys  []string
	vars  []types.Object // variables the key is built from (ops)
	query *ast.BasicLit  // SQL literal, for a fix
	pgsql bool           // PostgreSQL dialect: $n placeholders or pgx
	// tx is the transaction begun here (or for this literal) the access
	// runs in, nil when none.
	tx types.Object
	// onDB says the access runs on a database handle (a *sql.DB, a pool,
	// a connection), in no transaction of this function's.
	onDB bool
	// txParam is the parameter holding the transaction the access runs
	// in, when summarizing a function; -1 when none.
	txParam int
	update  bool // an UPDATE: what tells presence is the affected-row count
	summary bool // through a function's SQL summary
	// A call through an interface not resolved here (summaries): what it
	// calls and how each argument renders.
	via  string
	args []string
	// kind is "http" for a GET or a POST, "gorm" for a GORM read or
	// create, "" for SQL and ops (cbcapi.go).
	kind  string
	url   string       // http: the URL as written
	body  ast.Expr     // http: what a POST sends
	model *types.Named // gorm: the model
	conds []gormCond   // gorm: the read's conditions, the create's fields
}

// state of a branch with respect to a read: the key is (maybe) absent, or
// certainly not absent, or unknown.
type state int

const (
	unknown state = iota
	absent
	notAbsent
)

// A guard says what the enclosing branch knows of some reads: their key
// is absent, or not absent.
type guard struct {
	reads []int
	st    state
}

type cbcWalker struct {
	pass    *analysis.Pass
	r       *ops
	info    *types.Info
	body    *ast.BlockStmt
	outer   *ast.BlockStmt // the declared function's body, around a literal's
	reads   []*cbcAccess
	derived map[types.Object][]int // variables holding what a read returned
	txs     map[types.Object]bool  // transactions begun in this function
	// txLevel is the isolation level each transaction begun here was
	// begun with (a literal's from a helper: the default).
	txLevel map[types.Object]level
	// sqliteTxs are the transactions begun here on a database this
	// package opens with a SQLite driver, and only so.
	sqliteTxs map[types.Object]bool
	strs      map[types.Object]string // local variables holding a constant string
	done      map[*ast.CallExpr]bool

	sp     *sqlPkg
	stmtq  map[types.Object]stmtInfo // local prepared statements
	params map[types.Object]int      // set when summarizing a function
	writes []*cbcAccess              // inserts seen (summaries)
	// what the function returns, when summarizing: how many return
	// statements, and whether one returns something not derived from a
	// read (nor a constant).
	returns     int
	badReturn   bool
	fn          *types.Func           // the function summarized
	constResult map[types.Object]bool // named results last assigned a constant

	// boolean flags: how many times each is assigned in the body, and the
	// assignments seen so far with the guards around them.
	flagCount map[types.Object]int
	flagSets  map[types.Object][]flagSet
}

// stmtInfo is a prepared statement: its query, and the parameter holding
// its transaction when summarizing (-1 when none).
type stmtInfo struct {
	query   string
	txParam int
}

// flagSet is one assignment of a constant to a boolean flag.
type flagSet struct {
	val   bool
	decl  bool
	ctx   []guard
	order int
}

func (w *cbcWalker) stmts(list []ast.Stmt, ctx []guard) {
	for _, s := range list {
		w.stmt(s, ctx)
		// for _, t := range found { if match(t) { return t } }: after the
		// loop, nothing matched.
		if rs, ok := s.(*ast.RangeStmt); ok {
			if reads := w.readsIn(rs.X); len(reads) > 0 && returnsFound(w.info, rs) {
				ctx = append(ctx[:len(ctx):len(ctx)], guard{reads, absent})
			}
		}
		if ifs, ok := s.(*ast.IfStmt); ok {
			reads, t, f := w.cond(ifs.Cond)
			next := unknown
			switch {
			case terminates(ifs.Body):
				next = f
			case ifs.Else != nil && terminates(ifs.Else):
				next = t
			}
			ctx = with(ctx, reads, next)
		}
	}
}

func (w *cbcWalker) stmt(s ast.Stmt, ctx []guard) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		w.exprs(s.Rhs, ctx)
		w.assign(s.Lhs, s.Rhs)
		w.setFlag(s.Lhs, s.Rhs, s.Tok == token.DEFINE, ctx)
	case *ast.DeclStmt:
		if gd, ok := s.Decl.(*ast.GenDecl); ok {
			for _, sp := range gd.Specs {
				if vs, ok := sp.(*ast.ValueSpec); ok {
					w.exprs(vs.Values, ctx)
					lhs := make([]ast.Expr, len(vs.Names))
					for i, n := range vs.Names {
						lhs[i] = n
					}
					w.assign(lhs, vs.Values)
					if len(vs.Values) == 0 && len(vs.Names) == 1 {
						// var found bool: false
						w.setFlag(lhs, []ast.Expr{ast.NewIdent("false")}, true, ctx)
					} else {
						w.setFlag(lhs, vs.Values, true, ctx)
					}
				}
			}
		}
	case *ast.ExprStmt:
		w.exprs([]ast.Expr{s.X}, ctx)
	case *ast.ReturnStmt:
		w.exprs(s.Results, ctx)
		if w.params != nil {
			w.returns++
			if len(s.Results) == 0 {
				// A bare return gives the named results.
				if sig, ok := w.sig(); ok && sig.Results().Len() > 0 && sig.Results().At(0).Name() != "" {
					for i := 0; i < sig.Results().Len(); i++ {
						if r := sig.Results().At(i); len(w.derived[r]) == 0 && !w.constResult[r] {
							w.badReturn = true
						}
					}
				} else {
					w.badReturn = true
				}
			}
			for _, res := range s.Results {
				if tv := w.info.Types[res]; tv.Value == nil && !tv.IsNil() && len(w.readsIn(res)) == 0 {
					w.badReturn = true
				}
			}
		}
	case *ast.DeferStmt:
		w.exprs([]ast.Expr{s.Call}, ctx)
	case *ast.GoStmt:
		w.exprs([]ast.Expr{s.Call}, ctx)
	case *ast.BlockStmt:
		w.stmts(s.List, ctx)
	case *ast.LabeledStmt:
		w.stmt(s.Stmt, ctx)
	case *ast.IfStmt:
		if s.Init != nil {
			w.stmt(s.Init, ctx)
		}
		w.exprs([]ast.Expr{s.Cond}, ctx)
		reads, t, f := w.cond(s.Cond)
		w.stmts(s.Body.List, with(ctx, reads, t))
		if s.Else != nil {
			w.stmt(s.Else, with(ctx, reads, f))
		}
	case *ast.SwitchStmt:
		if s.Init != nil {
			w.stmt(s.Init, ctx)
		}
		if s.Tag != nil {
			w.exprs([]ast.Expr{s.Tag}, ctx)
		}
		for _, c := range s.Body.List {
			cc := c.(*ast.CaseClause)
			w.exprs(cc.List, ctx)
			inner := ctx
			if len(cc.List) == 1 {
				cond := cc.List[0]
				if s.Tag != nil {
					cond = &ast.BinaryExpr{X: s.Tag, Op: token.EQL, Y: cond, OpPos: cond.Pos()}
				}
				reads, t, _ := w.cond(cond)
				inner = with(ctx, reads, t)
			}
			w.stmts(cc.Body, inner)
		}
	case *ast.ForStmt:
		if s.Init != nil {
			w.stmt(s.Init, ctx)
		}
		inner := ctx
		if s.Cond != nil {
			w.exprs([]ast.Expr{s.Cond}, ctx)
			reads, t, _ := w.cond(s.Cond)
			inner = with(ctx, reads, t) // for rows.Next() { ... }
		}
		w.stmts(s.Body.List, inner)
	case *ast.RangeStmt:
		w.exprs([]ast.Expr{s.X}, ctx)
		w.stmts(s.Body.List, ctx)
	case *ast.TypeSwitchStmt:
		for _, c := range s.Body.List {
			w.stmts(c.(*ast.CaseClause).Body, ctx)
		}
	case *ast.SelectStmt:
		for _, c := range s.Body.List {
			w.stmts(c.(*ast.CommClause).Body, ctx)
		}
	}
}

func with(ctx []guard, reads []int, st state) []guard {
	if st == unknown || len(reads) == 0 {
		return ctx
	}
	return append(ctx[:len(ctx):len(ctx)], guard{reads, st})
}

// exprs visits the calls in exprs, innermost first, outside function
// literals: reads are recorded, writes checked against the guards.
func (w *cbcWalker) exprs(list []ast.Expr, ctx []guard) {
	var calls []*ast.CallExpr
	for _, e := range list {
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				calls = append(calls, n)
			}
			return true
		})
	}
	for i := len(calls) - 1; i >= 0; i-- {
		w.call(calls[i], ctx)
	}
}

func (w *cbcWalker) call(call *ast.CallExpr, ctx []guard) {
	if w.done == nil {
		w.done = map[*ast.CallExpr]bool{}
	}
	if w.done[call] {
		return
	}
	w.done[call] = true
	// Scan into variables: row.Scan(&x), rows.Scan(&x).
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Scan" {
		if reads := w.readsIn(sel.X); len(reads) > 0 {
			w.deriveAddrs(call.Args, reads)
		}
		return
	}
	if op, _, _ := w.r.opCall(call); op != nil {
		k := &keyer{info: w.info}
		keys, ok := opKeys(k, op, call, op.Entity)
		if !ok {
			keys = nil
		}
		// When an argument is built by a call (request(disputeID)), the
		// variables it is built from stand in for the key.
		vars := keyVars(w.info, op, call)
		if len(keys) == 0 && len(vars) == 0 {
			return
		}
		a := &cbcAccess{call: call, op: op, keys: keys, vars: vars}
		if op.Kind == "read" {
			w.reads = append(w.reads, a)
		} else if !op.Idempotent {
			w.checkWrite(a, ctx)
		}
		return
	}
	if w.params == nil && w.apiAccess(call, ctx) {
		return
	}
	if w.sp == nil {
		return
	}
	if w.summaryCall(call, ctx) {
		return
	}
	a, isRead, isBuilder := w.builderAccess(call)
	if isBuilder {
		if a != nil && !isRead {
			w.writes = append(w.writes, a)
			w.checkWrite(a, ctx)
		}
		return
	}
	a, isRead = w.sqlAccess(call)
	if a == nil {
		return
	}
	if isRead {
		w.reads = append(w.reads, a)
		// sqlx Get(&dest, query, ...): dest holds the row.
		w.deriveAddrs(call.Args, []int{len(w.reads) - 1})
		return
	}
	w.writes = append(w.writes, a)
	w.checkWrite(a, ctx)
}

// summaryCall records the reads and checks the inserts of a call to a
// function with a SQL summary.
func (w *cbcWalker) summaryCall(call *ast.CallExpr, ctx []guard) bool {
	fn, ok := typeutil.Callee(w.info, call).(*types.Func)
	if !ok || fn.Pkg() != nil && sqlPackage(fn.Pkg().Path()) {
		// A driver's method is a query, read by sqlAccess: pgx's own
		// (*Conn).Exec, summarized as pgx was analyzed, hid every
		// check-then-insert on a *pgx.Conn or *pgxpool.Pool.
		return false
	}
	sum := w.sp.summary(fn)
	if sum == nil {
		// Summarizing: an interface method of the module whose
		// implementations are not visible here is resolved by callers that
		// see them.
		if w.params != nil && types.IsInterface(recvType(fn)) && !w.sp.implFound[fn.Origin()] && fn.Pkg() != nil &&
			modulePrefix(fn.Pkg().Path()) == modulePrefix(w.pass.Pkg.Path()) {
			if via := viaOf(fn); via != "" {
				if args := w.renderArgs(call.Args); anyParamKey(args) {
					w.reads = append(w.reads, &cbcAccess{call: call, via: via, args: args, summary: true})
					return true
				}
			}
		}
		return false
	}
	if w.params != nil {
		for _, c := range sum.Calls {
			args := w.renderArgs(call.Args)
			composed := make([]string, len(c.Args))
			for i, a := range c.Args {
				if a == "nil" || a == "tx" {
					composed[i] = a
				} else if paramKey.MatchString(a) {
					n, rest := a[1:], ""
					if j := strings.IndexByte(n, '.'); j >= 0 {
						n, rest = n[:j], n[j:]
					}
					if idx, err := strconv.Atoi(n); err == nil && idx < len(args) && paramKey.MatchString(args[idx]) {
						composed[i] = args[idx] + rest
					} else if err == nil && idx < len(args) && rest == "" {
						composed[i] = args[idx] // nil, tx
					}
				}
			}
			if !anyParamKey(composed) {
				continue
			}
			pa := &cbcAccess{call: call, via: c.Via, args: composed, summary: true}
			if c.Read {
				w.reads = append(w.reads, pa)
			} else {
				w.writes = append(w.writes, pa)
			}
		}
	}
	k := &keyer{info: w.info, params: w.params}
	access := func(s SQLAccess) *cbcAccess {
		tx := -1
		var txObj types.Object
		onDB := s.Tx < 0 // the function runs it on a handle of its own
		if s.Tx >= 0 {
			if s.Tx >= len(call.Args) {
				return nil
			}
			onDB = isNil(w.info, call.Args[s.Tx]) || handleOf(w.info.TypeOf(call.Args[s.Tx])) == handleDB
			if !isNil(w.info, call.Args[s.Tx]) {
				t, ok := w.handleOK(call.Args[s.Tx])
				if !ok {
					return nil
				}
				tx = t
				if id, ok := ast.Unparen(call.Args[s.Tx]).(*ast.Ident); ok && w.txs[w.info.Uses[id]] {
					txObj = w.info.Uses[id]
				}
			}
		}
		keys := callKeys(k, call, s.Keys)
		if len(keys) == 0 {
			return nil
		}
		return &cbcAccess{call: call, table: s.Table, keys: keys, txParam: tx, tx: txObj, onDB: onDB, update: s.Update, summary: true}
	}
	for _, s := range sum.Reads {
		if a := access(s); a != nil {
			w.reads = append(w.reads, a)
		}
	}
	for _, s := range sum.Writes {
		if a := access(s); a != nil {
			w.writes = append(w.writes, a)
			w.checkWrite(a, ctx)
		}
	}
	return true
}

// renderArgs renders the arguments of a call for a pending interface
// call: a parameter key, "nil", "tx" for a transaction of the function's
// own, or "".
func (w *cbcWalker) renderArgs(args []ast.Expr) []string {
	out := make([]string, len(args))
	k := &keyer{info: w.info, params: w.params}
	for i, a := range args {
		switch t := w.info.TypeOf(a); {
		case t != nil && isContext(t):
		case isNil(w.info, a):
			out[i] = "nil"
		case handleOf(w.info.TypeOf(a)) == handleTx:
			if t, ok := w.handleOK(a); ok {
				if t < 0 {
					out[i] = "tx"
				} else {
					out[i] = fmt.Sprintf("p%d", t)
				}
			}
		default:
			if s, ok := k.key(a); ok && paramKey.MatchString(s) {
				out[i] = s
			}
		}
	}
	return out
}

func recvType(fn *types.Func) types.Type {
	sig, ok := fn.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return types.Typ[types.Invalid]
	}
	return sig.Recv().Type()
}

// handleOK reports whether a database handle or transaction may be judged
// here: a database, or a transaction begun in this function (or for this
// literal). When summarizing, a transaction parameter is passed on to the
// caller (txParam).
func (w *cbcWalker) handleOK(x ast.Expr) (txParam int, ok bool) {
	switch handleOf(w.info.TypeOf(x)) {
	case handleDB:
		return -1, true
	case handleTx:
		id, isID := ast.Unparen(x).(*ast.Ident)
		if !isID {
			return 0, false
		}
		obj := w.info.Uses[id]
		if w.txs[obj] {
			return -1, true
		}
		if i, isParam := w.params[obj]; isParam {
			return i, true
		}
	}
	return 0, false
}

// stmtOf resolves a prepared statement: a local prepared from a constant
// query, a field prepared with one, tx.Stmt(s), or a helper binding a
// statement to a transaction (TxStmt(tx, s)).
func (w *cbcWalker) stmtOf(e ast.Expr) (stmtInfo, bool) {
	e = ast.Unparen(e)
	switch e := e.(type) {
	case *ast.Ident:
		st, ok := w.stmtq[w.info.Uses[e]]
		return st, ok
	case *ast.SelectorExpr:
		if v := fieldVar(w.info, e); v != nil {
			if q, ok := w.sp.fields[v]; ok {
				return stmtInfo{query: q, txParam: -1}, true
			}
		}
	case *ast.CallExpr:
		fn, ok := typeutil.Callee(w.info, e).(*types.Func)
		if !ok {
			return stmtInfo{}, false
		}
		if prepareMethods[fn.Name()] && fn.Pkg() != nil && sqlPackage(fn.Pkg().Path()) {
			sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr)
			if !ok {
				return stmtInfo{}, false
			}
			tx, ok := w.handleOK(sel.X)
			if !ok {
				return stmtInfo{}, false
			}
			for _, a := range e.Args {
				if t := w.info.TypeOf(a); t != nil && isContext(t) {
					continue
				}
				q, ok := w.sp.constString(w.strs, a)
				return stmtInfo{query: q, txParam: tx}, ok
			}
			return stmtInfo{}, false
		}
		if strings.HasPrefix(fn.Name(), "Stmt") && fn.Pkg() != nil && sqlPackage(fn.Pkg().Path()) && len(e.Args) > 0 {
			sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr)
			if !ok || handleOf(w.info.TypeOf(sel.X)) != handleTx {
				return stmtInfo{}, false
			}
			tx, ok := w.handleOK(sel.X)
			if !ok {
				return stmtInfo{}, false
			}
			st, ok := w.stmtOf(e.Args[len(e.Args)-1])
			if !ok || (st.txParam >= 0 && tx >= 0 && st.txParam != tx) {
				return stmtInfo{}, false
			}
			if tx >= 0 {
				st.txParam = tx
			}
			return st, true
		}
		if ix, ok := w.sp.stmtFunc(fn); ok && ix[0] < len(e.Args) && ix[1] < len(e.Args) {
			st, ok := w.stmtOf(e.Args[ix[1]])
			if !ok {
				return stmtInfo{}, false
			}
			if isNil(w.info, e.Args[ix[0]]) {
				return st, true
			}
			tx, ok := w.handleOK(e.Args[ix[0]])
			if !ok || (st.txParam >= 0 && tx >= 0 && st.txParam != tx) {
				return stmtInfo{}, false
			}
			if tx >= 0 {
				st.txParam = tx
			}
			return st, true
		}
	}
	return stmtInfo{}, false
}

// sqlAccess recognizes a SELECT (isRead), an UPDATE (isRead: its
// affected-row count tells whether the row was there) or an INSERT that
// does not resolve conflicts, run with a constant query on a database
// handle, a transaction begun here or a prepared statement.
func (w *cbcWalker) sqlAccess(call *ast.CallExpr) (a *cbcAccess, isRead bool) {
	fn, ok := typeutil.Callee(w.info, call).(*types.Func)
	if !ok || (!queryMethods[fn.Name()] && !execMethods[fn.Name()]) {
		return nil, false
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil, false
	}
	var q string
	var args []ast.Expr
	tx := -1
	a = &cbcAccess{call: call}
	switch h := handleOf(w.info.TypeOf(sel.X)); {
	case h == handleDB || h == handleTx:
		t, ok := w.handleOK(sel.X)
		if !ok {
			// A transaction begun elsewhere may be serializable: say nothing.
			return nil, false
		}
		tx = t
		a.onDB = h == handleDB
		if id, isID := ast.Unparen(sel.X).(*ast.Ident); isID && h == handleTx && w.txs[w.info.Uses[id]] {
			a.tx = w.info.Uses[id]
		}
		qi, query, ok := queryArg(w.info, call, func(e ast.Expr) (string, bool) { return w.sp.constString(w.strs, e) })
		if !ok {
			return nil, false
		}
		q, args = query, call.Args[qi+1:]
		a.query, _ = ast.Unparen(call.Args[qi]).(*ast.BasicLit)
	case isStmtType(w.info.TypeOf(sel.X)):
		st, ok := w.stmtOf(sel.X)
		if !ok {
			return nil, false
		}
		q, tx = normSQL(st.query), st.txParam
		for i, arg := range call.Args {
			if t := w.info.TypeOf(arg); t != nil && isContext(t) {
				continue
			}
			if i <= 1 && (fn.Name() == "Get" || fn.Name() == "GetContext" || fn.Name() == "Select" || fn.Name() == "SelectContext") {
				if _, isAddr := ast.Unparen(arg).(*ast.UnaryExpr); isAddr && len(args) == 0 {
					continue // sqlx Stmt.Get(&dest, args...)
				}
			}
			args = append(args, arg)
		}
	default:
		return nil, false
	}
	switch {
	case isSelect(q) && queryMethods[fn.Name()]:
		a.table, isRead = selectTable(q), true
	case isUpdate(q) && (execMethods[fn.Name()] || (queryMethods[fn.Name()] && !hasWord(q, "RETURNING"))):
		if !execMethods[fn.Name()] {
			return nil, false
		}
		a.table, isRead, a.update = updateTable(q), true, true
	case isInsert(q) && !insertResolvesConflict(q):
		a.table = insertTable(q)
	default:
		return nil, false
	}
	if a.table == "" {
		return nil, false
	}
	a.txParam = tx
	k := &keyer{info: w.info, params: w.params}
	for _, arg := range args {
		a.keys = append(a.keys, argKeys(k, arg)...)
	}
	if len(a.keys) == 0 {
		return nil, false
	}
	a.pgsql = strings.Contains(q, "$1") || strings.HasPrefix(fn.Pkg().Path(), "github.com/jackc/pgx/")
	return a, isRead
}

// assign records which variables now hold what a read returned, and which
// hold a transaction begun here.
func (w *cbcWalker) assign(lhs, rhs []ast.Expr) {
	reads := w.readsIn(rhs...)
	begun, sqlite := false, false
	lv := levelDefault
	if len(rhs) == 1 {
		if call, ok := ast.Unparen(rhs[0]).(*ast.CallExpr); ok {
			if fn, ok := typeutil.Callee(w.info, call).(*types.Func); ok && strings.HasPrefix(fn.Name(), "Begin") && fn.Pkg() != nil && sqlPackage(fn.Pkg().Path()) {
				begun = true
				lv = w.beginLevel(call)
				if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
					if id, ok := ast.Unparen(sel.X).(*ast.Ident); ok {
						sqlite = sqliteOpened(w.info, w.pass.Files, w.info.Uses[id])
					}
				}
			}
		}
	}
	for i, l := range lhs {
		id, ok := ast.Unparen(l).(*ast.Ident)
		if !ok {
			continue
		}
		obj := w.info.ObjectOf(id)
		if obj == nil {
			continue
		}
		if begun && handleOf(obj.Type()) == handleTx {
			w.txs[obj] = true
			w.txLevel[obj] = lv
			if w.sqliteTxs == nil {
				w.sqliteTxs = map[types.Object]bool{}
			}
			w.sqliteTxs[obj] = sqlite
		}
		var str string
		strOK := false
		if len(lhs) == len(rhs) && w.sp != nil {
			str, strOK = w.sp.constString(w.strs, rhs[i])
		}
		delete(w.strs, obj)
		if strOK {
			if w.strs == nil {
				w.strs = map[types.Object]string{}
			}
			w.strs[obj] = str
		}
		delete(w.stmtq, obj)
		if len(lhs) == len(rhs) || (len(rhs) == 1 && i == 0) {
			if w.sp != nil && isStmtType(obj.Type()) {
				if st, ok := w.stmtOf(rhs[min(i, len(rhs)-1)]); ok {
					w.stmtq[obj] = st
				}
			}
		}
		if w.fn != nil && len(lhs) == len(rhs) {
			if w.constResult == nil {
				w.constResult = map[types.Object]bool{}
			}
			tv := w.info.Types[rhs[i]]
			w.constResult[obj] = tv.Value != nil || tv.IsNil()
		}
		if len(reads) > 0 && isError(obj.Type()) && w.allUpdates(reads) {
			// The error of an UPDATE says nothing of the row.
			delete(w.derived, obj)
			continue
		}
		if len(reads) > 0 {
			w.derived[obj] = reads
		} else {
			delete(w.derived, obj)
		}
	}
}

func (w *cbcWalker) anySummary(reads []int) bool {
	for _, r := range reads {
		if w.reads[r].summary {
			return true
		}
	}
	return false
}

// answersPresence reports whether one of the reads returns a bool beside
// its error (exists, err := lookup(key)): its presence is in that bool.
func (w *cbcWalker) answersPresence(reads []int) bool {
	for _, r := range reads {
		call := w.reads[r].call
		if call == nil {
			continue
		}
		tup, ok := w.info.TypeOf(call).(*types.Tuple)
		if !ok {
			continue
		}
		for v := range tup.Variables() {
			if isBool(v.Type()) {
				return true
			}
		}
	}
	return false
}

func (w *cbcWalker) allUpdates(reads []int) bool {
	for _, r := range reads {
		if !w.reads[r].update {
			return false
		}
	}
	return true
}

func (w *cbcWalker) deriveAddrs(args []ast.Expr, reads []int) {
	for _, a := range args {
		if u, ok := ast.Unparen(a).(*ast.UnaryExpr); ok && u.Op == token.AND {
			if id, ok := ast.Unparen(u.X).(*ast.Ident); ok {
				if obj := w.info.ObjectOf(id); obj != nil {
					w.derived[obj] = reads
				}
			}
		}
	}
}

// readsIn returns the reads whose results exprs mention: through a
// variable, or by containing the read call.
func (w *cbcWalker) readsIn(exprs ...ast.Expr) []int {
	var out []int
	add := func(rs ...int) {
		for _, r := range rs {
			if !containsInt(out, r) {
				out = append(out, r)
			}
		}
	}
	for _, e := range exprs {
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.Ident:
				if obj := w.info.Uses[n]; obj != nil {
					add(w.derived[obj]...)
					if reads, _, _ := w.flag(obj); len(reads) > 0 {
						add(reads...)
					}
				}
			case *ast.CallExpr:
				for i, r := range w.reads {
					if r.call == n {
						add(i)
					}
				}
			}
			return true
		})
	}
	return out
}

func containsInt(list []int, x int) bool {
	for _, y := range list {
		if y == x {
			return true
		}
	}
	return false
}

// cond returns the reads a condition tests and what its true and false
// branches say about them.
func (w *cbcWalker) cond(e ast.Expr) (reads []int, t, f state) {
	reads = w.readsIn(e)
	if len(reads) == 0 {
		return nil, unknown, unknown
	}
	t, f = w.branches(e)
	return reads, t, f
}

func (w *cbcWalker) branches(e ast.Expr) (t, f state) {
	switch e := ast.Unparen(e).(type) {
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			t, f := w.branches(e.X)
			return f, t
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			at, af := w.branches(e.X)
			bt, bf := w.branches(e.Y)
			return and(at, bt), or(af, bf)
		case token.LOR:
			at, af := w.branches(e.X)
			bt, bf := w.branches(e.Y)
			return or(at, bt), and(af, bf)
		case token.EQL, token.NEQ:
			d, o := e.X, e.Y
			if len(w.readsIn(d)) == 0 {
				d, o = o, d
			}
			if w.httpStatus(d) {
				// resp.StatusCode == http.StatusNotFound; other statuses
				// (a 500, a 401) say nothing of presence.
				if len(w.readsIn(o)) > 0 || !statusNotFound(w.info, o) {
					return unknown, unknown
				}
				if e.Op == token.EQL {
					return absent, notAbsent
				}
				return notAbsent, absent
			}
			if len(w.readsIn(d)) == 0 || len(w.readsIn(o)) > 0 || !w.presenceValue(d) {
				return unknown, unknown
			}
			var eq state // what d == o says
			switch {
			case isNil(w.info, o) && isError(w.info.TypeOf(d)):
				// A store function may return no error for no row; and a
				// read that answers presence in a result of its own
				// (exists, err := lookup(key)) fails with its error, and
				// finds nothing without one: no error says nothing of
				// presence (if err != nil || exists { return err } was
				// taken for a found, the create after it for guarded: a
				// red team's miss).
				if w.anySummary(w.readsIn(d)) || w.answersPresence(w.readsIn(d)) || w.anyKind(w.readsIn(d), "http") {
					// net/http answers a 404 without an error.
					return unknown, unknown
				}
				eq = notAbsent
			case isNil(w.info, o), isZero(w.info, o), notFoundName(o):
				eq = absent
			default:
				return unknown, unknown
			}
			if e.Op == token.EQL {
				return eq, flip(eq)
			}
			return flip(eq), eq
		case token.GTR, token.GEQ, token.LSS, token.LEQ:
			if len(w.readsIn(e.X)) == 0 || len(w.readsIn(e.Y)) > 0 || !w.presenceValue(e.X) {
				return unknown, unknown
			}
			tv := w.info.Types[e.Y]
			if tv.Value == nil {
				return unknown, unknown
			}
			n := tv.Value.ExactString()
			switch {
			case (e.Op == token.GTR && n == "0") || (e.Op == token.GEQ && n == "1"):
				return notAbsent, absent
			case (e.Op == token.LSS && n == "1") || (e.Op == token.LEQ && n == "0"):
				return absent, notAbsent
			}
		}
	case *ast.CallExpr:
		fn, _ := typeutil.Callee(w.info, e).(*types.Func)
		if fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == "errors" && fn.Name() == "Is" && len(e.Args) == 2 {
			if len(w.readsIn(e.Args[0])) > 0 && notFoundName(e.Args[1]) {
				return absent, notAbsent
			}
			return unknown, unknown
		}
		if sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "Next" && len(w.readsIn(sel.X)) > 0 {
			return notAbsent, absent // rows.Next()
		}
		if fn != nil && notFoundText(fn.Name()) && len(e.Args) == 1 && len(w.readsIn(e.Args[0])) > 0 {
			return absent, notAbsent // isNotFound(err)
		}
	case *ast.Ident:
		t := w.info.TypeOf(e)
		if t == nil {
			return unknown, unknown
		}
		if reads, whenTrue, whenFalse := w.flag(w.info.Uses[e]); len(reads) > 0 {
			return whenTrue, whenFalse
		}
		if b, ok := t.Underlying().(*types.Basic); ok && b.Kind() == types.Bool {
			// A boolean a read returned tells presence when its name
			// says so (exists, found, ok, known), or, a neutral name,
			// when the read's does (isKnownCustomer); a flag of another
			// meaning (blocked, allowed) guards no create.
			words := nameWords(e.Name)
			if intersects(words, absenceWords) {
				return unknown, unknown
			}
			if intersects(words, presenceWords) {
				return notAbsent, absent
			}
			for _, ri := range w.readsIn(e) {
				if op := w.reads[ri].op; op != nil {
					ow := nameWords(op.Name)
					if !intersects(ow, absenceWords) && intersects(ow, presenceWords) {
						return notAbsent, absent
					}
				}
			}
		}
	}
	return unknown, unknown
}

// presenceWords are the words of a name that say a thing, or an effect,
// is there already; absenceWords say the opposite, and a flag that holds
// one is not judged.
var (
	presenceWords = []string{"exist", "exists", "found", "ok", "known", "present", "has", "have", "seen", "already",
		"dup", "duplicate", "done", "sent", "notified", "processed", "handled", "created", "registered", "recorded"}
	absenceWords = []string{"not", "no", "missing", "absent", "empty", "new", "unknown", "none"}
	// idWords name a field that is the zero value only in a thing not
	// found (t.ID == "").
	idWords = []string{"id", "key", "uuid", "guid", "count", "n", "len"}
)

// nameWords splits a name into its lower-case words: isKnownCustomer,
// is_known_customer and Box.Get give is, known, customer and box, get.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	prevLower := false
	end := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = nil
		}
	}
	for _, r := range name {
		switch {
		case r == '_' || r == '.' || r == '-':
			end()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			end()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	end()
	return words
}

// presenceValue reports whether a value derived from a read, compared with
// zero, nil or a not-found sentinel, tells whether the thing was found: the
// read's result itself, a length, a count, an error; a field only when it
// identifies the thing (t.ID, t.Key), not a value of it (acct.Balance == 0
// says the account is empty, not absent).
func (w *cbcWalker) presenceValue(d ast.Expr) bool {
	sel, ok := ast.Unparen(d).(*ast.SelectorExpr)
	if !ok {
		return true
	}
	if s, ok := w.info.Selections[sel]; !ok || s.Kind() != types.FieldVal {
		return true
	}
	return intersects(nameWords(sel.Sel.Name), idWords) || intersects(nameWords(sel.Sel.Name), presenceWords)
}

func flip(s state) state {
	switch s {
	case absent:
		return notAbsent
	case notAbsent:
		return absent
	}
	return unknown
}

// and is the state when both conditions hold.
func and(a, b state) state {
	switch {
	case a == notAbsent || b == notAbsent:
		return notAbsent
	case a == absent || b == absent:
		return absent
	}
	return unknown
}

// or is the state when one of two conditions holds, not known which.
func or(a, b state) state {
	if a == b {
		return a
	}
	return unknown
}

func isNil(info *types.Info, e ast.Expr) bool {
	_, ok := info.Types[e]
	return ok && info.Types[e].IsNil()
}

func isZero(info *types.Info, e ast.Expr) bool {
	tv := info.Types[e]
	if tv.Value == nil {
		return false
	}
	switch tv.Value.ExactString() {
	case "0", `""`, "false":
		return true
	}
	return false
}

func isError(t types.Type) bool {
	return t != nil && types.Identical(t, types.Universe.Lookup("error").Type())
}

// notFoundName reports whether e names a not-found sentinel:
// sql.ErrNoRows, pgx.ErrNoRows, ErrNotFound.
func notFoundName(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return notFoundText(e.Name)
	case *ast.SelectorExpr:
		return notFoundText(e.Sel.Name)
	}
	return false
}

func notFoundText(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "norows") || strings.Contains(s, "notfound") || strings.Contains(s, "noresult")
}

func (w *cbcWalker) checkWrite(a *cbcAccess, ctx []guard) {
	if w.params != nil {
		return // summarizing: no reports
	}
	for _, g := range ctx {
		if g.st != absent {
			continue
		}
		for _, ri := range g.reads {
			rd := w.reads[ri]
			if (rd.op == nil) != (a.op == nil) || rd.kind != a.kind || (rd.op == nil && rd.kind != "http" && rd.table != a.table) {
				continue
			}
			if a.kind == "http" && (!lookupOf(rd.url, a.url) || !w.sendsKey(rd, a)) {
				continue
			}
			same := intersects(rd.keys, a.keys)
			if !same && a.op != nil && (len(rd.keys) == 0 || len(a.keys) == 0) {
				same = intersectsObj(rd.vars, a.vars)
			}
			if !same {
				continue
			}
			if a.op == nil && w.checksUniqueError(a.call.End()) {
				return
			}
			if w.outer != nil && (lockedBefore(w.outer, rd.call.Pos()) || w.rowLocked(rd) ||
				semaphoreBefore(w.info, w.outer, rd.call.Pos()) || inSingleflight(w.info, w.outer, rd.call.Pos())) {
				return
			}
			if a.kind == "http" && sentIdempotencyKey(w.outerBody()) {
				return
			}
			if a.kind == "gorm" && (gormUnique(rd, a) || w.gormSerialized(rd.call.Pos())) {
				return
			}
			if a.op == nil && a.kind == "" && w.serializedPair(rd, a) {
				return
			}
			if a.op != nil && w.sp.mentionsSerialization(w.info, w.pass.Files, w.outer, false) {
				// The ops' accesses are not seen here: a lock or a
				// serializable level the function uses may cover them.
				return
			}
			if a.op == nil && a.tx != nil && rd.tx == a.tx && w.sqliteTxs[a.tx] {
				// A SQLite transaction is serializable: of two that
				// both read no row, the second to write fails with
				// SQLITE_BUSY.
				return
			}
			w.report(rd, a)
			return
		}
	}
}

func (w *cbcWalker) report(rd, a *cbcAccess) {
	line := w.pass.Fset.Position(rd.call.Pos()).Line
	d := analysis.Diagnostic{Pos: a.call.Pos(), End: a.call.End()}
	switch a.kind {
	case "http":
		d.Message = fmt.Sprintf("POST %s runs when the GET of %s (line %d) answered 404: two concurrent or redelivered calls can both see 404 and both create; "+
			"send an Idempotency-Key the server deduplicates on, create with PUT on the key, or handle the conflict the server answers",
			renderedURL(a.url), renderedURL(rd.url), line)
		w.r.report(w.pass, d)
		return
	case "gorm":
		d.Message = fmt.Sprintf("Create of %s runs when %s (line %d) found no record for the same key: two concurrent or redelivered calls can both find none and both insert, "+
			"and the model declares no unique index on the key; declare one (gorm:\"uniqueIndex\") and create with Clauses(clause.OnConflict{DoNothing: true}), or handle gorm.ErrDuplicatedKey",
			a.model.Obj().Name(), gormReadName(rd), line)
		w.r.report(w.pass, d)
		return
	}
	if a.op != nil {
		d.Message = fmt.Sprintf("%s after %s on the same key races: two deliveries can both find nothing (line %d) and both create; "+
			"enforce a unique idempotency key at the sink (idem.Store, or a unique constraint with INSERT ... ON CONFLICT DO NOTHING) and drop the check",
			a.op.Name, rd.op.Name, line)
	} else {
		check := fmt.Sprintf("the SELECT from %s (line %d) found no row", rd.table, line)
		if rd.update {
			check = fmt.Sprintf("the UPDATE of %s (line %d) changed no row", rd.table, line)
		}
		d.Message = fmt.Sprintf("INSERT INTO %s runs when %s for the same key: two concurrent or redelivered calls can both see no row and both insert; "+
			"use INSERT ... ON CONFLICT DO NOTHING with a unique constraint on the key, or handle the unique-violation error",
			a.table, check)
		if a.tx != nil && rd.tx == a.tx {
			opts := "&sql.TxOptions{Isolation: sql.LevelSerializable}"
			if t := a.tx.Type(); t != nil && strings.Contains(t.String(), "github.com/jackc/pgx/") {
				opts = "pgx.TxOptions{IsoLevel: pgx.Serializable}"
			}
			d.Message = fmt.Sprintf("INSERT INTO %s runs when %s for the same key: two concurrent or redelivered calls can both see no row and both insert: "+
				"one transaction does not stop it unless it is serializable; use INSERT ... ON CONFLICT DO NOTHING with a unique constraint on the key, "+
				"handle the unique-violation error, or begin the transaction with %s and retry it on a serialization failure",
				a.table, check, opts)
		}
		if a.query != nil && a.pgsql {
			if nv := withOnConflict(a.query); nv != "" {
				d.SuggestedFixes = []analysis.SuggestedFix{{
					Message:   "add ON CONFLICT DO NOTHING (needs a unique constraint on the key)",
					TextEdits: []analysis.TextEdit{{Pos: a.query.Pos(), End: a.query.End(), NewText: []byte(nv)}},
				}}
			}
		}
	}
	w.r.report(w.pass, d)
}

// checksUniqueError reports whether the function, after pos, looks at a
// unique-violation error: the duplicate is then handled at the sink. A
// variable holding what a read returned (exists, scanned from SELECT
// EXISTS) and a query are not such a look.
func (w *cbcWalker) checksUniqueError(pos token.Pos) bool {
	found := false
	ast.Inspect(w.body, func(n ast.Node) bool {
		if found || n == nil || n.End() <= pos {
			return !found && n != nil
		}
		var text string
		switch n := n.(type) {
		case *ast.Ident:
			if len(w.derived[w.info.Uses[n]]) > 0 {
				return true
			}
			text = n.Name
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if q := normSQL(stringValue(n)); isSelect(q) || isInsert(q) || isUpdate(q) {
					return true
				}
			}
			text = n.Value
		default:
			return true
		}
		if n.Pos() < pos {
			return true
		}
		text = strings.ToLower(text)
		for _, m := range []string{"unique", "dup", "23505", "1062", "pgerror", "mysqlerror", "constraint", "conflict", "alreadyexists", "exists"} {
			if strings.Contains(text, m) {
				found = true
			}
		}
		return true
	})
	return found
}

// sqliteOpened reports whether the local variable obj only ever holds a
// database that the package opens with a SQLite driver: each assignment to
// it is sql.Open("sqlite", ...) or "sqlite3" (sqlx.Open, Connect, MustOpen,
// MustConnect alike), it is declared by one of them or by a var without a
// value, and its address is never taken. A parameter, a field, or a
// variable assigned anything else may hold another database.
func sqliteOpened(info *types.Info, files []*ast.File, obj types.Object) bool {
	v, ok := obj.(*types.Var)
	if !ok || v.IsField() || v.Parent() == nil || v.Parent() == v.Pkg().Scope() {
		return false
	}
	declared, good := false, true
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && info.ObjectOf(id) == obj
	}
	opens := func(rhs []ast.Expr, i int) bool {
		if len(rhs) != 1 || i != 0 {
			return false
		}
		call, ok := ast.Unparen(rhs[0]).(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return false
		}
		fn, ok := typeutil.Callee(info, call).(*types.Func)
		if !ok || fn.Pkg() == nil {
			return false
		}
		switch fn.Pkg().Path() + "." + fn.Name() {
		case "database/sql.Open", "github.com/jmoiron/sqlx.Open", "github.com/jmoiron/sqlx.Connect",
			"github.com/jmoiron/sqlx.MustOpen", "github.com/jmoiron/sqlx.MustConnect":
		default:
			return false
		}
		tv := info.Types[call.Args[0]]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			return false
		}
		d := constant.StringVal(tv.Value)
		return d == "sqlite" || d == "sqlite3"
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if !is(l) {
						continue
					}
					if !opens(n.Rhs, i) {
						good = false
					}
					if id := ast.Unparen(l).(*ast.Ident); info.Defs[id] == obj {
						declared = true
					}
				}
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if info.Defs[id] != obj {
						continue
					}
					declared = true
					if len(n.Values) > 0 && !opens(n.Values, i) {
						good = false
					}
				}
			case *ast.UnaryExpr:
				if n.Op == token.AND && is(n.X) {
					good = false
				}
			}
			return good
		})
	}
	return declared && good
}

// lockedBefore reports whether body takes a mutex (Lock, TryLock) before
// pos: one taken after the check, for a cache, serializes nothing of it.
func lockedBefore(body *ast.BlockStmt, pos token.Pos) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found || n == nil || n.Pos() >= pos {
			return false
		}
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && (sel.Sel.Name == "Lock" || sel.Sel.Name == "TryLock") && c.End() <= pos {
				found = true
			}
		}
		return !found
	})
	return found
}

// rowLocked reports whether the function locks rows FOR UPDATE or FOR
// SHARE in a way that may serialize the check rd: in another query (a
// parent row), or in the check itself unless it is PostgreSQL ($n
// placeholders or pgx), which locks no row that is absent.
func (w *cbcWalker) rowLocked(rd *cbcAccess) bool {
	found := false
	ast.Inspect(w.outer, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if found || !ok || lit.Kind != token.STRING {
			return !found
		}
		if v := strings.ToUpper(lit.Value); strings.Contains(v, "FOR UPDATE") || strings.Contains(v, "FOR SHARE") {
			found = rd.op != nil || lit != rd.query || !rd.pgsql
		}
		return !found
	})
	return found
}

// semaphoreBefore reports whether body acquires a channel semaphore before
// pos (sem <- struct{}{}, the channel received from elsewhere in body:
// defer func() { <-sem }()): the check and the create run one delivery at
// a time in the process, as under a Lock, which is not reported either.
// A send of anything else (an event published) is no semaphore.
func semaphoreBefore(info *types.Info, body *ast.BlockStmt, pos token.Pos) bool {
	var sent []types.Object
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil || n.Pos() >= pos {
			return false
		}
		if ss, ok := n.(*ast.SendStmt); ok && ss.End() <= pos {
			if cl, ok := ast.Unparen(ss.Value).(*ast.CompositeLit); ok && len(cl.Elts) == 0 {
				if st, ok := info.TypeOf(cl).Underlying().(*types.Struct); ok && st.NumFields() == 0 {
					if obj := rootObject(info, ss.Chan); obj != nil {
						sent = append(sent, obj)
					}
				}
			}
		}
		return true
	})
	if len(sent) == 0 {
		return false
	}
	released := false
	ast.Inspect(body, func(n ast.Node) bool {
		if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.ARROW && slices.Contains(sent, rootObject(info, u.X)) {
			released = true
		}
		return !released
	})
	return released
}

// rootObject is the variable or field an expression names (sem, s.sem).
func rootObject(info *types.Info, e ast.Expr) types.Object {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return info.Uses[x]
	case *ast.SelectorExpr:
		return info.Uses[x.Sel]
	}
	return nil
}

// inSingleflight reports whether pos lies in a function literal that body
// hands to a singleflight.Group's Do or DoChan
// (golang.org/x/sync/singleflight): the deliveries of one key in the
// process join the one in flight, as under a Lock.
func inSingleflight(info *types.Info, body *ast.BlockStmt, pos token.Pos) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "Do" && sel.Sel.Name != "DoChan") {
			return true
		}
		t := info.TypeOf(sel.X)
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		named, ok := t.(*types.Named)
		if !ok || named.Obj().Name() != "Group" || named.Obj().Pkg() == nil || !strings.HasSuffix(named.Obj().Pkg().Path(), "/singleflight") {
			return true
		}
		for _, a := range c.Args {
			if lit, ok := ast.Unparen(a).(*ast.FuncLit); ok && lit.Pos() <= pos && pos < lit.End() {
				found = true
			}
		}
		return true
	})
	return found
}

// returnsFound reports whether a range loop returns the element it found:
// return t / return t, nil / return &t, nil, outside function literals.
func returnsFound(info *types.Info, rs *ast.RangeStmt) bool {
	v, ok := rs.Value.(*ast.Ident)
	if !ok || info.Defs[v] == nil {
		return false
	}
	elem := info.Defs[v]
	found := false
	ast.Inspect(rs.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			for _, res := range n.Results {
				e := ast.Unparen(res)
				if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
					e = ast.Unparen(u.X)
				}
				if sel, ok := e.(*ast.SelectorExpr); ok {
					e = ast.Unparen(sel.X)
				}
				if id, ok := e.(*ast.Ident); ok && info.Uses[id] == elem {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// keyVars returns the variables the arguments of an op's key are built
// from: the arguments of the parameters its entity mentions (for a read
// without entity=, every argument but a context).
func keyVars(info *types.Info, op *OpFact, call *ast.CallExpr) []types.Object {
	var args []ast.Expr
	if len(op.Entity) == 0 {
		for _, a := range call.Args {
			if t := info.TypeOf(a); t == nil || !isContext(t) {
				args = append(args, a)
			}
		}
	} else {
		for _, e := range op.Entity {
			for _, p := range paramsIn(e, op.Params) {
				if i := indexOf(op.Params, p); i >= 0 && i < len(call.Args) && !(op.Variadic && i == len(op.Params)-1) {
					args = append(args, call.Args[i])
				}
			}
		}
	}
	var out []types.Object
	for _, a := range args {
		ast.Inspect(a, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if v, ok := info.Uses[id].(*types.Var); ok && !v.IsField() && v.Parent() != v.Pkg().Scope() && !isContext(v.Type()) {
					out = append(out, v)
				}
			}
			return true
		})
	}
	return out
}

func intersectsObj(a, b []types.Object) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// terminates reports whether a statement never falls through.
func terminates(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.BlockStmt:
		return len(s.List) > 0 && terminates(s.List[len(s.List)-1])
	case *ast.ReturnStmt, *ast.BranchStmt:
		return true
	case *ast.IfStmt:
		return s.Else != nil && terminates(s.Body) && terminates(s.Else)
	case *ast.ExprStmt:
		if call, ok := s.X.(*ast.CallExpr); ok {
			switch f := ast.Unparen(call.Fun).(type) {
			case *ast.Ident:
				return f.Name == "panic"
			case *ast.SelectorExpr:
				return strings.HasPrefix(f.Sel.Name, "Fatal") || f.Sel.Name == "Exit" || strings.HasPrefix(f.Sel.Name, "Panic")
			}
		}
	}
	return false
}

// countFlags counts the assignments of each boolean variable of the body,
// function literals included; a variable whose address is taken is never
// a flag.
func (w *cbcWalker) countFlags() {
	w.flagCount = map[types.Object]int{}
	w.flagSets = map[types.Object][]flagSet{}
	count := func(e ast.Expr) {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok {
			if obj := w.info.ObjectOf(id); obj != nil && isBool(obj.Type()) {
				w.flagCount[obj]++
			}
		}
	}
	ast.Inspect(w.body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				count(l)
			}
		case *ast.ValueSpec:
			for _, name := range n.Names {
				count(name)
			}
		case *ast.IncDecStmt:
			count(n.X)
		case *ast.RangeStmt:
			if n.Key != nil {
				count(n.Key)
			}
			if n.Value != nil {
				count(n.Value)
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					if obj := w.info.ObjectOf(id); obj != nil {
						w.flagCount[obj] = -1 << 20
					}
				}
			}
		}
		return true
	})
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// setFlag records found = false (a constant assigned to a boolean) with
// the guards of the branch it is in.
func (w *cbcWalker) setFlag(lhs, rhs []ast.Expr, decl bool, ctx []guard) {
	if len(lhs) != 1 || len(rhs) != 1 {
		return
	}
	id, ok := ast.Unparen(lhs[0]).(*ast.Ident)
	if !ok {
		return
	}
	obj := w.info.ObjectOf(id)
	if obj == nil || w.flagCount[obj] <= 0 {
		return
	}
	var val bool
	switch c := ast.Unparen(rhs[0]).(type) {
	case *ast.Ident:
		if c.Name != "true" && c.Name != "false" {
			w.flagCount[obj] = -1 << 20 // not a flag
			return
		}
		if tv := w.info.Types[c]; tv.Value != nil {
			val = constant.BoolVal(tv.Value)
		} else {
			val = c.Name == "true"
		}
	default:
		w.flagCount[obj] = -1 << 20
		return
	}
	w.flagSets[obj] = append(w.flagSets[obj], flagSet{val: val, decl: decl, ctx: ctx, order: len(w.flagSets[obj])})
}

// flag tells what a boolean flag says about some reads, once every
// assignment of it has been seen: when every assignment of a value v is
// on a branch where the reads found nothing, flag == v means absent; when
// v is only its initial value and every other assignment, of !v, is on a
// branch where they found something, flag == v means absent too (or the
// read failed, which the SQL checks treat alike).
func (w *cbcWalker) flag(obj types.Object) (reads []int, whenTrue, whenFalse state) {
	sets := w.flagSets[obj]
	if obj == nil || len(sets) == 0 || len(sets) != w.flagCount[obj] || obj.Pos() < w.body.Pos() || obj.Pos() >= w.body.End() {
		return nil, unknown, unknown
	}
	// readsUnder returns the reads every assignment of sets is guarded on
	// with state st.
	readsUnder := func(sets []flagSet, st state) []int {
		var common []int
		for i, s := range sets {
			var rs []int
			for _, g := range s.ctx {
				if g.st == st {
					rs = append(rs, g.reads...)
				}
			}
			if i == 0 {
				common = rs
				continue
			}
			var keep []int
			for _, r := range common {
				if containsInt(rs, r) {
					keep = append(keep, r)
				}
			}
			common = keep
		}
		return common
	}
	for _, v := range []bool{true, false} {
		var same, other []flagSet
		for _, s := range sets {
			if s.val == v {
				same = append(same, s)
			} else {
				other = append(other, s)
			}
		}
		rs := []int(nil)
		if len(same) > 0 {
			rs = readsUnder(same, absent)
		}
		if len(rs) == 0 && len(same) == 1 && same[0].decl && same[0].order == 0 && len(other) > 0 {
			rs = readsUnder(other, notAbsent)
		}
		if len(rs) > 0 {
			if v {
				return rs, absent, unknown
			}
			return rs, unknown, absent
		}
	}
	return nil, unknown, unknown
}

func (w *cbcWalker) sig() (*types.Signature, bool) {
	if w.fn == nil {
		return nil, false
	}
	sig, ok := w.fn.Type().(*types.Signature)
	return sig, ok
}

func anyParamKey(args []string) bool {
	for _, a := range args {
		if paramKey.MatchString(a) {
			return true
		}
	}
	return false
}
