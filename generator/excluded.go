package generator

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentidem/agentidem-go/internal/directive"
	"golang.org/x/tools/go/packages"
)

// This file covers what the type-checked packages do not show: annotated
// functions in files the build leaves out, declarations of _test.go files
// that a wrapper would clash with, and the ops of dependencies that after=
// may name. It reads source files directly, with go/parser.

// looseFunc is an annotated function found by parsing a file outside the
// type-checked build.
type looseFunc struct {
	pos  token.Position
	op   string // the op name: name=, else Func or Type.Func
	decl string // Func, or Type.Func for a method
}

// parseAnnotated parses the Go file at path (only if it mentions a
// directive) and returns its annotated functions and its top-level
// declarations (names, and Type.Method for methods), with positions.
func parseAnnotated(fset *token.FileSet, path string, needDecls bool) (funcs []looseFunc, decls map[string]token.Position, pkgName string) {
	src, err := os.ReadFile(path)
	if err != nil || !needDecls && !bytes.Contains(src, []byte("//agentidem:")) {
		return nil, nil, ""
	}
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil || f.Name == nil {
		return nil, nil, ""
	}
	decls = map[string]token.Position{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				name = recvTypeName(d.Recv.List[0].Type) + "." + name
			}
			decls[name] = fset.Position(d.Name.Pos())
			if d.Doc == nil || !bytes.Contains(src, []byte("//agentidem:")) {
				continue
			}
			dir, _, _ := directive.FromDoc(fset, d.Doc)
			if dir == nil || (dir.Kind != directive.Read && dir.Kind != directive.Write) {
				continue
			}
			lf := looseFunc{pos: fset.Position(d.Pos()), op: name, decl: name}
			if dir.Name != nil {
				lf.op = dir.Name.Text
			}
			funcs = append(funcs, lf)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						decls[n.Name] = fset.Position(n.Pos())
					}
				case *ast.TypeSpec:
					decls[s.Name.Name] = fset.Position(s.Name.Pos())
				}
			}
		}
	}
	return funcs, decls, f.Name.Name
}

// recvTypeName is the name of a method's receiver type: T for T, *T,
// T[K] and *T[K].
func recvTypeName(x ast.Expr) string {
	for {
		switch t := x.(type) {
		case *ast.StarExpr:
			x = t.X
		case *ast.ParenExpr:
			x = t.X
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// excludedWarnings warns about annotated functions in files of pkg that
// this load leaves out: files excluded by build constraints, and _test.go
// files without Config.Tests. Each warning names the file and what would
// include it.
func excludedWarnings(cfg Config, pkg *packages.Package) []string {
	var warns []string
	fset := token.NewFileSet()
	for _, path := range pkg.IgnoredFiles {
		if !strings.HasSuffix(path, ".go") {
			continue
		}
		funcs, _, _ := parseAnnotated(fset, path, false)
		if len(funcs) == 0 {
			continue
		}
		why, fix := exclusionReason(cfg, path)
		for _, f := range funcs {
			warns = append(warns, fmt.Sprintf("%s: warning: %s is not wrapped: %s is excluded from this build by %s; %s", f.pos, f.decl, filepath.Base(path), why, fix))
		}
	}
	if !cfg.Tests {
		for _, path := range testFiles(pkg) {
			funcs, _, _ := parseAnnotated(fset, path, false)
			for _, f := range funcs {
				warns = append(warns, fmt.Sprintf("%s: warning: %s is not wrapped: %s is a _test.go file, which agentidem-gen reads only with --tests (Config.Tests); run agentidem-gen --tests to wrap it", f.pos, f.decl, filepath.Base(path)))
			}
		}
	}
	sort.Strings(warns)
	return warns
}

// excludedErrors checks the directives in the files of pkg that this
// load leaves out (as excludedWarnings lists them): a misspelt or
// misplaced directive there is wrong in every build, and was passed in
// silence, since only the functions that a well-formed directive
// annotates were looked for in those files (fS). Each error is the one
// the file would get in a build that includes it; the warnings are those
// of directives written with a space after //.
func excludedErrors(cfg Config, pkg *packages.Package) (Errors, []string) {
	var (
		errs  Errors
		warns []string
		paths []string
	)
	for _, path := range pkg.IgnoredFiles {
		if strings.HasSuffix(path, ".go") {
			paths = append(paths, path)
		}
	}
	if !cfg.Tests {
		paths = append(paths, testFiles(pkg)...)
	}
	slices.Sort(paths)
	fset := token.NewFileSet()
	for _, path := range slices.Compact(paths) {
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte("agentidem")) || isGenerated(path) {
			continue
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue // a file no build compiles as it is; the compiler will say
		}
		docs := map[*ast.CommentGroup]bool{}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Doc != nil {
				docs[fn.Doc] = true
				_, _, derrs := directive.FromDoc(fset, withoutIgnores(fn.Doc))
				errs = append(errs, derrs...)
			}
		}
		e, w := strayDirectives(fset, f, docs)
		errs, warns = append(errs, e...), append(warns, w...)
	}
	return errs, warns
}

// exclusionReason says which constraint leaves the file at path out, and
// how to include it.
func exclusionReason(cfg Config, path string) (why, fix string) {
	src, err := os.ReadFile(path)
	if err == nil {
		for _, line := range strings.Split(string(src), "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "package ") {
				break
			}
			if !constraint.IsGoBuild(line) {
				continue
			}
			expr, err := constraint.Parse(line)
			if err != nil {
				break
			}
			var tags []string
			seen := map[string]bool{}
			expr.Eval(func(tag string) bool {
				if !seen[tag] && !knownTag(tag) {
					seen[tag] = true
					tags = append(tags, tag)
				}
				return true
			})
			sort.Strings(tags)
			if len(tags) == 1 && tags[0] == "ignore" {
				return "its " + line + " line", "no build includes it: move the function to a file every build includes, or remove the constraint"
			}
			if len(tags) > 0 {
				return "its " + line + " line", fmt.Sprintf("run agentidem-gen --tags %s to include it", strings.Join(tags, ","))
			}
			return "its " + line + " line", "run agentidem-gen with GOOS/GOARCH set to a platform it builds on to include it"
		}
	}
	base := strings.TrimSuffix(filepath.Base(path), ".go")
	parts := strings.Split(base, "_")
	if n := len(parts); n >= 2 {
		last := parts[n-1]
		if knownOS[last] {
			return "its _" + last + ".go suffix", "run GOOS=" + last + " agentidem-gen to include it"
		}
		if knownArch[last] {
			if n >= 3 && knownOS[parts[n-2]] {
				return "its _" + parts[n-2] + "_" + last + ".go suffix", "run GOOS=" + parts[n-2] + " GOARCH=" + last + " agentidem-gen to include it"
			}
			return "its _" + last + ".go suffix", "run GOARCH=" + last + " agentidem-gen to include it"
		}
	}
	if bytes.Contains(src, []byte(`import "C"`)) {
		return "cgo (CGO_ENABLED=0)", "run with CGO_ENABLED=1 to include it"
	}
	return "a build constraint", "run agentidem-gen with the tags or platform it builds under (--tags)"
}

