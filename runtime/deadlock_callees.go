package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A correct agent honoured a 429's Retry-After with <-clock.Wait(2s), where
// clock, a helper package of its own module, did time.AfterFunc(d, func(){
// close(ch) }); calleeTimers read only the receiving file's own package,
// saw no timer, and the stall watch called it a proven deadlock after 1.3
// s: the correct agent's baseline failed (red team rtW #5).
//
// So the functions a waiting function calls through a package name are
// looked up through the imports of its file: a package of the same module
// (its directory under the module's root, from go.mod), of a module that
// go.mod replaces with a local directory, or vendored, is read as the
// file's own package is. The standard library's packages and the
// harness's own are known: the first's timers have their names in
// timerWords, the second hands the agent no channel to wait on. A call
// into any other package (a library's, in the module cache) cannot be
// read, so nothing proves that the channel the function waits on does not
// come from a timer there: the wait is not judged, and the stall waits
// for its bound. The same holds for a method called on a value whose type
// the suite did not read, where the file imports such a package.

// importKind says what calleeTimers can know of an imported package.
const (
	importKnown  = iota // the standard library, the harness: no timer of a channel the agent waits on
	importRead          // its source is read, as the file's own package is
	importUnread        // a library's: its code is not read
)

// importRef is one import of a file.
type importRef struct {
	kind int
	dir  string // importRead: where its files are
}

// modInfo is what go.mod of a module says of where its packages are.
type modInfo struct {
	root, path string
	replaced   map[string]string // module path → its local directory
}

var modules struct {
	mu    sync.Mutex
	byDir map[string]*modInfo // nil: no go.mod above the directory
	files map[string]map[string]importRef
}

// moduleOf returns the module whose go.mod is in dir or above it.
func moduleOf(dir string) *modInfo {
	modules.mu.Lock()
	defer modules.mu.Unlock()
	return moduleOfLocked(dir)
}

func moduleOfLocked(dir string) *modInfo {
	if m, ok := modules.byDir[dir]; ok {
		return m
	}
	var m *modInfo
	if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		m = parseGoMod(dir, string(b))
	} else if parent := filepath.Dir(dir); parent != dir {
		m = moduleOfLocked(parent)
	}
	if modules.byDir == nil {
		modules.byDir = map[string]*modInfo{}
	}
	modules.byDir[dir] = m
	return m
}

