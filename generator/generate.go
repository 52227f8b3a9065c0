package generator

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/packages"
)

// File is one generated file: its path and content, or, with Remove, a stale
// generated file in a package that no longer has annotations.
type File struct {
	Path   string
	Data   []byte
	Remove bool
}

// Output is what Generate produced. Nothing is written until Write.
type Output struct {
	Files []File
	// Packages holds the IR, in package order, for callers that want it.
	Packages []*Package
	// Warnings are problems that do not stop generation, each
	// "file:line:col: warning: message".
	Warnings []string
}

// Generate loads the packages matched by patterns, validates their
// directives and renders one file per package that has annotated functions.
// It returns an Errors listing every problem it found when any were found,
// and then no Output.
func Generate(cfg Config, patterns ...string) (*Output, error) {
	pkgs, err := load(cfg, patterns)
	if err != nil {
		return nil, err
	}
	var errs Errors
	out := &Output{}
	for _, pkg := range pkgs {
		// Type errors are expected: the agent code calls wrappers that do
		// not exist until this run writes them. Errors that stop loading
		// (syntax, missing packages) are reported; a type error that
		// touches an annotated function is reported by buildPackage.
		var typeErrs []packages.Error
		fatal := false
		var compileErrs []error
		for _, e := range pkg.Errors {
			switch {
			case e.Kind == packages.TypeError:
				typeErrs = append(typeErrs, e)
			case strings.HasPrefix(e.Msg, "# "):
				// The compiler's report of the same type errors, from
				// building export data.
				compileErrs = append(compileErrs, fmt.Errorf("%s", e.Msg))
			default:
				errs = append(errs, fmt.Errorf("%s", e.Error()))
				fatal = true
			}
		}
		if len(typeErrs) == 0 && len(compileErrs) > 0 {
			errs = append(errs, compileErrs...)
			fatal = true
		}
		if fatal || pkg.Types == nil || pkg.TypesInfo == nil {
			continue
		}
		p, perrs, warns := buildPackage(pkg, typeErrs)
		out.Warnings = append(out.Warnings, warns...)
		if len(perrs) > 0 {
			errs = append(errs, perrs...)
			continue
		}
		if p.Dir == "" {
			continue
		}
		path := filepath.Join(p.Dir, FileName)
		if len(p.Ops) == 0 {
			if isGenerated(path) {
				out.Files = append(out.Files, File{Path: path, Remove: true})
			}
			continue
		}
		data, err := emit(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.Packages = append(out.Packages, p)
		out.Files = append(out.Files, File{Path: path, Data: data})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// Write writes every file atomically, or removes a stale one. It never
// replaces or removes a file that agentidem-gen did not write.
func (o *Output) Write() error {
	var errs Errors
	for _, f := range o.Files {
		if f.Remove {
			if isGenerated(f.Path) {
				if err := os.Remove(f.Path); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		if err := writeAtomic(f.Path, f.Data); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Stale returns the paths whose content on disk differs from the output:
// missing, different, or due for removal.
func (o *Output) Stale() []string {
	var stale []string
	for _, f := range o.Files {
		old, err := os.ReadFile(f.Path)
		switch {
		case f.Remove:
			stale = append(stale, f.Path)
		case err != nil || !bytes.Equal(old, f.Data):
			stale = append(stale, f.Path)
		}
	}
	return stale
}
