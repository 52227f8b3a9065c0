package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// TxFuncFact is exported for a function that begins a transaction at the
// default isolation level and passes it to one of its function parameters,
// such as withTx(ctx, db, func(tx *sql.Tx) error). A literal passed there
// runs in a transaction begun for it.
type TxFuncFact struct {
	Param int // index of the function parameter that receives the transaction
}

// AFact marks TxFuncFact as an analysis fact.
func (*TxFuncFact) AFact() {}

// String describes the fact for tests and debugging.
func (f *TxFuncFact) String() string { return fmt.Sprintf("runs param %d in a transaction", f.Param) }

// StmtFuncFact is exported for a function that returns a prepared
// statement bound to a transaction argument, or the statement itself when
// the transaction is nil: func TxStmt(tx *sql.Tx, s *sql.Stmt) *sql.Stmt.
type StmtFuncFact struct {
	Tx, Stmt int // parameter indices
}

// AFact marks StmtFuncFact as an analysis fact.
func (*StmtFuncFact) AFact() {}

// String describes the fact for tests and debugging.
func (f *StmtFuncFact) String() string {
	return fmt.Sprintf("binds stmt param %d to tx param %d", f.Stmt, f.Tx)
}

// SQLAccess is one SELECT (or UPDATE) or INSERT a function runs, keyed by
// its parameters: a key is "p<i>" or "p<i>.Field", the i-th parameter
// (receiver excluded).
type SQLAccess struct {
	Table  string
	Keys   []string
	Tx     int  // parameter holding the transaction it runs in, or -1
	Update bool // an UPDATE whose affected-row count tells presence

	// A call through an interface method whose implementations were not
	// visible where the function was summarized (Via is
	// "pkgpath.Interface.Method"): resolved where they are. Args renders
	// each argument: a parameter key, "nil", "tx" (a transaction of the
	// function's own), or "". Read says the call is the function's read.
	Via  string
	Args []string
	Read bool
}

// SQLFuncFact summarizes what a function reads and inserts, so that a
// caller that checks through one function and creates through another is
// judged like the inline case. A read is summarized only when the function
// runs one read, no insert, and returns only what the read produced (or
// constants); an insert only when the function neither serializes nor
// handles a unique violation.
type SQLFuncFact struct {
	Reads  []SQLAccess
	Writes []SQLAccess
	Calls  []SQLAccess // through interfaces, resolved where implementations are known
}

// AFact marks SQLFuncFact as an analysis fact.
func (*SQLFuncFact) AFact() {}

// String lists the reads, inserts and pending calls; two summaries agree
// when their strings are equal.
func (f *SQLFuncFact) String() string {
	var parts []string
	access := func(verb string, a SQLAccess) string {
		s := verb + " " + a.Table + "(" + strings.Join(a.Keys, ",") + ")"
		if a.Tx >= 0 {
			s += fmt.Sprintf(" in tx p%d", a.Tx)
		}
		if a.Update {
			s += " by update"
		}
		return s
	}
	for _, r := range f.Reads {
		parts = append(parts, access("reads", r))
	}
	for _, w := range f.Writes {
		parts = append(parts, access("inserts", w))
	}
	for _, c := range f.Calls {
		role := "writes"
		if c.Read {
			role = "reads"
		}
		parts = append(parts, role+" via "+c.Via+"("+strings.Join(c.Args, ",")+")")
	}
	return strings.Join(parts, "; ")
}

// SQLPkgFact marks a package that exports SQL facts: a package importing
// it may check and create through its functions without importing a SQL
// driver itself.
type SQLPkgFact struct {
	Funcs int // functions with SQL facts
}

// AFact marks SQLPkgFact as an analysis fact.
func (*SQLPkgFact) AFact() {}

// String describes the fact for tests and debugging.
func (*SQLPkgFact) String() string { return "sql facts" }

// SQLImplFact is exported for a package whose types implement interfaces
// of their module with methods that have SQL summaries: where the
// interface is called, the implementations may not be visible (a table
// type that only a constructor returns as the interface).
type SQLImplFact struct {
	Impls []SQLImpl
}

// SQLImpl says that Type implements Iface; Methods holds the summaries of
// its methods that have one, sorted by name.
type SQLImpl struct {
	Iface   string // "pkgpath.Name"
	Type    string // "pkgpath.Name"
	Methods []SQLMethod
}

// SQLMethod is the summary of one method of an implementation.
type SQLMethod struct {
	Name string
	Sum  SQLFuncFact
}

func (i *SQLImpl) method(name string) (SQLFuncFact, bool) {
	for _, m := range i.Methods {
		if m.Name == name {
			return m.Sum, true
		}
	}
	return SQLFuncFact{}, false
}

// AFact marks SQLImplFact as an analysis fact.
func (*SQLImplFact) AFact() {}

// String lists the implementations recorded.
func (f *SQLImplFact) String() string {
	var parts []string
	for _, i := range f.Impls {
		parts = append(parts, i.Type+" implements "+i.Iface)
	}
	return strings.Join(parts, "; ")
}

