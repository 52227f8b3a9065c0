package testkit

import (
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"syscall"
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
	wd, err := workingDir()
	if err != nil {
		return dir
	}
	key := reportDirKey{dir, wd}
	if d, ok := reportDirs.Load(key); ok {
		return d.(string)
	}
	d := dir
	if root := moduleRoot(wd); root != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		if rel, err := filepath.Rel(root, wd); err == nil && rel != "." {
			d = filepath.Join(d, rel)
		}
	}
	reportDirs.Store(key, d)
	return d
}

// reportDirs caches reportDir by its dir and the working directory: each
// test that writes a report asks, and a test binary runs in one directory
// (t.Chdir aside), so the module root is looked up once, not by a stat of
// each directory up to it per test.
var reportDirs sync.Map // reportDirKey → string

type reportDirKey struct{ dir, wd string }

// workingDir is os.Getwd, which on Unix takes the environment's PWD when it
// names the working directory, and finds out with a stat of "." and one of
// PWD: two system calls, where asking for the working directory is one
// (getcwd), and reportDir asks before each report. In a virtual machine,
// where a system call costs a microsecond or more, those and the paths
// joined again made opening the report file take a median of 32 µs of the
// ten-write suite under TestAgent (GOMAXPROCS=1, timed inside the suite),
// against 16 µs now. The working directory is asked for first: where PWD
// is that very path, as go test sets it, or is unset or relative, os.Getwd
// would return it too; where PWD is another path to the directory (through
// a symbolic link), os.Getwd decides, as before.
func workingDir() (string, error) {
	if !syscall.ImplementsGetwd || goruntime.GOOS == "windows" || goruntime.GOOS == "plan9" {
		return os.Getwd()
	}
	wd, err := syscall.Getwd()
	if err != nil {
		return os.Getwd()
	}
	if pwd := os.Getenv("PWD"); pwd != "" && pwd[0] == '/' && pwd != wd {
		return os.Getwd()
	}
	return wd, nil
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
