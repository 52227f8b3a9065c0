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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/examples/invoices"
	"github.com/agentidem/agentidem-go/runtime"
	"golang.org/x/net/html"
)

// updateScreenshot refreshes docs/report.png from the browser test:
//
//	go test ./internal/render -run TestBrowser -args -update-screenshot
var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser test's screenshot to docs/report.png")

// chromium returns the browser binary, or skips when there is none:
// .ci/chromium.sh installs it and exports AGENTIDEM_CHROMIUM, and then a
// missing binary fails the test instead.
func chromium(t *testing.T) string {
	t.Helper()
	bin, required := os.LookupEnv("AGENTIDEM_CHROMIUM")
	if !required || bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		if required {
			// .ci/chromium.sh exported it: the browser is meant to be there.
			t.Fatalf("AGENTIDEM_CHROMIUM=%s: %v", bin, err)
		}
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

// adjustReport runs the real fault suite, schedules included, on the
// invoices example's AdjustAgent: it applies a discount and a credit to one
// invoice in one parallel turn, so the two writes to one entity race.
func adjustReport(t testing.TB) *runtime.Report {
	t.Helper()
	var b *invoices.Billing
	rep, err := runtime.Run(context.Background(), "TestMutualExclusionIsCaught", func(ctx context.Context) error {
		return (&invoices.AdjustAgent{Billing: b}).Run(ctx)
	},
		runtime.Setup(func(context.Context) error { b = invoices.NewBilling(); return nil }),
		runtime.ReplayCommand(func(s string) string {
			return "go test -run '^TestMutualExclusionIsCaught$/^" + strings.ReplaceAll(s, "/", "$/^") + "$' ./examples/invoices"
		}),
	)
	if err != nil {
		t.Fatalf("running the suite: %v", err)
	}
	return rep
}

// checkDOM checks that a page the browser built shows the report: the
// verdict, one section per scenario with one row per call, problems first,
// the calls of error findings marked, the calls of parallel batches shaded.
// It returns the scenario names in page order.
func checkDOM(t *testing.T, doc *html.Node, rep *runtime.Report) []string {
	t.Helper()
	if v, _ := attr(find(doc, "header", "verdict")[0], "data-verdict"); v != Verdict(rep) {
		t.Errorf("verdict %q, want %q", v, Verdict(rep))
	}
	secs := find(doc, "details", "scenario")
	all := scenarios(rep)
	if len(secs) != len(all) {
		t.Fatalf("%d scenarios in the DOM, want %d", len(secs), len(all))
	}
	var order []string
	for _, sec := range secs {
		name, _ := attr(sec, "data-scenario")
		order = append(order, name)
	}
	byName := sections(doc)
	rows := 0
	for _, res := range all {
		sec := byName[res.Scenario]
		calls := find(sec, "details", "call")
		rows += len(calls)
		if len(calls) != len(res.Trace.Ops) {
			t.Errorf("%s: %d timeline rows, want %d", res.Scenario, len(calls), len(res.Trace.Ops))
		}
		var wantMarked, marked, wantBatched, batched []string
		for _, f := range res.Findings {
			if f.Severity == runtime.SeverityError {
				for _, c := range f.Calls {
					if !slices.Contains(wantMarked, c) {
						wantMarked = append(wantMarked, c)
					}
				}
			}
		}
		for _, o := range res.Trace.Ops {
			if o.Batch > 0 {
				wantBatched = append(wantBatched, o.ID+"@"+strconv.Itoa(o.Batch))
			}
		}
		for _, row := range calls {
			id, _ := attr(row, "data-call")
			if len(find(row, "span", "bar", "finding")) > 0 {
				marked = append(marked, id)
			}
			if b, _ := attr(row, "data-batch"); b != "0" && len(find(row, "span", "band")) == 1 {
				batched = append(batched, id+"@"+b)
			}
		}
		slices.Sort(wantMarked)
		slices.Sort(marked)
		if !slices.Equal(marked, wantMarked) {
			t.Errorf("%s: bars marked %q, want the calls of its error findings %q", res.Scenario, marked, wantMarked)
		}
		slices.Sort(wantBatched)
		slices.Sort(batched)
		if !slices.Equal(batched, wantBatched) {
			t.Errorf("%s: shaded rows %q, want the batched calls %q", res.Scenario, batched, wantBatched)
		}
	}
	// Problems lead the timelines.
	seenSafe := false
	for _, sec := range secs {
		status, _ := attr(sec, "data-status")
		if status == statusSafe {
			seenSafe = true
		} else if seenSafe && status != statusInconclusive {
			name, _ := attr(sec, "data-scenario")
			t.Errorf("%s (%s) comes after a safe scenario", name, status)
		}
	}
	t.Logf("DOM: %d scenarios, %d problems, %d timeline rows", len(secs), len(find(doc, "div", "egroup")), rows)
	return order
}

// TestBrowser renders the HTML report of a failing agent of
// examples/invoices, a real run of the fault suite with its schedules, in
// headless chromium and checks the DOM the browser built (see checkDOM), the
// page's own script run under its Content-Security-Policy with no
// violation, then takes a screenshot and checks that the top of the page is
// the red UNSAFE banner.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	rep := adjustReport(t)
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
	assertInert(t, doc)
	order := checkDOM(t, doc, rep)

	// The bug at a glance: one problem, concurrent writes to INV-1, in the
	// schedule that released both calls before either finished; its section
	// is the first timeline, with both calls shaded as batch 1 and marked.
	groups := find(doc, "div", "egroup")
	if len(groups) != 1 {
		t.Fatalf("%d problems under 'What went wrong', want 1", len(groups))
	}
	if code, _ := attr(groups[0], "data-code"); code != runtime.CodeConcurrentWritesEntity {
		t.Errorf("problem %q, want %s", code, runtime.CodeConcurrentWritesEntity)
	}
	if order[0] != "interleaving/s0s1f0f1" {
		t.Errorf("first timeline %q, want the unsafe schedule", order[0])
	}
	first := sections(doc)[order[0]]
	var batch1 []string
	for _, row := range find(first, "details", "call") {
		if b, _ := attr(row, "data-batch"); b == "1" && len(find(row, "span", "bar", "finding")) == 1 {
			id, _ := attr(row, "data-call")
			batch1 = append(batch1, id)
		}
	}
	slices.Sort(batch1)
	if want := []string{"1:applyCredit#1", "1:applyDiscount#1"}; !slices.Equal(batch1, want) {
		t.Errorf("marked calls of batch 1: %q, want %q", batch1, want)
	}

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

// TestBrowserRefund does the same for the refund example's naive agent: a
// lost acknowledgement and a concurrent redelivery each refund twice.
func TestBrowserRefund(t *testing.T) {
	bin := chromium(t)
	rep := naiveReport(t)
	page := filepath.Join(t.TempDir(), "report.html")
	writeFile(t, page, renderHTML(t, rep))
	dom, _ := headless(t, bin, page, "--dump-dom")
	doc := parseHTML(t, dom)
	order := checkDOM(t, doc, rep)
	if want := []string{"lost_acknowledgement/refund#1", "duplicate_delivery/concurrent"}; !slices.Equal(order[:2], want) {
		t.Errorf("timelines start with %q, want %q", order[:2], want)
	}
	if n := len(find(doc, "div", "egroup")); n != 2 {
		t.Errorf("%d problems, want 2: the duplicate refund and the broken invariant", n)
	}
}