// sqlFacts computes the SQL facts of a package (transaction helpers,
// statement helpers, summaries of what functions read and insert) for
// checkbeforecreate. Its result is the package's *sqlPkg, or nil when the
// package uses no SQL.
var sqlFacts = &analysis.Analyzer{
	Name:       "sqlfacts",
	Doc:        "summarize what functions read and insert in SQL",
	URL:        docURL + "#hdr-checkbeforecreate",
	Requires:   []*analysis.Analyzer{Directives},
	Run:        runSQLFacts,
	FactTypes:  []analysis.Fact{new(TxFuncFact), new(StmtFuncFact), new(SQLFuncFact), new(SQLPkgFact), new(SQLImplFact), new(LockFact)},
	ResultType: reflect.TypeFor[*sqlPkg](),
}

func runSQLFacts(pass *analysis.Pass) (res any, err error) {
	// When in doubt, say nothing: an unforeseen shape of code leaves the
	// package without SQL facts rather than stopping go vet.
	defer func() {
		if recover() != nil {
			res, err = (*sqlPkg)(nil), nil
		}
	}()
	direct, viaFacts := usesSQL(pass)
	if !direct && !viaFacts {
		return (*sqlPkg)(nil), nil
	}
	p := newSQLPkg(pass)
	p.prepare()
	p.summarize(pass.ResultOf[Directives].(*ops))
	p.exportImpls()
	if n := len(p.summaries) + len(p.txFuncs) + len(p.stmtFuncs) + len(p.locks); viaFacts || n > 0 {
		pass.ExportPackageFact(&SQLPkgFact{Funcs: n})
	}
	return p, nil
}

// sqlPkg holds what the package knows about SQL beyond single calls.
type sqlPkg struct {
	pass      *analysis.Pass
	txFuncs   map[*types.Func]int
	stmtFuncs map[*types.Func][2]int
	prefixers map[*types.Func]bool
	summaries map[*types.Func]*SQLFuncFact
	locks     map[*types.Func]LockFact // functions that take a database lock (LockFact)
	fields    map[*types.Var]string    // statement fields prepared with a constant query
	badFields map[*types.Var]bool
	impls     map[*types.Func]*SQLFuncFact // interface methods resolved
	implFound map[*types.Func]bool         // some implementation of the method is known
	implsOf   map[types.Type][]types.Type  // visible types implementing an interface
	ext       map[*types.Func]*SQLFuncFact // imported summaries, expanded here
	implTypes []*types.Named               // concrete types visible to the package
	pkgs      map[string]*types.Package    // packages visible, by path
	implIndex map[string][]SQLImpl         // SQLImplFacts of dependencies, by interface
}

func newSQLPkg(pass *analysis.Pass) *sqlPkg {
	return &sqlPkg{
		pass:      pass,
		txFuncs:   map[*types.Func]int{},
		stmtFuncs: map[*types.Func][2]int{},
		prefixers: map[*types.Func]bool{},
		summaries: map[*types.Func]*SQLFuncFact{},
		locks:     map[*types.Func]LockFact{},
		fields:    map[*types.Var]string{},
		badFields: map[*types.Var]bool{},
		impls:     map[*types.Func]*SQLFuncFact{},
		implFound: map[*types.Func]bool{},
		implsOf:   map[types.Type][]types.Type{},
		ext:       map[*types.Func]*SQLFuncFact{},
	}
}

// usesSQL reports whether the package imports a SQL package or a package
// with SQL facts (itself, or through its imports: a layer over a store).
func usesSQL(pass *analysis.Pass) (direct, viaFacts bool) {
	for _, imp := range pass.Pkg.Imports() {
		if sqlPackage(imp.Path()) || builderPackage(imp.Path()) {
			direct = true
		}
		if pass.ImportPackageFact(imp, new(SQLPkgFact)) {
			viaFacts = true
		}
	}
	return direct, viaFacts
}

func (p *sqlPkg) txParam(fn *types.Func) (int, bool) {
	fn = fn.Origin()
	if i, ok := p.txFuncs[fn]; ok {
		return i, true
	}
	if fn.Pkg() != nil {
		switch path := fn.Pkg().Path(); {
		case strings.HasPrefix(path, "github.com/jackc/pgx/"):
			// pgx.BeginFunc(ctx, db, fn), pgx.BeginTxFunc(ctx, db, opts, fn),
			// (*pgxpool.Pool).BeginFunc(ctx, fn) in older versions.
			sig := fn.Type().(*types.Signature)
			if (fn.Name() == "BeginFunc" || fn.Name() == "BeginTxFunc") && sig.Params().Len() > 0 {
				return sig.Params().Len() - 1, true
			}
		}
	}
	if fn.Pkg() == p.pass.Pkg || fn.Pkg() == nil {
		return 0, false
	}
	var f TxFuncFact
	if p.pass.ImportObjectFact(fn, &f) {
		return f.Param, true
	}
	return 0, false
}

func (p *sqlPkg) stmtFunc(fn *types.Func) ([2]int, bool) {
	fn = fn.Origin()
	if s, ok := p.stmtFuncs[fn]; ok {
		return s, true
	}
	if fn.Pkg() == p.pass.Pkg || fn.Pkg() == nil {
		return [2]int{}, false
	}
	var f StmtFuncFact
	if p.pass.ImportObjectFact(fn, &f) {
		return [2]int{f.Tx, f.Stmt}, true
	}
	return [2]int{}, false
}

