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
	"strings"
	"unicode"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// Check-then-create through an HTTP API and through GORM (red team fF).
//
// HTTP: a GET of one resource of a collection (GET base+"/customers/"+id,
// or GET base+"/customers?email="+email) that answered 404, then a POST to
// that collection (POST base+"/customers"). The URLs are compared as
// written: the same constants and the same variables, the GET's being the
// POST's followed by one path segment or a query that holds a variable. A
// transport error says nothing of presence (net/http returns none for a
// 404); only a comparison of the status with 404 does.
//
// GORM: First, Take or Last of a model keyed by equality conditions (Where
// ("email = ?", email), Where(&User{Email: email}), inline conditions), then
// Create of the same model with a field of the same value, on the branch
// where the read found no record (errors.Is(err, gorm.ErrRecordNotFound));
// and FirstOrCreate, which runs that SELECT and that INSERT itself.

// apiAccess recognizes an HTTP GET or POST, or a GORM read or create.
// handled says the call is one of those (a is then nil when it is not
// judged).
func (w *cbcWalker) apiAccess(call *ast.CallExpr, ctx []guard) (handled bool) {
	fn, ok := typeutil.Callee(w.info, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return false
	}
	if p := fn.Pkg().Path(); p != "net/http" && p != "gorm.io/gorm" {
		return false
	}
	if f := w.pass.Fset.File(call.Pos()); f == nil || strings.HasSuffix(f.Name(), "_test.go") {
		// A test steps through a GET that must answer 404 and then the
		// POST: one caller, on purpose.
		return false
	}
	switch fn.Pkg().Path() {
	case "net/http":
		a, isRead := w.httpAccess(call, fn)
		if a == nil {
			return false
		}
		if isRead {
			w.reads = append(w.reads, a)
		} else {
			w.checkWrite(a, ctx)
		}
		return true
	case "gorm.io/gorm":
		if !isGormDB(recvType(fn)) {
			return false
		}
		switch fn.Name() {
		case "First", "Take", "Last":
			if a := w.gormRead(call); a != nil {
				w.reads = append(w.reads, a)
				w.deriveAddrs(call.Args[:1], []int{len(w.reads) - 1})
			}
			return true
		case "Create":
			if a := w.gormCreate(call); a != nil {
				w.checkWrite(a, ctx)
			}
			return true
		case "FirstOrCreate":
			w.gormFirstOrCreate(call)
			return true
		}
	}
	return false
}

func isGormDB(t types.Type) bool {
	p, ok := t.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "gorm.io/gorm" && n.Obj().Name() == "DB"
}

// httpAccess returns a GET (a read) or a POST (a write) with its URL as
// written; nil for other calls and URLs it cannot render.
func (w *cbcWalker) httpAccess(call *ast.CallExpr, fn *types.Func) (a *cbcAccess, isRead bool) {
	method, urlArg, body := "", ast.Expr(nil), ast.Expr(nil)
	sig := fn.Type().(*types.Signature)
	onClient := sig.Recv() != nil
	if onClient {
		if n, ok := types.Unalias(derefType(sig.Recv().Type())).(*types.Named); !ok || n.Obj().Name() != "Client" {
			return nil, false
		}
	}
	switch fn.Name() {
	case "Get":
		method = "GET"
	case "Post":
		method = "POST"
		if len(call.Args) == 3 {
			body = call.Args[2]
		}
	case "PostForm":
		method = "POST"
		if len(call.Args) == 2 {
			body = call.Args[1]
		}
	case "Do":
		if !onClient || len(call.Args) != 1 {
			return nil, false
		}
		method, urlArg, body = w.httpRequest(call.Args[0])
	default:
		return nil, false
	}
	if urlArg == nil && fn.Name() != "Do" && len(call.Args) > 0 {
		urlArg = call.Args[0]
	}
	if urlArg == nil || (method != "GET" && method != "POST") {
		return nil, false
	}
	u, ok := w.renderURL(urlArg, 0)
	if !ok || !strings.Contains(u, "/") {
		return nil, false
	}
	return &cbcAccess{call: call, kind: "http", url: u, keys: []string{"url"}, body: body}, method == "GET"
}