// parseGoMod reads the module line and the replace directives whose
// target is a local directory ("=> ../lib").
func parseGoMod(root, text string) *modInfo {
	m := &modInfo{root: root, replaced: map[string]string{}}
	inReplace := false
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "module "):
			m.path = strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`)
			continue
		case line == "replace (":
			inReplace = true
			continue
		case inReplace && line == ")":
			inReplace = false
			continue
		case strings.HasPrefix(line, "replace "):
			line = strings.TrimPrefix(line, "replace ")
		case !inReplace:
			continue
		}
		from, to, ok := strings.Cut(line, "=>")
		if !ok {
			continue
		}
		fromF, toF := strings.Fields(from), strings.Fields(to)
		if len(fromF) == 0 || len(toF) != 1 || !(strings.HasPrefix(toF[0], "./") || strings.HasPrefix(toF[0], "../") || filepath.IsAbs(toF[0])) {
			continue // a replacement by another module's version: in the module cache
		}
		dir := toF[0]
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		m.replaced[fromF[0]] = dir
	}
	return m
}

// harnessModule is this module's path: its packages are the harness's.
const harnessModule = "github.com/agentidem/agentidem-go"

// resolve says where the package of import path p, imported by a file of
// module m, is.
func (m *modInfo) resolve(p string) importRef {
	under := func(mod string) (string, bool) {
		if p == mod {
			return "", true
		}
		if rest, ok := strings.CutPrefix(p, mod+"/"); ok {
			return rest, true
		}
		return "", false
	}
	if m != nil && m.path != "" {
		if rest, ok := under(m.path); ok {
			return importRef{kind: importRead, dir: filepath.Join(m.root, filepath.FromSlash(rest))}
		}
	}
	if _, ok := under(harnessModule); ok {
		return importRef{kind: importKnown}
	}
	if first, _, _ := strings.Cut(p, "/"); !strings.Contains(first, ".") {
		return importRef{kind: importKnown} // the standard library
	}
	if m != nil {
		best := ""
		for mod := range m.replaced {
			if _, ok := under(mod); ok && len(mod) > len(best) {
				best = mod
			}
		}
		if best != "" {
			rest, _ := under(best)
			return importRef{kind: importRead, dir: filepath.Join(m.replaced[best], filepath.FromSlash(rest))}
		}
		vendored := filepath.Join(m.root, "vendor", filepath.FromSlash(p))
		if st, err := os.Stat(vendored); err == nil && st.IsDir() {
			return importRef{kind: importRead, dir: vendored}
		}
	}
	return importRef{kind: importUnread}
}

// fileImports returns the imports of the Go file at path by the name the
// file calls them ("." for a dot import, each under its own key).
func fileImports(path string) map[string]importRef {
	modules.mu.Lock()
	if imps, ok := modules.files[path]; ok {
		modules.mu.Unlock()
		return imps
	}
	modules.mu.Unlock()
	imps := map[string]importRef{}
	b, err := os.ReadFile(path)
	if err == nil {
		m := moduleOf(filepath.Dir(path))
		dots := 0
		for _, spec := range importSpecs(string(b)) {
			name, p := spec[0], spec[1]
			if name == "_" {
				continue
			}
			ref := m.resolve(p)
			if name == "" {
				name = packageName(ref, p)
			}
			if name == "." {
				dots++
				name = "." + strings.Repeat(".", dots)
			}
			imps[name] = ref
		}
	}
	modules.mu.Lock()
	if modules.files == nil {
		modules.files = map[string]map[string]importRef{}
	}
	modules.files[path] = imps
	modules.mu.Unlock()
	return imps
}

// importSpecs returns the (name, path) pairs of src's import declarations,
// name "" where the import has none.
func importSpecs(src string) [][2]string {
	var out [][2]string
	spec := func(s string) {
		if i := strings.Index(s, "//"); i >= 0 {
			s = s[:i]
		}
		f := strings.Fields(s)
		switch {
		case len(f) == 1:
			out = append(out, [2]string{"", strings.Trim(f[0], "\"`")})
		case len(f) == 2:
			out = append(out, [2]string{f[0], strings.Trim(f[1], "\"`")})
		}
	}
	block := false
	for _, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case block && strings.HasPrefix(line, ")"):
			block = false
		case block:
			spec(line)
		case line == "import (":
			block = true
		case strings.HasPrefix(line, "import "):
			spec(strings.TrimPrefix(line, "import "))
		case strings.HasPrefix(line, "func ") || strings.HasPrefix(line, "type ") || strings.HasPrefix(line, "var ") || strings.HasPrefix(line, "const "):
			return out // imports come before any declaration
		}
	}
	return out
}

// packageName is the name a package is called by where its import names
// none: the package clause of its files where they are read, else its
// path's last element, without a major version ("/v5"), a "go-" prefix or
// a "-go" suffix, as most modules name theirs.
func packageName(ref importRef, p string) string {
	if ref.kind == importRead {
		files, _ := filepath.Glob(filepath.Join(ref.dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if name, ok := strings.CutPrefix(line, "package "); ok {
					return strings.TrimSpace(name)
				}
			}
		}
	}
	elems := strings.Split(p, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = elems[len(elems)-2]
	}
	if i := strings.Index(last, ".v"); i > 0 {
		last = last[:i] // gopkg.in/yaml.v3
	}
	last = strings.TrimSuffix(strings.TrimPrefix(last, "go-"), "-go")
	return strings.NewReplacer("-", "", ".", "").Replace(last)
}

// calledRef is one call of a function's text: Name( or qual.Name(.
type calledRef struct{ qual, name string }