// summary returns what fn reads and inserts, if known. A method of an
// interface resolves to the implementations visible to the package when
// they all agree.
func (p *sqlPkg) summary(fn *types.Func) *SQLFuncFact {
	return p.summaryDepth(fn, 0)
}

func (p *sqlPkg) summaryDepth(fn *types.Func, depth int) *SQLFuncFact {
	fn = fn.Origin()
	if s, ok := p.summaries[fn]; ok {
		return p.expand(s, depth)
	}
	if fn.Pkg() == nil {
		return nil
	}
	if fn.Pkg() != p.pass.Pkg {
		if s, ok := p.ext[fn]; ok {
			if s != nil {
				return s
			}
		} else {
			var f SQLFuncFact
			if p.pass.ImportObjectFact(fn, &f) {
				s := p.expand(&f, depth)
				p.ext[fn] = s
				return s
			}
			p.ext[fn] = nil
		}
	}
	if sig := fn.Type().(*types.Signature); sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) && depth < 4 {
		return p.ifaceSummary(fn, depth)
	}
	return nil
}

// expand resolves the calls through interfaces of a summary that can be
// resolved here; the others stay pending.
func (p *sqlPkg) expand(f *SQLFuncFact, depth int) *SQLFuncFact {
	if len(f.Calls) == 0 || depth >= 4 {
		return f
	}
	out := &SQLFuncFact{Reads: f.Reads, Writes: f.Writes}
	for _, c := range f.Calls {
		m := p.lookupMethod(c.Via)
		var s *SQLFuncFact
		if m != nil {
			s = p.summaryDepth(m, depth+1)
		}
		if s == nil || len(s.Calls) > 0 {
			out.Calls = append(out.Calls, c)
			continue
		}
		src := s.Writes
		if c.Read {
			src = s.Reads
		}
		for _, a := range src {
			if na, ok := composeAccess(a, c.Args); ok {
				if c.Read {
					out.Reads = append(out.Reads, na)
				} else {
					out.Writes = append(out.Writes, na)
				}
			}
		}
	}
	return out
}

// composeAccess renders an access of a callee in terms of the caller's
// parameters, given how the caller rendered each argument.
func composeAccess(a SQLAccess, args []string) (SQLAccess, bool) {
	arg := func(key string) (string, bool) {
		if !paramKey.MatchString(key) {
			return "", false
		}
		idx, rest := key[1:], ""
		if i := strings.IndexByte(idx, '.'); i >= 0 {
			idx, rest = idx[:i], idx[i:]
		}
		n, err := strconv.Atoi(idx)
		if err != nil || n >= len(args) || !paramKey.MatchString(args[n]) {
			return "", false
		}
		return args[n] + rest, true
	}
	out := SQLAccess{Table: a.Table, Tx: -1, Update: a.Update}
	for _, k := range a.Keys {
		if s, ok := arg(k); ok {
			out.Keys = append(out.Keys, s)
		}
	}
	if len(out.Keys) == 0 {
		return out, false
	}
	if a.Tx >= 0 {
		if a.Tx >= len(args) {
			return out, false
		}
		switch t := args[a.Tx]; {
		case t == "nil" || t == "tx":
		case paramKey.MatchString(t) && !strings.Contains(t, "."):
			out.Tx, _ = strconv.Atoi(t[1:])
		default:
			return out, false
		}
	}
	return out, true
}

// viaOf names an interface method: "pkgpath.Interface.Method".
func viaOf(m *types.Func) string {
	sig := m.Type().(*types.Signature)
	if sig.Recv() == nil {
		return ""
	}
	n, ok := types.Unalias(sig.Recv().Type()).(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return ""
	}
	return n.Obj().Pkg().Path() + "." + n.Obj().Name() + "." + m.Name()
}

// visiblePkgs returns the packages the package imports, transitively, by
// path.
func (p *sqlPkg) visiblePkgs() map[string]*types.Package {
	if p.pkgs != nil {
		return p.pkgs
	}
	p.pkgs = map[string]*types.Package{}
	var visit func(pkg *types.Package)
	visit = func(pkg *types.Package) {
		if _, seen := p.pkgs[pkg.Path()]; seen {
			return
		}
		p.pkgs[pkg.Path()] = pkg
		for _, imp := range pkg.Imports() {
			visit(imp)
		}
	}
	visit(p.pass.Pkg)
	return p.pkgs
}

// lookupMethod finds the interface method named by via.
func (p *sqlPkg) lookupMethod(via string) *types.Func {
	i := strings.LastIndexByte(via, '.')
	if i < 0 {
		return nil
	}
	j := strings.LastIndexByte(via[:i], '.')
	if j < 0 {
		return nil
	}
	pkg := p.visiblePkgs()[via[:j]]
	if pkg == nil {
		return nil
	}
	tn, ok := pkg.Scope().Lookup(via[j+1 : i]).(*types.TypeName)
	if !ok {
		return nil
	}
	obj, _, _ := types.LookupFieldOrMethod(tn.Type(), false, pkg, via[i+1:])
	m, _ := obj.(*types.Func)
	return m
}