// httpRequest resolves req of client.Do(req) to the method and URL of the
// http.NewRequest (or NewRequestWithContext) that made it: a variable
// defined by it and never assigned again.
func (w *cbcWalker) httpRequest(e ast.Expr) (method string, url, body ast.Expr) {
	var call *ast.CallExpr
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		call = e
	case *ast.Ident:
		v, ok := w.info.Uses[e].(*types.Var)
		if !ok {
			return "", nil, nil
		}
		call = w.r.definedBy(v)
	}
	if call == nil {
		return "", nil, nil
	}
	fn, ok := typeutil.Callee(w.info, call).(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "net/http" {
		return "", nil, nil
	}
	i := 0
	switch fn.Name() {
	case "NewRequest":
	case "NewRequestWithContext":
		i = 1
	default:
		return "", nil, nil
	}
	if len(call.Args) < i+2 {
		return "", nil, nil
	}
	m := w.info.Types[call.Args[i]].Value
	if m == nil || m.Kind() != constant.String {
		return "", nil, nil
	}
	var b ast.Expr
	if len(call.Args) > i+2 {
		b = call.Args[i+2]
	}
	return strings.ToUpper(constant.StringVal(m)), call.Args[i+1], b
}

// renderURL renders a URL as written: constant text as it is, a variable
// (or a field, an escaped variable) as {key}, through concatenation,
// fmt.Sprintf with a constant format, and local variables bound once.
func (w *cbcWalker) renderURL(e ast.Expr, depth int) (string, bool) {
	if depth > 4 {
		return "", false
	}
	if tv, ok := w.info.Types[e]; ok && tv.Value != nil {
		if tv.Value.Kind() != constant.String {
			return "{" + tv.Value.ExactString() + "}", true
		}
		return constant.StringVal(tv.Value), true
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := w.renderURL(e.X, depth+1)
		y, ok2 := w.renderURL(e.Y, depth+1)
		return x + y, ok1 && ok2
	case *ast.Ident:
		if v, ok := w.info.Uses[e].(*types.Var); ok {
			if b := w.r.boundValue(v); b != nil {
				if _, isLit := ast.Unparen(b).(*ast.FuncLit); !isLit {
					if u, ok := w.renderURL(b, depth+1); ok {
						return u, true
					}
				}
			}
		}
	case *ast.CallExpr:
		fn, _ := typeutil.Callee(w.info, e).(*types.Func)
		if fn == nil || fn.Pkg() == nil {
			break
		}
		switch fn.Pkg().Path() + "." + fn.Name() {
		case "fmt.Sprintf":
			if len(e.Args) == 0 {
				return "", false
			}
			f := w.info.Types[e.Args[0]].Value
			if f == nil || f.Kind() != constant.String {
				return "", false
			}
			return w.sprintfURL(constant.StringVal(f), e.Args[1:], depth)
		case "net/url.PathEscape", "net/url.QueryEscape", "strconv.Itoa", "strconv.FormatInt", "strconv.Quote":
			if len(e.Args) >= 1 {
				return w.keyPart(e.Args[0])
			}
		}
		return "", false
	}
	return w.keyPart(e)
}

func (w *cbcWalker) keyPart(e ast.Expr) (string, bool) {
	k := &keyer{info: w.info}
	s, ok := k.key(e)
	if !ok {
		return "", false
	}
	return "{" + s + "}", true
}

