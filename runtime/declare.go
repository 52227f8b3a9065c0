package runtime

import (
	"path"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
)

// An op's name is what the suite knows it by: calls are counted, faults
// aimed (lost_acknowledgement/Client.Refund#2), repeats judged and replay
// lines written by name. agentidem-gen makes names unique within a package
// only, and its default name, Type.Method, is alike in every package that
// wraps a method of one name: a stripe and a paypal package, each with a
// (*Client).Refund, made two ops named Client.Refund, whose calls the suite
// took for one op's (an agent refunding a split payment once through each
// was a duplicate_write of its baseline, and a fault aimed at the second
// call hit paypal's). Generated code declares every op when its package is
// initialized (Declare), before any test runs: the ops of one name that
// packages of the test binary declare are then known, and each is named
// after its package, whichever tests run.

// declared holds the ops generated code declared, in the order of their
// packages' initialization.
var declared struct {
	mu  sync.Mutex
	ops []*Op
}

// opRef is an op named in an op's After: the op of the package at pkg
// declared with name.
type opRef struct{ pkg, name string }

// Declare registers op, a tool's descriptor that generated code declares
// at its package's initialization, and returns it. Where ops declared by
// two or more packages have one name, each is renamed after its package:
// the last element of its import path (Pkg), the path's major version
// left out (stripe.Client.Refund and paypal.Client.Refund), or the whole
// path where those are alike too. An entry of After is the name of an op
// of the same package, or, written "importpath Name" (a space between),
// of another package: it reads the name that op has, renamed or not.
//
// Declare may be called only while packages are initialized (from the
// initializer of a package-level variable, as generated code does): op
// names are read without a lock once tests run.
func Declare(op *Op) *Op {
	_, file, _, _ := goruntime.Caller(1) // the generated file (stale.go)
	declared.mu.Lock()
	defer declared.mu.Unlock()
	if slices.Contains(declared.ops, op) {
		return op
	}
	op.declaredName = op.Name
	op.genFile = file
	op.afterRefs = make([]opRef, len(op.After))
	for i, a := range op.After {
		if pkg, name, ok := strings.Cut(a, " "); ok {
			op.afterRefs[i] = opRef{pkg, name}
		} else {
			op.afterRefs[i] = opRef{op.Pkg, a}
		}
	}
	declared.ops = append(declared.ops, op)
	qualifyLocked(op.declaredName)
	for _, o := range declared.ops {
		o.resolveAfterLocked()
	}
	return op
}

// qualifyLocked renames the ops declared with name, if packages of more
// than one import path declare one.
func qualifyLocked(name string) {
	var group []*Op
	short := map[string]map[string]bool{} // last element -> import paths
	for _, o := range declared.ops {
		if o.declaredName != name || o.Pkg == "" {
			continue
		}
		group = append(group, o)
		s := pkgElem(o.Pkg)
		if short[s] == nil {
			short[s] = map[string]bool{}
		}
		short[s][o.Pkg] = true
	}
	paths := 0
	for _, ps := range short {
		paths += len(ps)
	}
	if paths < 2 {
		return
	}
	for _, o := range group {
		prefix := pkgElem(o.Pkg)
		if len(short[prefix]) > 1 {
			prefix = o.Pkg
		}
		o.Name = prefix + "." + name
	}
}

// pkgElem is the element of an import path a package is known by: the
// last, or the one before a major version (example.com/stripe/v2).
func pkgElem(p string) string {
	elem := path.Base(p)
	if dir := path.Dir(p); dir != "." && dir != "/" && isMajorVersion(elem) {
		return path.Base(dir)
	}
	return elem
}

func isMajorVersion(elem string) bool {
	if len(elem) < 2 || elem[0] != 'v' {
		return false
	}
	for _, c := range elem[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// resolveAfterLocked writes in After the names the ops it refers to have
// now. A reference to an op not declared (yet, or by code generated before
// Declare) reads its name as written. It writes only what changed: the ops
// of a test binary's packages are read by running suites, and an op
// declared by a test at run time (runtime's own tests) renames only its own
// kind.
func (o *Op) resolveAfterLocked() {
	for i, ref := range o.afterRefs {
		name := ref.name
		for _, t := range declared.ops {
			if t.declaredName == ref.name && t.Pkg == ref.pkg {
				name = t.Name
				break
			}
		}
		if o.After[i] != name {
			o.After[i] = name
		}
	}
}

// SignatureChangedRunGoGenerate returns f. The file agentidem-gen writes
// passes each annotated function to it as the function type the wrapper
// was generated for, so that a signature changed since breaks the build
// with an error that names it: "cannot use (*Client).Refund (value of type
// func(...)) as func(...) value in argument to
// agentidemrt.SignatureChangedRunGoGenerate[...]". Run go generate.
func SignatureChangedRunGoGenerate[F any](f F) F { return f }
