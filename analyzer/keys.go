package analyzer

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
)

// keyer renders expressions as canonical keys: two expressions with equal
// keys denote the same value at the same point of a function (same
// variables, same constants, no calls). A key that cannot be computed is
// reported as not ok, and callers then say nothing.
type keyer struct {
	info *types.Info
	// local is the range of the innermost function literal around the
	// expression: a variable declared there is a fresh one per run.
	local [2]token.Pos
	objs  []types.Object // variables the key depends on
	// params, when set, renders parameters as p<index> (SQL summaries).
	params map[types.Object]int
	// bind, when set, renders a closure's parameters as the arguments of
	// its call.
	bind map[types.Object]binding
}

func (k *keyer) key(e ast.Expr) (string, bool) {
	if tv, ok := k.info.Types[e]; ok && tv.Value != nil {
		return "c:" + tv.Value.ExactString(), true
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return k.key(e.X)
	case *ast.Ident:
		obj := k.info.Uses[e]
		if obj == nil {
			obj = k.info.Defs[e]
		}
		switch obj := obj.(type) {
		case *types.Var:
			if a, ok := k.bind[obj]; ok {
				inner := k.local
				k.local = a.local
				s, ok := k.key(a.arg)
				k.local = inner
				return s, ok
			}
			if k.local[0].IsValid() && k.local[0] <= obj.Pos() && obj.Pos() < k.local[1] {
				return "", false
			}
			k.objs = append(k.objs, obj)
			if i, ok := k.params[obj]; ok {
				return fmt.Sprintf("p%d", i), true
			}
			return fmt.Sprintf("%s@%d", obj.Name(), obj.Pos()), true
		case *types.Nil:
			return "nil", true
		case *types.PkgName:
			return obj.Imported().Path(), true
		}
		return "", false
	case *ast.SelectorExpr:
		if sel, ok := k.info.Selections[e]; ok && sel.Kind() != types.FieldVal {
			return "", false
		}
		if id, ok := e.X.(*ast.Ident); ok {
			if pn, ok := k.info.Uses[id].(*types.PkgName); ok {
				if v, ok := k.info.Uses[e.Sel].(*types.Var); ok {
					k.objs = append(k.objs, v)
					return pn.Imported().Path() + "." + e.Sel.Name, true
				}
				return "", false
			}
		}
		x, ok := k.key(e.X)
		return x + "." + e.Sel.Name, ok
	case *ast.StarExpr:
		x, ok := k.key(e.X)
		return "*" + x, ok
	case *ast.UnaryExpr:
		if e.Op == token.ARROW {
			return "", false
		}
		x, ok := k.key(e.X)
		return e.Op.String() + x, ok
	case *ast.BinaryExpr:
		x, ok1 := k.key(e.X)
		y, ok2 := k.key(e.Y)
		return "(" + x + e.Op.String() + y + ")", ok1 && ok2
	case *ast.IndexExpr:
		x, ok1 := k.key(e.X)
		i, ok2 := k.key(e.Index)
		return x + "[" + i + "]", ok1 && ok2
	case *ast.CallExpr:
		// Only conversions: string(id), UserID(n).
		if tv, ok := k.info.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			x, ok := k.key(e.Args[0])
			return types.ExprString(e.Fun) + "(" + x + ")", ok
		}
	}
	return "", false
}

// opKeys returns the keys of an op's entity at a call site: each entity
// expression of the directive, with the parameters replaced by the keys of
// the arguments. For a read without entity=, its arguments (but a context)
// are its keys. ok is false when some key cannot be computed.
func opKeys(k *keyer, op *OpFact, call *ast.CallExpr, exprs []string) (keys []string, ok bool) {
	args := map[string]ast.Expr{}
	for i, p := range op.Params {
		if op.Variadic && i == len(op.Params)-1 {
			break
		}
		if i < len(call.Args) && p != "" && p != "_" {
			args[p] = call.Args[i]
		}
	}
	if op.Recv != "" {
		if sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr); isSel {
			if s, ok := k.info.Selections[sel]; ok && s.Kind() == types.MethodVal {
				args[op.Recv] = sel.X
			}
		}
	}
	if len(exprs) == 0 {
		if op.Kind != "read" {
			return nil, false
		}
		for i, a := range call.Args {
			if op.Variadic && i >= len(op.Params)-1 {
				break
			}
			if t := k.info.TypeOf(a); t != nil && isContext(t) {
				continue
			}
			if s, ok := k.key(a); ok {
				keys = append(keys, "("+s+")")
			}
		}
		return keys, len(keys) > 0
	}
	for _, src := range exprs {
		if op.Variadic && len(op.Params) > 0 && mentions(src, op.Params[len(op.Params)-1]) {
			// The variadic parameter (paths ...string) is not one
			// argument: two calls' keys cannot be told apart by it.
			return nil, false
		}
		s, ok := substitute(k, src, args)
		if !ok {
			return nil, false
		}
		keys = append(keys, s)
	}
	return keys, true
}

// mentions reports whether the Go expression src names the identifier
// name (false when src does not parse).
func mentions(src, name string) bool {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return false
	}
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// substitute renders a directive expression with parameters replaced by
// the keys of their arguments. A name that is not a parameter stays as it
// is: it is package-level in the op's package, the same at every call.
func substitute(k *keyer, src string, args map[string]ast.Expr) (string, bool) {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	ok := true
	var walk func(e ast.Expr)
	walk = func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			if a, isParam := args[e.Name]; isParam {
				s, good := k.key(a)
				ok = ok && good
				b.WriteString("(" + s + ")")
				return
			}
			b.WriteString("g:" + e.Name)
		case *ast.SelectorExpr:
			walk(e.X)
			b.WriteString("." + e.Sel.Name)
		case *ast.ParenExpr:
			walk(e.X)
		case *ast.StarExpr:
			b.WriteString("*")
			walk(e.X)
		case *ast.UnaryExpr:
			b.WriteString(e.Op.String())
			walk(e.X)
		case *ast.BinaryExpr:
			b.WriteString("(")
			walk(e.X)
			b.WriteString(e.Op.String())
			walk(e.Y)
			b.WriteString(")")
		case *ast.IndexExpr:
			walk(e.X)
			b.WriteString("[")
			walk(e.Index)
			b.WriteString("]")
		case *ast.CallExpr:
			walk(e.Fun)
			b.WriteString("(")
			for i, a := range e.Args {
				if i > 0 {
					b.WriteString(",")
				}
				walk(a)
			}
			b.WriteString(")")
		case *ast.BasicLit:
			v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
			b.WriteString("c:" + v.ExactString())
		default:
			ok = false
		}
	}
	walk(e)
	return b.String(), ok
}

// paramsIn returns the parameters a directive expression mentions.
func paramsIn(src string, params []string) []string {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			ast.Inspect(n.X, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && !seen[id.Name] && contains(params, id.Name) {
					seen[id.Name] = true
					out = append(out, id.Name)
				}
				return true
			})
			return false
		case *ast.Ident:
			if !seen[n.Name] && contains(params, n.Name) {
				seen[n.Name] = true
				out = append(out, n.Name)
			}
		}
		return true
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if contains(b, x) {
			return true
		}
	}
	return false
}