// sprintfURL renders fmt.Sprintf(format, args...) with %s, %d, %v and %q
// verbs; other verbs (widths, %x) are not rendered.
func (w *cbcWalker) sprintfURL(format string, args []ast.Expr, depth int) (string, bool) {
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(format) {
			return "", false
		}
		i++
		switch format[i] {
		case '%':
			b.WriteByte('%')
		case 's', 'd', 'v', 'q':
			if n >= len(args) {
				return "", false
			}
			s, ok := w.renderURL(args[n], depth+1)
			if !ok {
				return "", false
			}
			b.WriteString(s)
			n++
		default:
			return "", false
		}
	}
	return b.String(), n == len(args)
}

// oneResource matches a GET of one resource of the collection a POST
// creates in: the GET's URL is the POST's (a trailing slash aside)
// followed by one path segment or a query, holding a variable.
var oneResource = regexp.MustCompile(`^(/[^/?#]*\{[^}]*\}[^/?#]*/?|\?[^#]*\{[^}]*\}[^#]*)$`)

// lookupOf reports whether get looks one resource up in the collection
// post creates in; see oneResource.
func lookupOf(get, post string) bool {
	post = strings.TrimSuffix(post, "/")
	if post == "" || !strings.Contains(post, "/") || strings.ContainsAny(post, "?#") || !strings.HasPrefix(get, post) {
		return false
	}
	return oneResource.MatchString(get[len(post):])
}

// statusNotFound reports whether e is http.StatusNotFound or 404.
func statusNotFound(info *types.Info, e ast.Expr) bool {
	v := info.Types[e].Value
	return v != nil && v.Kind() == constant.Int && v.ExactString() == "404"
}

// httpStatus reports whether d is the StatusCode of what an HTTP read
// returned.
func (w *cbcWalker) httpStatus(d ast.Expr) bool {
	sel, ok := ast.Unparen(d).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "StatusCode" {
		return false
	}
	return w.anyKind(w.readsIn(sel.X), "http")
}

func (w *cbcWalker) anyKind(reads []int, kind string) bool {
	for _, r := range reads {
		if w.reads[r].kind == kind {
			return true
		}
	}
	return false
}

// sentIdempotencyKey reports whether the function names an idempotency key
// (a header it sets, a field it sends): the server may deduplicate the
// POST on it.
func sentIdempotencyKey(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		var text string
		switch n := n.(type) {
		case *ast.BasicLit:
			text = n.Value
		case *ast.Ident:
			text = n.Name
		}
		t := strings.ToLower(text)
		if strings.Contains(t, "idempoten") || strings.Contains(t, "dedup") {
			found = true
		}
		return !found
	})
	return found
}

// gormChain walks the receiver chain of a GORM call: the equality
// conditions of its Where calls and the model of its Model call. ok is
// false when the chain has a call that changes what the conditions mean
// (Or, Not, Joins, Table, Raw, Scopes, Clauses, ...).
func (w *cbcWalker) gormChain(x ast.Expr) (conds []gormCond, model types.Type, ok bool) {
	for {
		call, isCall := ast.Unparen(x).(*ast.CallExpr)
		if !isCall {
			return conds, model, true
		}
		fn, isFn := typeutil.Callee(w.info, call).(*types.Func)
		if !isFn || fn.Pkg() == nil || fn.Pkg().Path() != "gorm.io/gorm" || !isGormDB(recvType(fn)) {
			// The root: a call that gives a *gorm.DB (a getter).
			return conds, model, true
		}
		switch fn.Name() {
		case "Where":
			cs, ok := w.gormConds(call.Args)
			if !ok {
				return nil, nil, false
			}
			conds = append(conds, cs...)
		case "Model":
			if len(call.Args) == 1 {
				model = w.info.TypeOf(call.Args[0])
			}
		case "WithContext", "Debug", "Session", "Select", "Omit", "Order", "Preload", "Limit", "Offset", "Unscoped", "Attrs", "Assign":
		default:
			return nil, nil, false
		}
		sel, isSel := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !isSel {
			return nil, nil, false
		}
		x = sel.X
	}
}

// gormCond is one equality condition: a column (as GORM names it, or a
// struct field) and the key of its value.
type gormCond struct {
	column string // "email"
	field  string // "Email", when the condition is a struct
	key    string
}

