package analyzer

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"
)

// Calls of an op that do not name it: through a variable bound once to the
// op (find := d.FindTicketTraced; find(ctx, id)), through an entry of a map
// literal bound once and only read (tools["refund"](ctx, id) of tools :=
// map[string]func(...){"refund": d.RefundTraced}), and through a method of
// an interface whose implementations in the module all run the same op.

// how says how a call reached its op.
type how int

const (
	direct   how = iota // the call names the function
	bound               // through a variable or a map entry bound once to it
	viaIface            // through an interface method
)

// resolve is opCall with the way the op was reached.
func (r *ops) resolve(e ast.Expr) (op *OpFact, wrapper bool, fn *types.Func, h how) {
	info := r.pass.TypesInfo
	switch e := e.(type) {
	case *ast.CallExpr:
		fn, _ = calleeFunc(info, e)
		if fn == nil {
			fn, h = r.funcOf(e.Fun, 0)
		}
	case *ast.SelectorExpr, *ast.Ident, *ast.IndexExpr:
		fn, h = r.funcOf(e, 0)
	case *ast.ParenExpr:
		return r.resolve(e.X)
	}
	if fn == nil {
		return nil, false, nil, direct
	}
	fn = fn.Origin()
	if op := r.ops[fn]; op != nil {
		return op, false, fn, h
	}
	if op := r.wrappers[fn]; op != nil {
		return op, true, fn, h
	}
	if impl := r.ifaceImpl(fn); impl != nil {
		if op := r.ops[impl]; op != nil {
			return op, false, impl, viaIface
		}
		return r.wrappers[impl], true, impl, viaIface
	}
	return nil, false, nil, direct
}

// calleeFunc is the function or method a call names (an interface's
// abstract method included), not a function value.
func calleeFunc(info *types.Info, call *ast.CallExpr) (*types.Func, bool) {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		fn, ok := info.Uses[f].(*types.Func)
		return fn, ok
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[f]; ok && sel.Kind() == types.MethodExpr {
			return nil, false // (*T).M(recv, ...): the arguments are shifted
		}
		fn, ok := info.Uses[f.Sel].(*types.Func)
		return fn, ok
	case *ast.IndexExpr, *ast.IndexListExpr: // generic instantiation f[T](...)
		var x ast.Expr
		if ie, ok := f.(*ast.IndexExpr); ok {
			x = ie.X
		} else {
			x = f.(*ast.IndexListExpr).X
		}
		if tv, ok := info.Types[f]; ok && !tv.IsValue() {
			return nil, false
		}
		switch x := ast.Unparen(x).(type) {
		case *ast.Ident:
			fn, ok := info.Uses[x].(*types.Func)
			return fn, ok
		case *ast.SelectorExpr:
			fn, ok := info.Uses[x.Sel].(*types.Func)
			return fn, ok
		}
	}
	return nil, false
}

// funcOf returns the function a function-valued expression denotes: a
// function or method value, or a variable or a map entry bound once to one
// (h is then bound). A method expression ((*T).M) is none: its arguments
// are shifted.
func (r *ops) funcOf(e ast.Expr, depth int) (*types.Func, how) {
	info := r.pass.TypesInfo
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		switch o := info.Uses[e].(type) {
		case *types.Func:
			return o, direct
		case *types.Var:
			if depth < 3 {
				if v := r.boundValue(o); v != nil {
					if fn, _ := r.funcOf(v, depth+1); fn != nil {
						return fn, bound
					}
				}
			}
		}
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[e]; ok && sel.Kind() == types.MethodExpr {
			return nil, direct
		}
		if fn, ok := info.Uses[e.Sel].(*types.Func); ok {
			return fn, direct
		}
	case *ast.IndexExpr:
		// m["refund"] of a map bound once to a literal and only read.
		id, ok := ast.Unparen(e.X).(*ast.Ident)
		if !ok || depth >= 3 {
			return nil, direct
		}
		v, ok := info.Uses[id].(*types.Var)
		if !ok {
			return nil, direct
		}
		lit, ok := ast.Unparen(r.boundValue(v)).(*ast.CompositeLit)
		if !ok || !r.onlyIndexed(v) {
			return nil, direct
		}
		if _, isMap := types.Unalias(info.TypeOf(lit)).Underlying().(*types.Map); !isMap {
			return nil, direct
		}
		k := info.Types[e.Index].Value
		if k == nil {
			return nil, direct
		}
		var val ast.Expr
		for _, elt := range lit.Elts {
			kv, ok := elt.(*ast.KeyValueExpr)
			if !ok {
				return nil, direct
			}
			if kk := info.Types[kv.Key].Value; kk != nil && kk.Kind() == k.Kind() && constant.Compare(kk, token.EQL, k) {
				val = kv.Value
			}
		}
		if val != nil {
			if fn, _ := r.funcOf(val, depth+1); fn != nil {
				return fn, bound
			}
		}
	}
	return nil, direct
}

