package quickstart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readme is the README at the root of this checkout.
const readme = "../../README.md"

// section returns the README's text from the heading that starts with
// title to the next heading of the same level.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	i := strings.Index(doc, "\n## "+title)
	if i < 0 {
		t.Fatalf("README has no section %q", title)
	}
	s := doc[i+1:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	return s
}

// block is one fenced code block of the README: its language, its text,
// and the file name given in the line just above it ("`bank/bank.go`:").
type block struct {
	lang, file, text string
}

var fence = regexp.MustCompile("(?m)^(?:`([^`\n]+)`:\n\n)?```(\\w*)\n((?s:.*?))^```\n")

func blocks(s string) []block {
	var out []block
	for _, m := range fence.FindAllStringSubmatch(s, -1) {
		out = append(out, block{lang: m[2], file: m[1], text: m[3]})
	}
	return out
}

// checkout is the root of this repository.
func checkout(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestREADMEFromAModuleOfOnesOwn writes the README's files into a new
// module, runs its commands one line at a time as a shell would, and checks
// that go test prints the failure the README shows, that the report
// commands find the reports at the module root, and that the linter lines
// run. The only thing added to the README's steps is a replace directive to
// this checkout, right after go mod init. The steps run with GOPROXY=off:
// every module comes from the module cache, which go mod download in a
// scratch module fills first (through the module proxy, the only network
// CI has).
func TestREADMEFromAModuleOfOnesOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the generator and the linter in a fresh module")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	src, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	walk := section(t, doc, "From a module of your own")
	lint := section(t, doc, "The linter")

	dir := t.TempDir()
	var steps []string
	var want string
	for _, b := range blocks(walk) {
		switch {
		case b.file != "":
			p := filepath.Join(dir, filepath.FromSlash(b.file))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(b.text), 0o644); err != nil {
				t.Fatal(err)
			}
		case b.lang == "sh":
			steps = append(steps, lines(b.text)...)
		case b.lang == "text" && want == "":
			want = b.text
		}
	}
	for _, b := range blocks(lint) {
		if b.lang == "sh" {
			steps = append(steps, lines(b.text)...)
			break
		}
	}
	if len(steps) < 6 || want == "" {
		t.Fatalf("README walkthrough has %d commands and failure text %q: the test no longer finds them", len(steps), want)
	}

	fillModuleCache(t)

	env := append(os.Environ(),
		"GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOWORK=off",
		"AGENTIDEM_REPORT_DIR=", "AGENTIDEM_SCHEDULE=", "NO_COLOR=1")
	run := func(line string) (string, int) {
		t.Helper()
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = dir
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("%s: %v", line, err)
			}
			code = ee.ExitCode()
		}
		return out.String(), code
	}

	var testOut, reportOut string
	for _, line := range steps {
		out, code := run(line)
		t.Logf("$ %s\n%s", line, out)
		isTest := strings.Contains(line, "go test ")
		switch {
		case isTest && code != 1:
			t.Fatalf("%s: exit %d, want 1 (the README's agent is buggy)\n%s", line, code, out)
		case !isTest && code != 0:
			t.Fatalf("%s: exit %d\n%s", line, code, out)
		}
		if isTest && testOut == "" {
			testOut = out
		}
		if strings.Contains(line, "agentidem-gen report") {
			reportOut = out
		}
		if strings.HasPrefix(line, "go mod init ") {
			if out, code := run("go mod edit -require=github.com/agentidem/agentidem-go@v0.0.0 -replace=github.com/agentidem/agentidem-go=" + checkout(t)); code != 0 {
				t.Fatalf("adding the replace: %s", out)
			}
		}
	}

	for _, w := range strings.Split(strings.TrimSpace(want), "\n") {
		w = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(w), "..."))
		if !strings.Contains(testOut, w) {
			t.Errorf("go test does not print the README's line\n\t%s\noutput:\n%s", w, testOut)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bank", "agentidem_gen.go")); err != nil {
		t.Errorf("go generate wrote no wrappers: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "reports", "bank", "TestRefund.json")); err != nil {
		t.Errorf("no report in reports/bank/ at the module root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "bank", "reports")); err == nil {
		t.Error("reports written into the package's folder")
	}
	if !strings.Contains(reportOut, "agentidem TestRefund: UNSAFE") {
		t.Errorf("agentidem-gen report does not summarize the report:\n%s", reportOut)
	}
}

// lines returns the commands of a sh block: its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// fillModuleCache puts in the module cache, through the module proxy, every
// module that the walkthrough's module graph may read. Building this
// repository does not fetch them all: a module needed only on Windows, or
// only in the unpruned graph of a dependency that the walkthrough's go.mod
// lists directly, is never downloaded here. A scratch module that requires
// each module of the checkout's build list directly has that whole graph;
// go mod download all fetches it, and neither the checkout nor the
// walkthrough's go.sum is touched.
func fillModuleCache(t *testing.T) {
	t.Helper()
	gocmd := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if dir == checkout(t) {
			cmd.Env = append(cmd.Env, "GOFLAGS=-mod=readonly")
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s (filling the module cache): %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	list := gocmd(checkout(t), "list", "-m", "-f", "{{if not .Main}}{{.Path}}@{{.Version}}{{end}}", "all")
	scratch := t.TempDir()
	gocmd(scratch, "mod", "init", "example.com/scratch")
	edit := []string{"mod", "edit", "-require=github.com/agentidem/agentidem-go@v0.0.0",
		"-replace=github.com/agentidem/agentidem-go=" + checkout(t)}
	for _, m := range strings.Fields(list) {
		edit = append(edit, "-require="+m)
	}
	gocmd(scratch, edit...)
	gocmd(scratch, "mod", "download", "all")
}