var andSep = regexp.MustCompile(`(?i)\s+and\s+`)

var eqCond = regexp.MustCompile(`(?i)^\s*"?([a-z_][a-z0-9_]*)"?\s*=\s*\?\s*$`)

// gormConds reads the conditions of Where(query, args...) or of a First's
// inline conditions: "a = ? AND b = ?" with its arguments, a struct (or a
// pointer to one) literal of the model, a map literal with constant keys,
// or a lone primary key value.
func (w *cbcWalker) gormConds(args []ast.Expr) ([]gormCond, bool) {
	if len(args) == 0 {
		return nil, true
	}
	k := &keyer{info: w.info}
	if v := w.info.Types[args[0]].Value; v != nil && v.Kind() == constant.String {
		parts := andSep.Split(constant.StringVal(v), -1)
		if len(parts) != len(args)-1 {
			return nil, false
		}
		var out []gormCond
		for i, p := range parts {
			m := eqCond.FindStringSubmatch(p)
			if m == nil {
				return nil, false
			}
			key, ok := k.key(args[i+1])
			if !ok {
				return nil, false
			}
			out = append(out, gormCond{column: strings.ToLower(m[1]), key: key})
		}
		return out, true
	}
	if len(args) != 1 {
		return nil, false
	}
	if lit := compositeLit(args[0]); lit != nil {
		switch types.Unalias(w.info.TypeOf(lit)).Underlying().(type) {
		case *types.Struct:
			return w.litConds(lit)
		case *types.Map:
			var out []gormCond
			for _, elt := range lit.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				if !ok {
					return nil, false
				}
				c := w.info.Types[kv.Key].Value
				key, ok := k.key(kv.Value)
				if c == nil || c.Kind() != constant.String || !ok {
					return nil, false
				}
				out = append(out, gormCond{column: strings.ToLower(constant.StringVal(c)), key: key})
			}
			return out, true
		}
		return nil, false
	}
	// First(&u, id): the primary key.
	if t := w.info.TypeOf(args[0]); t != nil {
		if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&(types.IsInteger|types.IsString) != 0 {
			if key, ok := k.key(args[0]); ok {
				return []gormCond{{column: "id", key: key}}, true
			}
		}
	}
	return nil, false
}

func compositeLit(e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

// litConds reads the keyed fields of a struct literal as conditions (a
// create's values, a struct condition); an unkeyed literal is not read.
func (w *cbcWalker) litConds(lit *ast.CompositeLit) ([]gormCond, bool) {
	k := &keyer{info: w.info}
	var out []gormCond
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return nil, false
		}
		id, ok := kv.Key.(*ast.Ident)
		if !ok {
			return nil, false
		}
		key, ok := k.key(kv.Value)
		if !ok {
			continue // a value computed here is no key
		}
		out = append(out, gormCond{field: id.Name, key: key})
	}
	return out, true
}

// modelStruct returns the named struct type a GORM destination or model
// holds: T of &t, t, &T{}, or *T.
func modelStruct(t types.Type) *types.Named {
	for range 2 {
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return nil
	}
	if _, ok := n.Underlying().(*types.Struct); !ok {
		return nil
	}
	return n
}

