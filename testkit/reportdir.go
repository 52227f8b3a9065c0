package testkit

import (
	"os"
	"path/filepath"
)

// reportDir resolves where reports go. A relative dir is taken from the
// root of the module under test (the nearest directory above the working
// directory that holds a go.mod), not from the package's directory, where
// go test runs each test binary: `AGENTIDEM_REPORT_DIR=reports go test ./...`
// run at the module root then writes every package's reports into one
// ./reports, which `agentidem-gen report reports/` reads next. An absolute
// dir, or a working directory outside any module, keeps dir as it is.
func reportDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	for d := wd; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !fi.IsDir() {
			return filepath.Join(d, dir)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