// calledRefs returns the calls of text, each with the identifier before
// its dot, if any ("" for a call of a plain name, and for a method called
// on an expression's result: f().Name()).
func calledRefs(text string) []calledRef {
	var out []calledRef
	for _, name := range calledNamesAt(text) {
		ref := calledRef{name: text[name[0]:name[1]]}
		if j := name[0]; j > 0 && text[j-1] == '.' {
			k := j - 1
			for k > 0 && isIdentByte(text[k-1]) {
				k--
			}
			ref.qual = text[k : j-1]
			if ref.qual == "" {
				ref.qual = ")" // a method of a call's or an index's result
			}
		}
		out = append(out, ref)
	}
	return out
}

// calledNamesAt returns where each name text calls starts and ends.
func calledNamesAt(text string) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); i++ {
		if text[i] != '(' || i == 0 || !isIdentByte(text[i-1]) {
			continue
		}
		j := i
		for j > 0 && isIdentByte(text[j-1]) {
			j--
		}
		out = append(out, [2]int{j, i})
	}
	return out
}

// goKeywords are the words before a "(" that call nothing.
var goKeywords = map[string]bool{"func": true, "if": true, "for": true, "switch": true, "return": true, "go": true, "defer": true, "select": true, "case": true, "range": true, "chan": true, "map": true, "interface": true, "struct": true, "else": true, "var": true, "const": true, "type": true, "import": true}

// calleeTimers reports whether a function that text, the function of
// file ("path:line"), calls by name, or one that such a function calls,
// three calls deep, may set or wait on a timer (timerWords): a helper that
// returns a timer's channel (later(d) returning time.After(d),
// clock.Wait(d) doing time.AfterFunc) leaves no timer word where the
// channel is received. Its own package's functions and those of the
// packages it imports that fileImports can read are read; a call into a
// package it cannot read counts as a timer (see above).
func calleeTimers(file, text string) bool {
	type body struct{ text, file string }
	path, _, _ := strings.Cut(file, ":")
	seen := map[string]bool{}
	next := []body{{text, path}}
	// Three: a chain of one-line helpers (deep.Wait returning wake(),
	// returning later(), which arms the timer) was read two deep only
	// because funcText took each one-liner's next function in with it.
	for depth := 0; depth < 3 && len(next) > 0; depth++ {
		var more []body
		for _, b := range next {
			own := filepath.Dir(b.file)
			imps := fileImports(b.file)
			unread, dotUnread := false, false
			for name, ref := range imps {
				unread = unread || ref.kind == importUnread
				dotUnread = dotUnread || ref.kind == importUnread && strings.HasPrefix(name, ".")
			}
			for _, c := range calledRefs(b.text) {
				if goKeywords[c.name] {
					continue
				}
				var dirs []string
				imp, isPkg := imps[c.qual]
				switch {
				case isPkg && imp.kind == importKnown:
					continue
				case isPkg && imp.kind == importUnread:
					return true // a library's function: the channel may be its timer's
				case isPkg:
					dirs = []string{imp.dir}
				default:
					// A function of the file's own package, a method (of a
					// type of it, or of a package the file imports), or a
					// dot import's.
					dirs = []string{own}
					if c.qual != "" {
						for _, ref := range imps {
							if ref.kind == importRead {
								dirs = append(dirs, ref.dir)
							}
						}
					}
				}
				found := false
				for _, dir := range dirs {
					fs := pkgFuncs(dir)[c.name]
					found = found || len(fs) > 0
					key := dir + "\x00" + c.name
					if seen[key] || len(seen) > 200 {
						continue
					}
					seen[key] = true
					for _, f := range fs {
						if timerWords(f.text) {
							return true
						}
						more = append(more, body{f.text, f.file})
					}
				}
				if !found && !isPkg && (c.qual != "" && unread || c.qual == "" && dotUnread) {
					return true // maybe a method of a library's value, or a dot import's function
				}
			}
		}
		next = more
	}
	return false
}