// knownTag reports whether tag is a GOOS, GOARCH, go version or toolchain
// tag rather than a custom one.
func knownTag(tag string) bool {
	return knownOS[tag] || knownArch[tag] || strings.HasPrefix(tag, "go1.") || tag == "gc" || tag == "gccgo" || tag == "cgo" || tag == "unix"
}

var knownOS = setOf("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos")

var knownArch = setOf("386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le", "ppc64", "ppc64le", "riscv64", "s390x", "sparc64", "wasm")

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// testFiles lists the _test.go files in the directory of pkg.
func testFiles(pkg *packages.Package) []string {
	if len(pkg.GoFiles) == 0 {
		return nil
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(pkg.GoFiles[0]), "*_test.go"))
	sort.Strings(matches)
	return matches
}

// testDecls returns the top-level declarations of the in-package _test.go
// files of pkg (package clause pkg.Name), which go test compiles together
// with the generated file.
func testDecls(pkg *packages.Package) map[string]token.Position {
	out := map[string]token.Position{}
	fset := token.NewFileSet()
	for _, path := range testFiles(pkg) {
		if isGenerated(path) {
			continue // replaced by what this run generates (load)
		}
		_, decls, name := parseAnnotated(fset, path, true)
		if name != pkg.Name {
			continue
		}
		for k, v := range decls {
			if _, dup := out[k]; !dup {
				out[k] = v
			}
		}
	}
	return out
}

// opIndex maps a package ID to the op names declared in its files
// (including its _test.go files), read from the source.
type opIndex struct {
	byID    map[string][]string
	imports map[string][]string
	paths   map[string]string // package ID -> import path
}

// indexOps reads the op names of every package in the dependency graph of
// listed that is not in the standard library.
func indexOps(listed []*packages.Package) *opIndex {
	idx := &opIndex{byID: map[string][]string{}, imports: map[string][]string{}, paths: map[string]string{}}
	fset := token.NewFileSet()
	packages.Visit(listed, nil, func(p *packages.Package) {
		if _, done := idx.byID[p.ID]; done {
			return
		}
		var names []string
		for _, imp := range p.Imports {
			idx.imports[p.ID] = append(idx.imports[p.ID], imp.ID)
		}
		if !isStd(p) {
			files := append([]string(nil), p.GoFiles...)
			files = append(files, testFiles(p)...)
			for _, path := range files {
				funcs, _, _ := parseAnnotated(fset, path, false)
				for _, f := range funcs {
					names = append(names, f.op)
				}
			}
		}
		idx.byID[p.ID] = names
		idx.paths[p.ID] = p.PkgPath
	})
	return idx
}

func isStd(p *packages.Package) bool {
	first, _, _ := strings.Cut(p.PkgPath, "/")
	return !strings.Contains(first, ".") && p.Module == nil
}

// known returns the op names declared in the package with id and in every
// package it imports, directly or not, each with the import paths of the
// packages that declare it, that of the package itself first.
func (idx *opIndex) known(id string) map[string][]string {
	out := map[string][]string{}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, n := range idx.byID[id] {
			if p := idx.paths[id]; !slices.Contains(out[n], p) {
				out[n] = append(out[n], p)
			}
		}
		for _, imp := range idx.imports[id] {
			walk(imp)
		}
	}
	walk(id)
	return out
}