// binding is what the package binds its variables to: the one value a
// variable is given where it is declared, for variables never assigned
// again nor addressed; and which variables are used other than indexed.
type bindings struct {
	value     map[*types.Var]ast.Expr
	unbound   map[*types.Var]bool // assigned again, addressed, or declared without one value
	notIndexd map[*types.Var]bool // used other than as m[k] read
	// defined is the value a variable is declared with, whatever follows;
	// first the call whose first result declares it (x, err := f()).
	defined map[*types.Var]ast.Expr
	first   map[*types.Var]*ast.CallExpr
}

// definedBy returns the call whose first result defines v (req, err :=
// http.NewRequest(...)), when v is never assigned again nor addressed.
func (r *ops) definedBy(v *types.Var) *ast.CallExpr {
	if v.Pkg() != r.pass.Pkg {
		return nil
	}
	b := r.bindings()
	if b.unbound[v] {
		return nil
	}
	if call, ok := ast.Unparen(b.value[v]).(*ast.CallExpr); ok {
		return call
	}
	return b.first[v]
}

// definedValue returns the expression v is declared with (u := User{...}),
// whatever is assigned to it later: callers check that.
func (r *ops) definedValue(v *types.Var) ast.Expr {
	if v.Pkg() != r.pass.Pkg {
		return nil
	}
	return r.bindings().defined[v]
}

// boundValue returns the expression a local (or unexported package-level)
// variable of the package is bound to, when it is given exactly that one
// value where it is declared and never assigned, incremented nor addressed
// afterwards.
func (r *ops) boundValue(v *types.Var) ast.Expr {
	if v.Pkg() != r.pass.Pkg || v.IsField() {
		return nil
	}
	if v.Parent() == v.Pkg().Scope() && v.Exported() {
		return nil // another package may assign it
	}
	b := r.bindings()
	if b.unbound[v] {
		return nil
	}
	return b.value[v]
}

// onlyIndexed reports whether every use of the variable reads an element
// (m[k]): it is not passed on, copied, ranged over to be changed, nor has
// an element assigned or deleted.
func (r *ops) onlyIndexed(v *types.Var) bool {
	return !r.bindings().notIndexd[v]
}

func (r *ops) bindings() *bindings {
	if r.binds != nil {
		return r.binds
	}
	info := r.pass.TypesInfo
	b := &bindings{value: map[*types.Var]ast.Expr{}, unbound: map[*types.Var]bool{}, notIndexd: map[*types.Var]bool{},
		defined: map[*types.Var]ast.Expr{}, first: map[*types.Var]*ast.CallExpr{}}
	r.binds = b
	varOf := func(e ast.Expr) *types.Var {
		id, ok := ast.Unparen(e).(*ast.Ident)
		if !ok {
			return nil
		}
		v, _ := info.ObjectOf(id).(*types.Var)
		return v
	}
	// Uses that index: m[k] read. Collected first; every other use of a
	// variable marks it.
	indexed := map[*ast.Ident]bool{}
	for _, f := range r.pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					v, _ := info.Defs[name].(*types.Var)
					if v == nil {
						continue
					}
					if len(n.Values) == len(n.Names) {
						b.value[v] = n.Values[i]
						b.defined[v] = n.Values[i]
					} else {
						b.unbound[v] = true
					}
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if ie, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
						// m[k] = v changes the map.
						if v := varOf(ie.X); v != nil {
							b.notIndexd[v] = true
						}
						continue
					}
					v := varOf(l)
					if v == nil {
						continue
					}
					id := ast.Unparen(l).(*ast.Ident)
					if n.Tok == token.DEFINE && info.Defs[id] == v {
						if len(n.Lhs) == len(n.Rhs) {
							b.value[v] = n.Rhs[i]
							b.defined[v] = n.Rhs[i]
						} else if call, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr); ok && i == 0 {
							b.first[v] = call // req, err := http.NewRequest(...)
						}
						continue
					}
					b.unbound[v] = true
				}
			case *ast.IncDecStmt:
				if v := varOf(n.X); v != nil {
					b.unbound[v] = true
				}
			case *ast.RangeStmt:
				if n.Tok == token.ASSIGN {
					for _, x := range []ast.Expr{n.Key, n.Value} {
						if v := varOf(x); v != nil {
							b.unbound[v] = true
						}
					}
				}
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					if v := varOf(n.X); v != nil {
						b.unbound[v] = true
					}
				}
			case *ast.IndexExpr:
				if id, ok := ast.Unparen(n.X).(*ast.Ident); ok {
					indexed[id] = true
				}
			}
			return true
		})
	}
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && !indexed[id] {
			b.notIndexd[v] = true
		}
	}
	return b
}