func (w *cbcWalker) gormRead(call *ast.CallExpr) *cbcAccess {
	if len(call.Args) == 0 {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	conds, model, ok := w.gormChain(sel.X)
	if !ok {
		return nil
	}
	inline, ok := w.gormConds(call.Args[1:])
	if !ok {
		return nil
	}
	conds = append(conds, inline...)
	m := modelStruct(w.info.TypeOf(call.Args[0]))
	if model != nil {
		if mm := modelStruct(model); mm != nil {
			m = mm
		}
	}
	if m == nil || len(conds) == 0 {
		return nil
	}
	a := &cbcAccess{call: call, kind: "gorm", table: types.TypeString(m, nil), model: m, conds: conds}
	for _, c := range conds {
		a.keys = append(a.keys, c.key)
	}
	return a
}

// gormCreate reads Create(&T{...}) or Create(&t) of a variable defined by
// a literal and never assigned, nor its fields.
func (w *cbcWalker) gormCreate(call *ast.CallExpr) *cbcAccess {
	if len(call.Args) != 1 {
		return nil
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if _, _, ok := w.gormChain(sel.X); !ok {
		return nil // Clauses(clause.OnConflict{...}), a Table, ...
	}
	lit := compositeLit(call.Args[0])
	if lit == nil {
		arg := ast.Unparen(call.Args[0])
		if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.AND {
			arg = ast.Unparen(u.X)
		}
		id, ok := arg.(*ast.Ident)
		if !ok {
			return nil
		}
		v, ok := w.info.Uses[id].(*types.Var)
		if !ok || assignedIn(w.info, w.outerBody(), v) {
			return nil
		}
		lit = compositeLit(w.r.definedValue(v))
		if lit == nil {
			return nil
		}
	}
	m := modelStruct(w.info.TypeOf(lit))
	if m == nil {
		return nil
	}
	conds, ok := w.litConds(lit)
	if !ok || len(conds) == 0 {
		return nil
	}
	a := &cbcAccess{call: call, kind: "gorm", table: types.TypeString(m, nil), model: m, conds: conds}
	for _, c := range conds {
		a.keys = append(a.keys, c.key)
	}
	return a
}

func (w *cbcWalker) outerBody() *ast.BlockStmt {
	if w.outer != nil {
		return w.outer
	}
	return w.body
}

// assignedIn reports whether body assigns v or one of its fields after
// its definition (u.Email = other), or takes the address of a field.
func assignedIn(info *types.Info, body *ast.BlockStmt, v *types.Var) bool {
	root := func(e ast.Expr) bool {
		for {
			switch x := ast.Unparen(e).(type) {
			case *ast.SelectorExpr:
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.Ident:
				return info.Uses[x] == v
			default:
				return false
			}
		}
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if root(l) {
					found = true
				}
			}
		case *ast.IncDecStmt:
			if root(n.X) {
				found = true
			}
		case *ast.UnaryExpr:
			if _, isID := ast.Unparen(n.X).(*ast.Ident); n.Op == token.AND && !isID && root(n.X) {
				found = true
			}
		}
		return !found
	})
	return found
}

// gormFirstOrCreate reports FirstOrCreate of a model keyed on columns the
// model declares no unique constraint on.
func (w *cbcWalker) gormFirstOrCreate(call *ast.CallExpr) {
	if w.params != nil || len(call.Args) == 0 {
		return
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return
	}
	conds, model, ok := w.gormChain(sel.X)
	if !ok {
		return
	}
	inline, ok := w.gormConds(call.Args[1:])
	if !ok {
		return
	}
	conds = append(conds, inline...)
	m := modelStruct(w.info.TypeOf(call.Args[0]))
	if model != nil {
		if mm := modelStruct(model); mm != nil {
			m = mm
		}
	}
	if m == nil || len(conds) == 0 {
		return
	}
	cols, ok := gormColumns(m, conds)
	if !ok || uniqueCovered(m, cols) || w.gormSerialized(call.Pos()) || w.checksUniqueError(call.End()) {
		return
	}
	w.r.report(w.pass, analysis.Diagnostic{
		Pos: call.Pos(), End: call.End(),
		Message: fmt.Sprintf("FirstOrCreate of %s runs a SELECT and then an INSERT keyed on %s, a column the model declares no unique index on: "+
			"two concurrent or redelivered calls can both find no record and both insert; "+
			"declare a unique index on the key (gorm:\"uniqueIndex\"): a racing call then fails and its retry finds the record",
			m.Obj().Name(), strings.Join(cols, ", ")),
	})
}