// modulePrefix approximates the module of a package path: its first
// element when that has no dot, else its first three (host/org/repo) or
// two elements.
func modulePrefix(path string) string {
	parts := strings.Split(path, "/")
	n := 1
	if strings.Contains(parts[0], ".") {
		n = 2
		if parts[0] == "github.com" || parts[0] == "gitlab.com" || parts[0] == "bitbucket.org" || parts[0] == "codeberg.org" {
			n = 3
		}
	}
	if n > len(parts) {
		n = len(parts)
	}
	return strings.Join(parts[:n], "/")
}

// exportImpls exports, for the package's types, the interfaces of the
// module they implement, with the summaries of their methods: a type with
// none makes a call through the interface unknown.
func (p *sqlPkg) exportImpls() {
	mod := modulePrefix(p.pass.Pkg.Path())
	// What the direct imports recorded, for the module: package facts are
	// read from direct imports only, so each package passes them on.
	var out []SQLImpl
	have := map[[2]string]bool{}
	for _, imp := range p.pass.Pkg.Imports() {
		var f SQLImplFact
		if !p.pass.ImportPackageFact(imp, &f) {
			continue
		}
		for _, i := range f.Impls {
			k := [2]string{i.Iface, i.Type}
			if !have[k] && modulePrefix(i.Iface) == mod {
				have[k] = true
				out = append(out, i)
			}
		}
	}
	var ifaces []*types.TypeName
	for path, pkg := range p.visiblePkgs() {
		if modulePrefix(path) != mod {
			continue
		}
		for _, name := range pkg.Scope().Names() {
			if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && types.IsInterface(tn.Type()) {
				if it, ok := tn.Type().Underlying().(*types.Interface); ok && it.NumMethods() >= 2 {
					ifaces = append(ifaces, tn)
				}
			}
		}
	}
	slices.SortFunc(ifaces, func(a, b *types.TypeName) int {
		return strings.Compare(a.Pkg().Path()+"."+a.Name(), b.Pkg().Path()+"."+b.Name())
	})
	// The package's own types, all of them (one without summaries makes
	// the interface unknown), and the exported types of its direct imports
	// in the module that have summaries: an importer that only sees the
	// interface in export data learns of them here.
	var types_ []*types.Named
	addScope := func(pkg *types.Package, own bool) {
		for _, name := range pkg.Scope().Names() {
			tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
			if !ok || tn.IsAlias() || types.IsInterface(tn.Type()) || (!own && !tn.Exported()) {
				continue
			}
			n, ok := tn.Type().(*types.Named)
			if !ok || n.NumMethods() == 0 {
				continue
			}
			if !own {
				has := false
				for i := 0; i < n.NumMethods() && !has; i++ {
					has = p.pass.ImportObjectFact(n.Method(i), new(SQLFuncFact))
				}
				if !has {
					continue
				}
			}
			types_ = append(types_, n)
		}
	}
	addScope(p.pass.Pkg, true)
	for _, imp := range p.pass.Pkg.Imports() {
		if modulePrefix(imp.Path()) == mod {
			addScope(imp, false)
		}
	}
	for _, n := range types_ {
		for _, itn := range ifaces {
			it := itn.Type().Underlying().(*types.Interface)
			var t types.Type = n
			if !types.Implements(t, it) {
				t = types.NewPointer(n)
				if !types.Implements(t, it) {
					continue
				}
			}
			impl := SQLImpl{Iface: itn.Pkg().Path() + "." + itn.Name(), Type: n.Obj().Pkg().Path() + "." + n.Obj().Name()}
			k := [2]string{impl.Iface, impl.Type}
			if have[k] {
				continue
			}
			delegates := false
			for i := 0; i < it.NumMethods(); i++ {
				obj, _, _ := types.LookupFieldOrMethod(t, true, n.Obj().Pkg(), it.Method(i).Name())
				if f, ok := obj.(*types.Func); ok && types.IsInterface(recvType(f)) {
					delegates = true // embeds an interface: its implementations count
				} else if ok {
					if s := p.summary(f); s != nil {
						impl.Methods = append(impl.Methods, SQLMethod{Name: it.Method(i).Name(), Sum: *s})
					}
				}
			}
			if !delegates {
				have[k] = true
				out = append(out, impl)
			}
		}
	}
	if len(out) > 0 {
		slices.SortFunc(out, func(a, b SQLImpl) int {
			return strings.Compare(a.Iface+" "+a.Type, b.Iface+" "+b.Type)
		})
		p.pass.ExportPackageFact(&SQLImplFact{Impls: out})
	}
}

