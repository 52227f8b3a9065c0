package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReportDirIsTakenFromTheModuleRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "agents", "refund")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg) // where go test runs the package's test binary
	if got, want := reportDir("reports"), filepath.Join(root, "reports"); got != want {
		t.Errorf("reportDir(reports) = %s, want %s", got, want)
	}
	if got, want := reportDir("out/reports"), filepath.Join(root, "out", "reports"); got != want {
		t.Errorf("reportDir(out/reports) = %s, want %s", got, want)
	}
	abs := filepath.Join(t.TempDir(), "elsewhere")
	if got := reportDir(abs); got != abs {
		t.Errorf("absolute dir changed to %s", got)
	}
	if got := reportDir(""); got != "" {
		t.Errorf("empty dir became %q", got)
	}
}

func TestReportDirOutsideAModuleStaysRelative(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "go.mod")); err == nil {
		t.Skip("the temp dir is inside a module")
	}
	t.Chdir(dir)
	if got := reportDir("reports"); got != "reports" {
		t.Errorf("reportDir(reports) = %s outside a module, want it unchanged", got)
	}
}

// Two packages of one module, each writing through the env var, end up in
// the same directory.
func TestReportsOfTwoPackagesMeet(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"a", "b/c"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(root, "a"))
	da := reportDir("reports")
	t.Chdir(filepath.Join(root, "b", "c"))
	db := reportDir("reports")
	if da != db {
		t.Errorf("package a writes to %s, package b/c to %s", da, db)
	}
}
