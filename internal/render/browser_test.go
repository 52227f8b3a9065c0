package render

import (
	"bytes"
	"context"
	"flag"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// updateScreenshot refreshes docs/report.png from the browser test:
//
//	go test ./internal/render -run TestBrowser -update-screenshot
var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser test's screenshot to docs/report.png")

// chromium returns the browser binary, or skips: .ci/chromium.sh installs it.
func chromium(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("AGENTIDEM_CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("browser test skipped: no chromium at %s (run .ci/chromium.sh as root to install Debian's chromium, or set AGENTIDEM_CHROMIUM)", bin)
	}
	return bin
}

// headless runs chromium on a local file with no network, no profile and no
// background services, with extra flags for the output.
func headless(t *testing.T, bin, page string, extra ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0",
	}, extra...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, errb.Bytes())
	}
	return out.Bytes(), errb.Bytes()
}

// TestBrowser renders the HTML report of the refund example's naive agent,
// a real failing run of the fault suite, in headless chromium and checks
// the DOM the browser built: the verdict, one section per scenario, one
// timeline row per call, the unsafe scenarios first, the duplicate refunds
// marked, the page's own script run under its Content-Security-Policy with
// no violation. It then takes a screenshot and checks that the top of the
// page is the red UNSAFE banner.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	rep := naiveReport(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	writeFile(t, page, renderHTML(t, rep))

	dom, logs := headless(t, bin, page, "--dump-dom")
	doc := parseHTML(t, dom)
	if v, _ := attr(find(doc, "html")[0], "data-js"); v != "ready" {
		t.Errorf("the page's script did not run (data-js=%q): is its CSP hash wrong?", v)
	}
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.Contains(line, "Content Security Policy") || strings.Contains(line, "Uncaught") {
			t.Errorf("browser console: %s", line)
		}
	}
	if v, _ := attr(find(doc, "header", "verdict")[0], "data-verdict"); v != VerdictUnsafe {
		t.Errorf("verdict %q, want UNSAFE", v)
	}
	secs := find(doc, "details", "scenario")
	all := scenarios(rep)
	if len(secs) != len(all) {
		t.Fatalf("%d scenarios in the DOM, want %d", len(secs), len(all))
	}
	var unsafe []string
	rows, calls := 0, 0
	for i, res := range all {
		n := len(find(secs[i], "details", "call"))
		rows += n
		calls += len(res.Trace.Ops)
		if n != len(res.Trace.Ops) {
			t.Errorf("%s: %d timeline rows, want %d", res.Scenario, n, len(res.Trace.Ops))
		}
		if s, _ := attr(secs[i], "data-status"); s == statusUnsafe {
			unsafe = append(unsafe, res.Scenario)
		}
	}
	if !slices.Equal(unsafe, []string{"lost_acknowledgement/refund#1", "duplicate_delivery/concurrent"}) {
		t.Errorf("unsafe scenarios %q", unsafe)
	}
	// What went wrong: two problems (the duplicate refund and the broken
	// invariant), each linked to both unsafe scenarios.
	groups := find(doc, "div", "egroup")
	if len(groups) != 2 {
		t.Errorf("%d problems under 'What went wrong', want 2", len(groups))
	}
	for _, g := range groups {
		if n := len(find(g, "a", "chip")); n != 2 {
			t.Errorf("a problem links to %d scenarios, want 2", n)
		}
	}
	var errs int
	for _, f := range rep.Findings {
		if f.Severity == runtime.SeverityError {
			errs++
		}
	}
	if n := len(find(doc, "li", "finding", "sev-error")); n != errs {
		t.Errorf("%d error findings in the scenarios, want %d", n, errs)
	}
	marked := 0
	for _, sec := range secs {
		marked += len(find(sec, "span", "bar", "finding"))
	}
	if marked != 4 {
		t.Errorf("%d bars marked by findings, want 4 (two refunds in each unsafe scenario)", marked)
	}
	t.Logf("DOM: %d scenarios, %d unsafe, %d error findings, %d timeline rows", len(secs), len(unsafe), errs, rows)

	shot := filepath.Join(dir, "report.png")
	headless(t, bin, page, "--hide-scrollbars", "--window-size=1400,1000", "--screenshot="+shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, 1400, 1000) {
		t.Errorf("screenshot is %v", got)
	}
	// The verdict banner fills the top of the page in red.
	r, g, bl, _ := img.At(700, 4).RGBA()
	if r>>8 < 0xa0 || g>>8 > 0x60 || bl>>8 > 0x60 {
		t.Errorf("top of the page is rgb(%d,%d,%d), want the red UNSAFE banner", r>>8, g>>8, bl>>8)
	}
	if *updateScreenshot {
		writeFile(t, filepath.Join("..", "..", "docs", "report.png"), b)
	}
}