// ifaceSummary resolves an interface method to the summaries of the
// concrete types visible to the package (declared in it or in a package it
// imports, transitively) that implement the interface. When one of them
// has no summary for the method, or two disagree, the call is unknown.
func (p *sqlPkg) ifaceSummary(m *types.Func, depth int) *SQLFuncFact {
	if s, ok := p.impls[m]; ok {
		return s
	}
	p.impls[m] = nil
	iface, ok := m.Type().(*types.Signature).Recv().Type().Underlying().(*types.Interface)
	if !ok || iface.NumMethods() < 2 || m.Pkg() == nil || modulePrefix(m.Pkg().Path()) != modulePrefix(p.pass.Pkg.Path()) {
		return nil // a one-method interface has too many implementations to guess
	}
	if p.implTypes == nil {
		seen := map[*types.Package]bool{}
		mod := modulePrefix(p.pass.Pkg.Path())
		var visit func(pkg *types.Package)
		visit = func(pkg *types.Package) {
			// Implementations in the module: its packages, reached
			// through its packages.
			if seen[pkg] || modulePrefix(pkg.Path()) != mod {
				return
			}
			seen[pkg] = true
			names := pkg.Scope().Names()
			if len(names) == 0 || inGOROOT(p.pass.Fset, pkg.Scope().Lookup(names[0]).Pos()) || strings.HasPrefix(pkg.Path(), "golang.org/x/") {
				return
			}
			for _, name := range names {
				if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && !tn.IsAlias() {
					if n, ok := tn.Type().(*types.Named); ok && !types.IsInterface(n) && n.NumMethods() > 0 {
						p.implTypes = append(p.implTypes, n)
					}
				}
			}
			for _, imp := range pkg.Imports() {
				visit(imp)
			}
		}
		visit(p.pass.Pkg)
		if p.implTypes == nil {
			p.implTypes = []*types.Named{}
		}
	}
	var got *SQLFuncFact
	seen := map[string]bool{}
	agree := func(s *SQLFuncFact) bool {
		if s == nil || (got != nil && got.String() != s.String()) {
			return false
		}
		got = s
		return true
	}
	itn := m.Type().(*types.Signature).Recv().Type()
	impls, cached := p.implsOf[itn]
	if !cached {
		for _, n := range p.implTypes {
			var t types.Type = n
			if !types.Implements(t, iface) {
				t = types.NewPointer(n)
				if !types.Implements(t, iface) {
					continue
				}
			}
			impls = append(impls, t)
		}
		p.implsOf[itn] = impls
	}
	for _, t := range impls {
		n := types.Unalias(derefType(t)).(*types.Named)
		if n.Obj().Pkg() != nil {
			seen[n.Obj().Pkg().Path()+"."+n.Obj().Name()] = true
		}
		p.implFound[m] = true
		obj, _, _ := types.LookupFieldOrMethod(t, true, m.Pkg(), m.Name())
		impl, ok := obj.(*types.Func)
		if !ok {
			return nil
		}
		if types.IsInterface(recvType(impl)) {
			continue // a struct embedding the interface: its implementations count
		}
		if !agree(p.summaryDepth(impl, depth+1)) {
			return nil
		}
		if n.Obj().Pkg() != nil {
			seen[n.Obj().Pkg().Path()+"."+n.Obj().Name()] = true
		}
	}
	// Implementations the package cannot see, from their packages' facts.
	if p.implIndex == nil {
		p.implIndex = map[string][]SQLImpl{}
		for _, pf := range p.pass.AllPackageFacts() {
			if f, ok := pf.Fact.(*SQLImplFact); ok {
				for _, i := range f.Impls {
					p.implIndex[i.Iface] = append(p.implIndex[i.Iface], i)
				}
			}
		}
	}
	via := viaOf(m)
	if via == "" {
		return nil // a method of an unnamed interface
	}
	iname := via[:strings.LastIndexByte(via, '.')]
	for _, i := range p.implIndex[iname] {
		if seen[i.Type] {
			continue
		}
		p.implFound[m] = true
		s, ok := i.method(m.Name())
		if !ok || !agree(p.expand(&s, depth+1)) {
			return nil
		}
	}
	p.impls[m] = got
	return got
}

// prepare computes, for the package's own functions, the tx helpers,
// statement helpers, prefixing helpers and prepared statement fields.
func (p *sqlPkg) prepare() {
	info := p.pass.TypesInfo
	p.computeLocks()
	for _, f := range p.pass.Files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			fn, ok := info.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			if i, ok := p.txFuncParam(info, fn, fd.Body); ok {
				p.txFuncs[fn] = i
				p.pass.ExportObjectFact(fn, &TxFuncFact{Param: i})
			}
			if s, ok := stmtFuncParams(info, fn, fd.Body); ok {
				p.stmtFuncs[fn] = s
				p.pass.ExportObjectFact(fn, &StmtFuncFact{Tx: s[0], Stmt: s[1]})
			}
			if prefixer(info, fn, fd.Body) {
				p.prefixers[fn] = true
			}
		}
	}
	// Statement fields: s.insertStmt, err = db.Prepare(q), or a list of
	// {&s.insertStmt, q} pairs prepared together.
	for _, f := range p.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					v := fieldVar(info, l)
					if v == nil || !isStmtType(v.Type()) {
						continue
					}
					q := ""
					if len(n.Rhs) == 1 {
						q = p.prepareQuery(n.Rhs[0])
					} else if i < len(n.Rhs) {
						q = p.prepareQuery(n.Rhs[i])
					}
					p.setField(v, q)
				}
			case *ast.CompositeLit:
				var v *types.Var
				q, nq := "", 0
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						e = kv.Value
					}
					if u, ok := ast.Unparen(e).(*ast.UnaryExpr); ok && u.Op == token.AND {
						if fv := fieldVar(info, u.X); fv != nil && isStmtType(fv.Type()) {
							v = fv
						}
						continue
					}
					if s, ok := p.constString(nil, e); ok {
						q = s
						nq++
					}
				}
				if v != nil {
					if nq != 1 {
						q = ""
					}
					p.setField(v, q)
				}
			}
			return true
		})
	}
}

