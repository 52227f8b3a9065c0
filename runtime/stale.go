package runtime

import (
	"fmt"
	"go/scanner"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// A generated file breaks the build when an annotated function's signature
// changed (SignatureChangedRunGoGenerate), but not when only its
// annotation did: with idempotent removed and go generate not run again,
// the old wrapper still declares the op idempotent, and a buggy agent's
// repeats were absorbed where the source says they must not be (red team
// rtV, item 8). Each op the generated file declares records the
// annotation it was made from (Op.Directive); before its first baseline,
// a suite reads the annotated files next to the generated ones and stops
// where they differ, naming both and saying to run go generate.
//
// What cannot be read is not compared: a binary built with -trimpath
// (the generated file's path is then not one to open), a source tree
// that is not there, files generated before Directive was recorded.

// staleDeclarations is the comparison, made once per process: ops are
// declared when their packages are initialized, before any test runs.
var staleDeclarations = sync.OnceValue(func() error {
	declared.mu.Lock()
	ops := slices.Clone(declared.ops)
	declared.mu.Unlock()
	return compareDirectives(ops)
})

// compareDirectives reads the annotated file of each op with a Directive
// and returns a *ConfigError that lists every annotation that differs.
func compareDirectives(ops []*Op) error {
	type source struct {
		path, gen string
		ops       []*Op
	}
	files := map[string]*source{}
	for _, op := range ops {
		if op.Directive == "" || op.genFile == "" || !filepath.IsAbs(op.genFile) {
			continue
		}
		name, _, ok := strings.Cut(op.Pos, ":")
		if !ok || name == "" {
			continue
		}
		path := filepath.Join(filepath.Dir(op.genFile), name)
		if files[path] == nil {
			files[path] = &source{path: path, gen: op.genFile}
		}
		files[path].ops = append(files[path].ops, op)
	}
	var (
		problems []string
		gens     []string
	)
	for _, path := range slices.Sorted(maps.Keys(files)) {
		src := files[path]
		b, err := os.ReadFile(path)
		if err != nil {
			continue // not there to read: nothing to compare
		}
		// Line comments only, as the generator reads them: a line of a
		// block comment or of a raw string that reads like an annotation
		// annotates nothing, and go generate would not make it go away.
		have := map[string][]int{} // annotation -> its lines
		fset := token.NewFileSet()
		var sc scanner.Scanner
		sc.Init(fset.AddFile(path, -1, len(b)), b, nil, scanner.ScanComments)
		for {
			pos, tok, lit := sc.Scan()
			if tok == token.EOF {
				break
			}
			if t := strings.TrimRight(lit, " \t\r"); tok == token.COMMENT && isOpDirective(t) {
				have[t] = append(have[t], fset.Position(pos).Line)
			}
		}
		want := map[string][]*Op{}
		for _, op := range src.ops {
			want[op.Directive] = append(want[op.Directive], op)
		}
		base := filepath.Base(path)
		var here []string
		for _, text := range slices.Sorted(maps.Keys(want)) {
			for _, op := range want[text][min(len(have[text]), len(want[text])):] {
				here = append(here, fmt.Sprintf("the wrapper of %s (%s) was generated from %s, which %s no longer holds", op.declaredName, op.Pos, text, base))
			}
		}
		for _, text := range slices.Sorted(maps.Keys(have)) {
			for _, line := range have[text][min(len(want[text]), len(have[text])):] {
				here = append(here, fmt.Sprintf("%s:%d holds %s, from which no wrapper was generated", base, line, text))
			}
		}
		if len(here) > 0 {
			problems = append(problems, here...)
			if !slices.Contains(gens, src.gen) {
				gens = append(gens, src.gen)
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	dirs := make([]string, len(gens))
	for i, g := range gens {
		dirs[i] = relToWD(filepath.Dir(g))
	}
	return &ConfigError{
		Setting: strings.Join(gens, ", "),
		Want: fmt.Sprintf("generated from annotations the source no longer holds (%s); run go generate in %s, and the suite judges the tools by what their annotations say now",
			strings.Join(problems, "; "), strings.Join(dirs, ", ")),
	}
}

// isOpDirective reports whether t, a trimmed source line, is a read or
// write annotation (ignore belongs to the linter, and is in no op).
func isOpDirective(t string) bool {
	for _, verb := range []string{"//agentidem:read", "//agentidem:write"} {
		if rest, ok := strings.CutPrefix(t, verb); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return true
		}
	}
	return false
}

// relToWD is path relative to the working directory where it is below it
// (a test binary runs in its package's directory), else path.
func relToWD(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	switch rel, err := filepath.Rel(wd, path); {
	case err != nil || strings.HasPrefix(rel, ".."):
	case rel == ".":
		return "."
	default:
		return "./" + filepath.ToSlash(rel)
	}
	return path
}