// gormColumns maps conditions to the model's columns; ok is false when
// one names no field of the model.
func gormColumns(m *types.Named, conds []gormCond) ([]string, bool) {
	fields := gormFields(m)
	var cols []string
	for _, c := range conds {
		col := ""
		for _, f := range fields {
			if (c.field != "" && f.name == c.field) || (c.field == "" && f.column == c.column) {
				col = f.column
			}
		}
		if col == "" {
			return nil, false
		}
		if !slices.Contains(cols, col) {
			cols = append(cols, col)
		}
	}
	return cols, true
}

type gormField struct {
	name, column string
	unique       []string // the unique indexes (and the primary key, "pk") it is part of
}

// gormFields lists a model's columns with the unique indexes their tags
// declare (primaryKey, unique, uniqueIndex[:name], index:name,unique),
// embedded structs (gorm.Model) included; a field named ID is the primary
// key when no field is tagged primaryKey.
func gormFields(m *types.Named) []gormField {
	var out []gormField
	pkTagged := false
	var walk func(st *types.Struct, depth int)
	walk = func(st *types.Struct, depth int) {
		for i := 0; i < st.NumFields(); i++ {
			f := st.Field(i)
			tag := reflect.StructTag(st.Tag(i)).Get("gorm")
			if tag == "-" {
				continue
			}
			if f.Embedded() || strings.Contains(strings.ToLower(tag), "embedded") {
				if inner, ok := derefType(f.Type()).Underlying().(*types.Struct); ok && depth < 3 {
					walk(inner, depth+1)
				}
				continue
			}
			gf := gormField{name: f.Name(), column: gormColumnName(f.Name())}
			for _, part := range strings.Split(tag, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), ":")
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "column":
					gf.column = strings.TrimSpace(v)
				case "primarykey", "primary_key":
					pkTagged = true
					gf.unique = append(gf.unique, "pk")
				case "unique":
					gf.unique = append(gf.unique, "unique:"+f.Name())
				case "uniqueindex":
					name, _, _ := strings.Cut(v, ",")
					if name = strings.TrimSpace(name); name == "" {
						name = "field:" + f.Name()
					}
					gf.unique = append(gf.unique, name)
				case "index":
					if opts := strings.Split(v, ","); slices.ContainsFunc(opts[1:], func(o string) bool {
						return strings.EqualFold(strings.TrimSpace(o), "unique") || strings.EqualFold(strings.TrimSpace(o), "class:unique")
					}) {
						name := strings.TrimSpace(opts[0])
						if name == "" {
							name = "field:" + f.Name()
						}
						gf.unique = append(gf.unique, name)
					}
				}
			}
			out = append(out, gf)
		}
	}
	if st, ok := m.Underlying().(*types.Struct); ok {
		walk(st, 0)
	}
	if !pkTagged {
		for i := range out {
			if out[i].name == "ID" {
				out[i].unique = append(out[i].unique, "pk")
			}
		}
	}
	return out
}

// uniqueCovered reports whether some unique index (or the primary key) of
// the model has all its columns among cols: two records with those
// values cannot both be inserted.
func uniqueCovered(m *types.Named, cols []string) bool {
	members := map[string][]string{}
	for _, f := range gormFields(m) {
		for _, u := range f.unique {
			members[u] = append(members[u], f.column)
		}
	}
	for _, colsOf := range members {
		all := true
		for _, c := range colsOf {
			all = all && slices.Contains(cols, c)
		}
		if all {
			return true
		}
	}
	return false
}