func (p *sqlPkg) setField(v *types.Var, q string) {
	if q == "" || p.badFields[v] {
		p.badFields[v] = true
		delete(p.fields, v)
		return
	}
	if old, ok := p.fields[v]; ok && old != q {
		p.badFields[v] = true
		delete(p.fields, v)
		return
	}
	p.fields[v] = q
}

// prepareQuery returns the query of h.Prepare(q) (PrepareContext,
// Preparex, ...) on a SQL handle, or "".
func (p *sqlPkg) prepareQuery(e ast.Expr) string {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return ""
	}
	fn, ok := typeutil.Callee(p.pass.TypesInfo, call).(*types.Func)
	if !ok || !prepareMethods[fn.Name()] || fn.Pkg() == nil || !sqlPackage(fn.Pkg().Path()) {
		return ""
	}
	for _, a := range call.Args {
		if t := p.pass.TypesInfo.TypeOf(a); t != nil && isContext(t) {
			continue
		}
		s, _ := p.constString(nil, a)
		return s
	}
	return ""
}

var prepareMethods = map[string]bool{
	"Prepare": true, "PrepareContext": true, "Preparex": true, "PreparexContext": true,
}

func fieldVar(info *types.Info, e ast.Expr) *types.Var {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	v, ok := info.Uses[sel.Sel].(*types.Var)
	if !ok || !v.IsField() {
		return nil
	}
	return v
}

func isStmtType(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && sqlPackage(n.Obj().Pkg().Path()) && n.Obj().Name() == "Stmt"
}

// txFuncParam reports whether fn begins a transaction at the default
// isolation level and calls one of its function parameters with it.
func (p *sqlPkg) txFuncParam(info *types.Info, fn *types.Func, body *ast.BlockStmt) (int, bool) {
	sig := fn.Type().(*types.Signature)
	params := map[types.Object]int{}
	for i := 0; i < sig.Params().Len(); i++ {
		if _, ok := sig.Params().At(i).Type().Underlying().(*types.Signature); ok {
			params[sig.Params().At(i)] = i
		}
	}
	if len(params) == 0 || p.mentionsSerialization(info, p.pass.Files, body, true) {
		return 0, false
	}
	txs := map[types.Object]bool{}
	bad := false
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 {
			return true
		}
		call, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if !ok {
			return true
		}
		f, ok := typeutil.Callee(info, call).(*types.Func)
		if !ok || !strings.HasPrefix(f.Name(), "Begin") || f.Pkg() == nil || !sqlPackage(f.Pkg().Path()) {
			return true
		}
		// Options must be written here: nil or a literal (a serializable
		// level in it makes the body serialized, above).
		for _, a := range call.Args {
			t := info.TypeOf(a)
			if t == nil || isContext(t) || isNil(info, a) {
				continue
			}
			switch x := ast.Unparen(a).(type) {
			case *ast.CompositeLit:
				continue
			case *ast.UnaryExpr:
				if _, ok := ast.Unparen(x.X).(*ast.CompositeLit); ok && x.Op == token.AND {
					continue
				}
			}
			bad = true
		}
		if id, ok := ast.Unparen(as.Lhs[0]).(*ast.Ident); ok {
			if obj := info.ObjectOf(id); obj != nil && handleOf(obj.Type()) == handleTx {
				txs[obj] = true
			}
		}
		return true
	})
	if bad || len(txs) == 0 {
		return 0, false
	}
	found, other := -1, false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		id, ok := ast.Unparen(call.Fun).(*ast.Ident)
		if !ok {
			return true
		}
		i, ok := params[info.Uses[id]]
		if !ok {
			return true
		}
		withTx := false
		for _, a := range call.Args {
			if aid, ok := ast.Unparen(a).(*ast.Ident); ok && txs[info.Uses[aid]] {
				withTx = true
			}
		}
		if !withTx || (found >= 0 && found != i) {
			other = true
		}
		found = i
		return true
	})
	if found < 0 || other {
		return 0, false
	}
	return found, true
}

// stmtFuncParams reports whether fn(tx, stmt) returns tx.Stmt(stmt) (or
// StmtContext, Stmtx) or the statement itself.
func stmtFuncParams(info *types.Info, fn *types.Func, body *ast.BlockStmt) ([2]int, bool) {
	sig := fn.Type().(*types.Signature)
	if sig.Results().Len() != 1 || !isStmtType(sig.Results().At(0).Type()) {
		return [2]int{}, false
	}
	tx, st := -1, -1
	for i := 0; i < sig.Params().Len(); i++ {
		switch t := sig.Params().At(i).Type(); {
		case handleOf(t) == handleTx:
			tx = i
		case isStmtType(t):
			st = i
		}
	}
	if tx < 0 || st < 0 {
		return [2]int{}, false
	}
	ok := true
	ast.Inspect(body, func(n ast.Node) bool {
		r, isRet := n.(*ast.ReturnStmt)
		if !isRet || len(r.Results) != 1 {
			return true
		}
		e := ast.Unparen(r.Results[0])
		if id, isID := e.(*ast.Ident); isID && info.Uses[id] == sig.Params().At(st) {
			return true
		}
		if call, isCall := e.(*ast.CallExpr); isCall {
			if sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr); isSel && strings.HasPrefix(sel.Sel.Name, "Stmt") {
				if id, isID := ast.Unparen(sel.X).(*ast.Ident); isID && info.Uses[id] == sig.Params().At(tx) {
					return true
				}
			}
		}
		ok = false
		return true
	})
	return [2]int{tx, st}, ok
}

