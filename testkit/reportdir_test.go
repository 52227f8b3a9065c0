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
	if got, want := reportDir("reports"), filepath.Join(root, "reports", "agents", "refund"); got != want {
		t.Errorf("reportDir(reports) = %s, want %s", got, want)
	}
	if got, want := reportDir("out/reports"), filepath.Join(root, "out", "reports", "agents", "refund"); got != want {
		t.Errorf("reportDir(out/reports) = %s, want %s", got, want)
	}
	abs := filepath.Join(t.TempDir(), "elsewhere")
	if got, want := reportDir(abs), filepath.Join(abs, "agents", "refund"); got != want {
		t.Errorf("reportDir(%s) = %s, want %s", abs, got, want)
	}
	if got := reportDir(""); got != "" {
		t.Errorf("empty dir became %q", got)
	}
	t.Chdir(root) // the module's root package
	if got, want := reportDir("reports"), filepath.Join(root, "reports"); got != want {
		t.Errorf("at the module root, reportDir(reports) = %s, want %s", got, want)
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

// Two packages of one module, each writing through the env var, write into
// one tree, each in its own directory: a test name they share (TestRefund)
// gives two reports, not one that the other overwrote (or, written at
// once, a file of both).
func TestReportsOfTwoPackagesMeetApart(t *testing.T) {
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
	if da != filepath.Join(root, "reports", "a") || db != filepath.Join(root, "reports", "b", "c") {
		t.Errorf("package a writes to %s, package b/c to %s; want reports/a and reports/b/c under %s", da, db, root)
	}
}

// workingDir answers as os.Getwd does, whatever PWD says: the directory
// itself, another path to it (a symbolic link), another directory, a
// relative path, nothing.
func TestWorkingDirAsGetwd(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	t.Chdir(dir)
	for _, pwd := range []string{dir, link, t.TempDir(), "relative", "", dir + "/"} {
		t.Setenv("PWD", pwd)
		got, err := workingDir()
		want, werr := os.Getwd()
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("PWD=%q: workingDir() = %q, %v; os.Getwd() = %q, %v", pwd, got, err, want, werr)
		}
	}
}
