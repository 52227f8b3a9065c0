package render

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The chromium line of docs/reports.md, run as it is written (as root in
// CI, which is why it carries --no-sandbox) on a rendered report, writes a
// PNG screenshot.
func TestDocsChromiumCommandRunsVerbatim(t *testing.T) {
	bin := chromium(t)
	doc, err := os.ReadFile("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "chromium ") {
			line = l
		}
	}
	if line == "" {
		t.Fatal("docs/reports.md shows no chromium command")
	}
	if !strings.Contains(line, "--no-sandbox") {
		t.Errorf("%q: Chromium refuses to run as root without --no-sandbox", line)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "report.html"), renderHTML(t, naiveReport(t)))
	// The documented line, with the test's chromium binary for the name.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", bin+strings.TrimPrefix(line, "chromium"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	png, err := os.ReadFile(filepath.Join(dir, "report.png"))
	if err != nil {
		t.Fatalf("%s wrote no screenshot: %v", line, err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("report.png is not a PNG (%d bytes)", len(png))
	}
}