// prefixer reports whether fn(name string) string only decorates its
// argument with something fixed: return prefix + name, or
// fmt.Sprintf("%s%s", prefix, name). Its result names the same table at
// every call with the same constant.
func prefixer(info *types.Info, fn *types.Func, body *ast.BlockStmt) bool {
	sig := fn.Type().(*types.Signature)
	if sig.Params().Len() != 1 || sig.Results().Len() != 1 || len(body.List) != 1 {
		return false
	}
	isStr := func(t types.Type) bool {
		b, ok := t.Underlying().(*types.Basic)
		return ok && b.Kind() == types.String
	}
	if !isStr(sig.Params().At(0).Type()) || !isStr(sig.Results().At(0).Type()) {
		return false
	}
	r, ok := body.List[0].(*ast.ReturnStmt)
	if !ok || len(r.Results) != 1 {
		return false
	}
	param := sig.Params().At(0)
	uses := 0
	okShape := true
	ast.Inspect(r.Results[0], func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if info.Uses[n] == param {
				uses++
			}
		case *ast.CallExpr:
			if f, ok := typeutil.Callee(info, n).(*types.Func); !ok || f.Pkg() == nil || f.Pkg().Path() != "fmt" || f.Name() != "Sprintf" {
				if tv := info.Types[n.Fun]; !tv.IsType() {
					okShape = false
				}
			}
		case *ast.BinaryExpr:
			if n.Op != token.ADD {
				okShape = false
			}
		}
		return true
	})
	return okShape && uses == 1
}

// constString evaluates a string built from constants at run time: a
// constant, a local variable holding one, a concatenation, fmt.Sprintf of
// constants, or a prefixing helper of the package called with a constant
// (rendered as the constant: the table it names is the same at every
// call).
func (p *sqlPkg) constString(locals map[types.Object]string, e ast.Expr) (string, bool) {
	info := p.pass.TypesInfo
	if tv, ok := info.Types[e]; ok && tv.Value != nil {
		if tv.Value.Kind() == constant.String {
			return constant.StringVal(tv.Value), true
		}
		return "", false
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		s, ok := locals[info.Uses[e]]
		return s, ok
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := p.constString(locals, e.X)
		y, ok2 := p.constString(locals, e.Y)
		return x + y, ok1 && ok2
	case *ast.CallExpr:
		fn, ok := typeutil.Callee(info, e).(*types.Func)
		if !ok {
			return "", false
		}
		if p.prefixers[fn.Origin()] && len(e.Args) == 1 {
			return p.constString(locals, e.Args[0])
		}
		if fn.Pkg() == nil || fn.Pkg().Path() != "fmt" || fn.Name() != "Sprintf" || len(e.Args) == 0 || e.Ellipsis.IsValid() {
			return "", false
		}
		format, ok := p.constString(locals, e.Args[0])
		if !ok {
			return "", false
		}
		var args []any
		for _, a := range e.Args[1:] {
			if tv := info.Types[a]; tv.Value != nil && tv.Value.Kind() == constant.Int {
				n, _ := constant.Int64Val(tv.Value)
				args = append(args, n)
				continue
			}
			s, ok := p.constString(locals, a)
			if !ok {
				return "", false
			}
			args = append(args, s)
		}
		out := fmt.Sprintf(format, args...)
		if strings.Contains(out, "%!") {
			return "", false
		}
		return out, true
	}
	return "", false
}

// summarize computes the SQL summaries of the package's functions, to a
// fixed point (a function summarized through another), and exports them.
func (p *sqlPkg) summarize(r *ops) {
	info := p.pass.TypesInfo
	type fdecl struct {
		fd *ast.FuncDecl
		fn *types.Func
	}
	var decls []fdecl
	for _, f := range p.pass.Files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
				decls = append(decls, fdecl{fd, fn})
			}
		}
	}
	for round := 0; round < 3; round++ {
		changed := false
		for _, d := range decls {
			s := p.summarizeFunc(r, d.fd, d.fn)
			old := p.summaries[d.fn]
			if (s == nil) != (old == nil) || (s != nil && s.String() != old.String()) {
				changed = true
				if s == nil {
					delete(p.summaries, d.fn)
				} else {
					p.summaries[d.fn] = s
				}
			}
		}
		if !changed {
			break
		}
	}
	for _, d := range decls {
		if s := p.summaries[d.fn]; s != nil {
			p.pass.ExportObjectFact(d.fn, s)
		}
	}
}