// gormColumnName is GORM's default column name of a field: snake case,
// an initialism kept together (UserID: user_id, HTTPCode: http_code).
func gormColumnName(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// gormSerialized reports whether the function runs GORM in a transaction
// or under a lock, by what it calls or says: Transaction, Begin, a
// locking clause, FOR UPDATE, SERIALIZABLE, LOCK. Its isolation is not
// resolved here: silence is the safe side.
func (w *cbcWalker) gormSerialized(pos token.Pos) bool {
	body := w.outerBody()
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if fn, ok := typeutil.Callee(w.info, n).(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "gorm.io/gorm" {
				switch fn.Name() {
				case "Transaction", "Begin", "Clauses":
					found = true
				}
			}
		case *ast.BasicLit:
			t := strings.ToUpper(n.Value)
			if strings.Contains(t, "FOR UPDATE") || strings.Contains(t, "SERIALIZABLE") || strings.Contains(t, "LOCK") {
				found = true
			}
		case *ast.SelectorExpr:
			if obj := w.info.Uses[n.Sel]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "gorm.io/gorm/clause" && obj.Name() == "Locking" {
				found = true
			}
		}
		return !found
	})
	return found || (w.outer != nil && (lockedBefore(w.outer, pos) || semaphoreBefore(w.info, w.outer, pos) || inSingleflight(w.info, w.outer, pos)))
}

// gormUnique reports whether the model declares a unique index on the
// columns of the read's conditions that the create gives the same value:
// a racing create then fails, and its retry finds the record.
func gormUnique(rd, a *cbcAccess) bool {
	var shared []gormCond
	for _, c := range rd.conds {
		if slices.Contains(a.keys, c.key) {
			shared = append(shared, c)
		}
	}
	cols, ok := gormColumns(rd.model, shared)
	if !ok {
		return true // a column the model does not show: say nothing
	}
	return uniqueCovered(rd.model, cols)
}

// importsAPI reports whether the package imports net/http or GORM.
func importsAPI(pkg *types.Package) bool {
	for _, imp := range pkg.Imports() {
		if imp.Path() == "net/http" || imp.Path() == "gorm.io/gorm" {
			return true
		}
	}
	return false
}

// renderedURL shows a URL as written, a variable as its name.
func renderedURL(u string) string {
	return keyPos.ReplaceAllString(u, "")
}

// keyPos is the position a key gives a variable (id@1234).
var keyPos = regexp.MustCompile(`@[0-9]+`)

func gormReadName(rd *cbcAccess) string {
	name := "First"
	if fn, ok := rd.call.Fun.(*ast.SelectorExpr); ok {
		name = fn.Sel.Name
	}
	return name + " of " + rd.model.Obj().Name()
}

// sendsKey reports whether the POST sends the key the GET looked up: a
// variable of the GET's last segment or query appears in the POST's body,
// directly or through the local variables it is built from (json.Marshal
// of a struct holding it, url.Values with it). A POST that sends no key
// (a new session after an expired one) creates another thing.
func (w *cbcWalker) sendsKey(rd, a *cbcAccess) bool {
	if a.body == nil {
		return false
	}
	post := strings.TrimSuffix(a.url, "/")
	var roots []string
	for _, m := range urlKey.FindAllStringSubmatch(rd.url[len(post):], -1) {
		root, _, _ := strings.Cut(m[1], ".")
		roots = append(roots, root)
	}
	if len(roots) == 0 {
		return false
	}
	found := false
	seen := map[*types.Var]bool{}
	var visit func(e ast.Node, depth int)
	visit = func(e ast.Node, depth int) {
		ast.Inspect(e, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok || found {
				return !found
			}
			v, ok := w.info.Uses[id].(*types.Var)
			if !ok || v.IsField() {
				return true
			}
			if slices.Contains(roots, fmt.Sprintf("%s@%d", v.Name(), v.Pos())) {
				found = true
				return false
			}
			if !seen[v] && depth < 3 {
				seen[v] = true
				if d := w.r.definedValue(v); d != nil {
					visit(d, depth+1)
				} else if c := w.r.definedBy(v); c != nil {
					visit(c, depth+1)
				}
			}
			return true
		})
	}
	visit(a.body, 0)
	return found
}

// urlKey is a variable in a rendered URL: {id@1234} or {req@1234.Email}.
var urlKey = regexp.MustCompile(`\{([^{}]*@[0-9]+[^{}]*)\}`)
