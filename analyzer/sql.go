package analyzer

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// stringValue returns the value of a string literal, or "".
func stringValue(lit *ast.BasicLit) string {
	if lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

// normSQL strips comments, collapses white space and upper-cases a query,
// so that keyword tests are simple. String literals inside the query are
// kept as they are written.
func normSQL(q string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			for i < len(q) && q[i] != '\n' {
				i++
			}
			space = true
			continue
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				i = len(q)
			} else {
				i += end + 3
			}
			space = true
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isSelect(q string) bool {
	if strings.HasPrefix(q, "SELECT ") {
		return !hasWord(q, "INTO") // SELECT ... INTO writes
	}
	if strings.HasPrefix(q, "WITH ") {
		return hasWord(q, "SELECT") && !hasWord(q, "INSERT") && !hasWord(q, "UPDATE") && !hasWord(q, "DELETE")
	}
	return false
}

func isInsert(q string) bool { return strings.HasPrefix(q, "INSERT ") }

func isUpdate(q string) bool { return strings.HasPrefix(q, "UPDATE ") }

// updateTable returns the table an UPDATE writes.
func updateTable(q string) string {
	words := strings.Fields(q)
	if len(words) < 2 {
		return ""
	}
	t := words[1]
	if t == "ONLY" && len(words) > 2 {
		t = words[2]
	}
	return tableName(t)
}

// insertResolvesConflict reports whether an INSERT is idempotent by itself:
// it resolves a unique-key conflict, or inserts only when the row is absent.
func insertResolvesConflict(q string) bool {
	for _, s := range []string{"ON CONFLICT", "ON DUPLICATE KEY", "INSERT IGNORE", "INSERT OR IGNORE", "INSERT OR REPLACE", "NOT EXISTS", "WHERE NOT "} {
		if strings.Contains(q, s) {
			return true
		}
	}
	return false
}

// selectTable returns the first table a SELECT reads from, lower case and
// without schema or quotes.
func selectTable(q string) string {
	words := strings.Fields(q)
	for i, w := range words {
		if w == "FROM" && i+1 < len(words) {
			if t := tableName(words[i+1]); t != "" {
				return t
			}
		}
	}
	return ""
}

// insertTable returns the table an INSERT writes.
func insertTable(q string) string {
	words := strings.Fields(q)
	for i, w := range words {
		if w == "INTO" && i+1 < len(words) {
			return tableName(words[i+1])
		}
	}
	return ""
}

func tableName(w string) string {
	if i := strings.IndexAny(w, "(,;"); i >= 0 {
		w = w[:i]
	}
	if i := strings.LastIndexByte(w, '.'); i >= 0 {
		w = w[i+1:]
	}
	w = strings.Trim(w, "\"`[]")
	if w == "" || strings.ContainsAny(w, "$?:)'") {
		return ""
	}
	return strings.ToLower(w)
}

func hasWord(q, word string) bool {
	for _, w := range strings.Fields(q) {
		if strings.Trim(w, "(),;") == word {
			return true
		}
	}
	return false
}

// sqlHandle says what a query method is called on: a database or
// connection (autocommit), a transaction, or something else.
type handleKind int

const (
	handleOther handleKind = iota
	handleDB
	handleTx
)

// sqlPackages are the packages whose query methods the analyzer knows.
func sqlPackage(path string) bool {
	switch {
	case path == "database/sql",
		strings.HasPrefix(path, "github.com/jackc/pgx/"),
		path == "github.com/jmoiron/sqlx":
		return true
	}
	return false
}

// handleOf classifies the receiver type of a query method.
func handleOf(t types.Type) handleKind {
	if t == nil {
		return handleOther
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || !sqlPackage(n.Obj().Pkg().Path()) {
		return handleOther
	}
	switch n.Obj().Name() {
	case "DB", "Conn", "Pool":
		return handleDB
	case "Tx":
		return handleTx
	}
	return handleOther
}

var (
	queryMethods = map[string]bool{
		"QueryRow": true, "QueryRowContext": true, "Query": true, "QueryContext": true,
		"QueryRowx": true, "QueryRowxContext": true, "Queryx": true, "QueryxContext": true,
		"Get": true, "GetContext": true, "Select": true, "SelectContext": true,
	}
	execMethods = map[string]bool{
		"Exec": true, "ExecContext": true, "MustExec": true, "MustExecContext": true,
		"NamedExec": true, "NamedExecContext": true,
	}
)

// queryArg finds the constant query string of a query or exec call. A
// query built at run time from constants (a local variable holding one,
// fmt.Sprintf of constants, ...) counts when eval computes it.
func queryArg(info *types.Info, call *ast.CallExpr, eval func(ast.Expr) (string, bool)) (idx int, q string, ok bool) {
	for i, a := range call.Args {
		tv, found := info.Types[a]
		if !found {
			continue
		}
		if b, isBasic := tv.Type.Underlying().(*types.Basic); !isBasic || b.Info()&types.IsString == 0 {
			continue
		}
		if tv.Value == nil {
			if v, known := eval(a); known {
				return i, normSQL(v), true
			}
			return 0, "", false
		}
		s, err := strconv.Unquote(tv.Value.ExactString())
		if err != nil {
			return 0, "", false
		}
		return i, normSQL(s), true
	}
	return 0, "", false
}

// withOnConflict returns a string literal with ON CONFLICT DO NOTHING
// appended to its INSERT, or "" when the literal cannot be rewritten
// soundly.
func withOnConflict(lit *ast.BasicLit) string {
	v := stringValue(lit)
	if v == "" || hasWord(normSQL(v), "RETURNING") {
		return ""
	}
	body := strings.TrimRight(v, " \t\r\n;")
	tail := v[len(body):]
	nv := body + " ON CONFLICT DO NOTHING" + tail
	if lit.Value[0] == '`' {
		if strings.Contains(nv, "`") {
			return ""
		}
		return "`" + nv + "`"
	}
	return strconv.Quote(nv)
}