func (p *sqlPkg) summarizeFunc(r *ops, fd *ast.FuncDecl, fn *types.Func) *SQLFuncFact {
	info := p.pass.TypesInfo
	if p.mentionsSerialization(info, p.pass.Files, fd.Body, true) {
		return nil
	}
	sig := fn.Type().(*types.Signature)
	params := map[types.Object]int{}
	for i := 0; i < sig.Params().Len(); i++ {
		params[sig.Params().At(i)] = i
	}
	w := newWalker(p.pass, r, p, fd.Body)
	w.params = params
	w.fn = fn
	w.stmts(fd.Body.List, nil)
	// Inserts in a literal the function hands to a call (a writer or a
	// transaction helper running it) are the function's too: they run in
	// the helper's transaction, or in the one passed along.
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		for _, arg := range call.Args {
			lit, ok := ast.Unparen(arg).(*ast.FuncLit)
			if !ok {
				continue
			}
			tx := -1
			for _, a := range call.Args {
				if handleOf(info.TypeOf(a)) == handleTx && !isNil(info, a) {
					t, ok := w.handleOK(a)
					if !ok {
						tx = -2
					} else if t >= 0 {
						tx = t
					}
				}
			}
			if tx == -2 {
				continue
			}
			sub := newWalker(p.pass, r, p, lit.Body)
			sub.params = params
			for _, field := range lit.Type.Params.List {
				for _, name := range field.Names {
					if obj := info.Defs[name]; obj != nil && handleOf(obj.Type()) == handleTx {
						sub.txs[obj] = true
					}
				}
			}
			sub.stmts(lit.Body.List, nil)
			var subWrites []*cbcAccess
			for _, rd := range sub.reads {
				if rd.via != "" {
					subWrites = append(subWrites, rd) // may write: resolved where known
				}
			}
			for _, wr := range append(subWrites, sub.writes...) {
				if wr.via != "" {
					for i, a := range wr.args {
						if a == "tx" && tx >= 0 {
							wr.args[i] = fmt.Sprintf("p%d", tx)
						}
					}
				} else if wr.txParam < 0 && tx >= 0 {
					wr.txParam = tx
				}
				if !sub.checksUniqueError(wr.call.End()) && !w.checksUniqueError(call.End()) {
					w.writes = append(w.writes, wr)
				}
			}
		}
		return true
	})
	out := &SQLFuncFact{}
	paramKeys := func(keys []string) []string {
		var ks []string
		for _, k := range keys {
			if paramKey.MatchString(k) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	if len(w.reads) == 1 && len(w.writes) == 0 && !w.badReturn && w.returns > 0 && sig.Results().Len() > 0 {
		rd := w.reads[0]
		if rd.via != "" {
			out.Calls = append(out.Calls, SQLAccess{Via: rd.via, Args: rd.args, Read: true, Tx: -1})
		} else if ks := paramKeys(rd.keys); len(ks) > 0 {
			out.Reads = append(out.Reads, SQLAccess{Table: rd.table, Keys: ks, Tx: rd.txParam, Update: rd.update})
		}
	}
	var pending []*cbcAccess
	for _, rd := range w.reads {
		if rd.via != "" {
			pending = append(pending, rd) // a call that may write
		}
	}
	for _, wr := range append(pending, w.writes...) {
		if w.checksUniqueError(wr.call.End()) {
			continue
		}
		if wr.via != "" {
			out.Calls = append(out.Calls, SQLAccess{Via: wr.via, Args: wr.args, Tx: -1})
		} else if ks := paramKeys(wr.keys); len(ks) > 0 {
			out.Writes = append(out.Writes, SQLAccess{Table: wr.table, Keys: ks, Tx: wr.txParam})
		}
	}
	if len(out.Reads)+len(out.Writes)+len(out.Calls) == 0 {
		return nil
	}
	slices.SortFunc(out.Writes, func(a, b SQLAccess) int { return strings.Compare(a.Table, b.Table) })
	return out
}

// paramKey matches a key made of a parameter and its fields only.
var paramKey = regexp.MustCompile(`^p[0-9]+(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// callKeys renders a summary's parameter keys at a call site; nil when
// none can be computed.
func callKeys(k *keyer, call *ast.CallExpr, keys []string) []string {
	var out []string
	for _, key := range keys {
		if !paramKey.MatchString(key) {
			continue
		}
		idx, rest := key[1:], ""
		if i := strings.IndexByte(idx, '.'); i >= 0 {
			idx, rest = idx[:i], idx[i:]
		}
		n, err := strconv.Atoi(idx)
		if err != nil || n >= len(call.Args) {
			continue
		}
		arg := call.Args[n]
		if rest != "" {
			// p0.Serial at a call with T{Serial: serial}: serial.
			if lit := compositeOf(arg); lit != nil {
				arg = nil
				for _, e := range lit.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok && "."+id.Name == rest {
							arg, rest = kv.Value, ""
						}
					}
				}
				if arg == nil {
					continue
				}
			}
		}
		if rest == "" {
			out = append(out, argKeys(k, arg)...)
		} else if s, ok := k.key(arg); ok {
			out = append(out, s+rest)
		}
	}
	return out
}

// compositeOf returns the literal of T{...} or &T{...}, or nil.
func compositeOf(e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

// argKeys returns the keys of a statement argument: its own key, or for a
// struct literal passed to a named query (sqlx NamedExec), the keys of its
// field values.
func argKeys(k *keyer, e ast.Expr) []string {
	if lit := compositeOf(e); lit != nil {
		var out []string
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if s, ok := k.key(el); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if s, ok := k.key(e); ok {
		return []string{s}
	}
	return nil
}