// ifaceImpl resolves an interface method to the one function its
// implementations in the module run: every concrete type of the module
// visible here (declared in the package or in a package of the module it
// imports, transitively) that implements the interface has the method,
// and each runs the same op, all through the wrapper or all not. A type
// without it annotated, or two that disagree, leave the call unknown, and
// so does an interface of another module or one no visible type
// implements. A method of a type parameter's constraint is not resolved.
func (r *ops) ifaceImpl(m *types.Func) *types.Func {
	recv := recvType(m)
	if _, isTP := recv.(*types.TypeParam); isTP || !types.IsInterface(recv) {
		return nil
	}
	if impl, ok := r.ifaces[m]; ok {
		return impl
	}
	if r.frozen {
		// The analyzers that use the result run at once: after
		// Directives, what it resolved is read, never extended.
		return nil
	}
	if r.ifaces == nil {
		r.ifaces = map[*types.Func]*types.Func{}
	}
	r.ifaces[m] = nil
	if m.Pkg() == nil || modulePrefix(m.Pkg().Path()) != modulePrefix(r.pass.Pkg.Path()) || !r.opMethodName(m.Name()) {
		return nil
	}
	iface, ok := recv.Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var got *types.Func
	var gotOp string
	for _, n := range r.moduleTypes() {
		var t types.Type = n
		if !types.Implements(t, iface) {
			t = types.NewPointer(n)
			if !types.Implements(t, iface) {
				continue
			}
		}
		obj, _, _ := types.LookupFieldOrMethod(t, true, m.Pkg(), m.Name())
		impl, ok := obj.(*types.Func)
		if !ok {
			return nil
		}
		if types.IsInterface(recvType(impl)) {
			continue // a struct embedding the interface: its implementations count
		}
		impl = impl.Origin()
		op, wrapper := r.methodOp(impl)
		if op == nil {
			return nil
		}
		key := op.String() + " " + strings.Join(op.Params, ",")
		if wrapper {
			key += " traced"
		}
		if got != nil && key != gotOp {
			return nil
		}
		got, gotOp = impl, key
	}
	r.ifaces[m] = got
	return got
}

// methodOp finds the op of a concrete method, importing its fact when it
// is declared elsewhere.
func (r *ops) methodOp(fn *types.Func) (*OpFact, bool) {
	if op := r.ops[fn]; op != nil {
		return op, false
	}
	if op := r.wrappers[fn]; op != nil {
		return op, true
	}
	if fn.Pkg() == r.pass.Pkg {
		return nil, false
	}
	var of OpFact
	if r.pass.ImportObjectFact(fn, &of) {
		r.ops[fn] = &of
		return &of, false
	}
	var wf WrapperFact
	if r.pass.ImportObjectFact(fn, &wf) {
		r.wrappers[fn] = &wf.Op
		return &wf.Op, true
	}
	return nil, false
}

// opMethodName reports whether some method known to the package (declared
// here, or recorded as a fact by a package it imports) with this name is an
// op or a wrapper: the cheap test before looking for implementations.
func (r *ops) opMethodName(name string) bool {
	if r.methodNames == nil {
		r.methodNames = map[string]bool{}
		add := func(fn *types.Func) {
			if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
				r.methodNames[fn.Name()] = true
			}
		}
		for fn := range r.ops {
			add(fn)
		}
		for fn := range r.wrappers {
			add(fn)
		}
		for _, f := range r.pass.AllObjectFacts() {
			switch f.Fact.(type) {
			case *OpFact, *WrapperFact:
				if fn, ok := f.Object.(*types.Func); ok {
					add(fn)
				}
			}
		}
	}
	return r.methodNames[name]
}

// moduleTypes returns the named non-interface types with methods declared
// in the package and in the packages of its module it imports,
// transitively.
func (r *ops) moduleTypes() []*types.Named {
	if r.modTypes != nil {
		return r.modTypes
	}
	r.modTypes = []*types.Named{}
	mod := modulePrefix(r.pass.Pkg.Path())
	seen := map[*types.Package]bool{}
	var visit func(pkg *types.Package)
	visit = func(pkg *types.Package) {
		if seen[pkg] || modulePrefix(pkg.Path()) != mod {
			return
		}
		seen[pkg] = true
		for _, name := range pkg.Scope().Names() {
			if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && !tn.IsAlias() {
				if n, ok := tn.Type().(*types.Named); ok && !types.IsInterface(n) && n.NumMethods() > 0 {
					r.modTypes = append(r.modTypes, n)
				}
			}
		}
		for _, imp := range pkg.Imports() {
			visit(imp)
		}
	}
	visit(r.pass.Pkg)
	return r.modTypes
}
