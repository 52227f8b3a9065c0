package testkit

import (
	"os"
	"path/filepath"
	"sync"
)

// reportDir resolves where a test's reports go: below dir, in the
// package's directory within its module, so that
// `AGENTIDEM_REPORT_DIR=reports go test ./...` writes the reports of
// package ./agent to reports/agent/<Test>.json and those of the module's
// root package to reports/<Test>.json. Two packages may name a test alike
// (TestRefund in ./billing and in ./payments): each keeps its own report.
//
// A relative dir is taken from the root of the module under test (the
// nearest directory above the working directory that holds a go.mod), not
// from the package's directory, where go test runs each test binary: every
// package's reports land in one tree, which `agentidem-gen report reports/`
// reads next. An absolute dir is kept, with the package's directory below
// it. Outside any module, dir is kept as it is.
func reportDir(dir string) string {
	if dir == "" {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	root := cachedModuleRoot(wd)
	if root == "" {
		return dir
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if rel, err := filepath.Rel(root, wd); err == nil && rel != "." {
		dir = filepath.Join(dir, rel)
	}
	return dir
}

// moduleRoots caches moduleRoot by directory: each test that writes a
// report asks, and a test binary runs in one directory (t.Chdir aside).
var moduleRoots sync.Map // string → string

func cachedModuleRoot(dir string) string {
	if root, ok := moduleRoots.Load(dir); ok {
		return root.(string)
	}
	root := moduleRoot(dir)
	moduleRoots.Store(dir, root)
	return root
}

// moduleRoot returns the nearest directory from dir up that holds a
// go.mod, or "".
func moduleRoot(dir string) string {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !fi.IsDir() {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}
