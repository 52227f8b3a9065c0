package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/internal/ptytest"
	"github.com/agentidem/agentidem-go/testkit/internal/tools"
)

// keepOpen is the terminal as the suite sees it: the test closes it.
type keepOpen struct{ *os.File }

func (keepOpen) Close() error { return nil }

// quietT is a TB that keeps what it is told.
type quietT struct {
	mu   sync.Mutex
	logs []string
}

func (q *quietT) Helper()      {}
func (q *quietT) Name() string { return "TestProgress" }
func (q *quietT) Errorf(f string, args ...any) {
	q.mu.Lock()
	q.logs = append(q.logs, fmt.Sprintf(f, args...))
	q.mu.Unlock()
}
func (q *quietT) Logf(f string, args ...any) { q.Errorf(f, args...) }

// suiteOnPTY runs a suite with progress drawn on a pseudo-terminal from
// the start and returns what the terminal received and what the test got.
func suiteOnPTY(t *testing.T, env map[string]string) (screen string, test []string) {
	t.Helper()
	master, slave := ptytest.Open(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
	restoreTTY, restoreDelay, restoreVerbose := openTTY, progressDelay, verbose
	t.Cleanup(func() { openTTY, progressDelay, verbose = restoreTTY, restoreDelay, restoreVerbose })
	openTTY = func() (io.WriteCloser, error) { return keepOpen{slave}, nil }
	progressDelay = 0
	verbose = func() bool { return false }

	// The master is read until an end mark written after the suite: a pty
	// may drop what is unread when its slave side closes.
	const end = "<end of test>"
	var out bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for !strings.Contains(out.String(), end) {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	var l *tools.Ledger
	qt := &quietT{}
	Run(qt, func(ctx context.Context) error {
		for range 3 {
			if err := l.PostTraced(ctx, "entry-1", "hello"); err == nil {
				return nil
			}
		}
		return nil
	}, Setup(func(context.Context) error { l = &tools.Ledger{}; return nil }), NoSummary())
	if _, err := slave.WriteString(end); err != nil {
		t.Fatal(err)
	}
	<-read
	slave.Close()
	return strings.TrimSuffix(out.String(), end), qt.logs
}

func TestProgressOnATerminal(t *testing.T) {
	screen, logs := suiteOnPTY(t, map[string]string{"TERM": "xterm", "NO_COLOR": ""})
	for _, want := range []string{"\x1b[2m[2/", "TestProgress lost_acknowledgement/post#1", "TestProgress duplicate_delivery/concurrent"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the terminal did not show %q: %q", want, screen)
		}
	}
	if !strings.HasSuffix(screen, "\r\x1b[K") {
		t.Errorf("the status line was left on the terminal: %q", screen)
	}
	for _, l := range logs {
		if strings.Contains(l, "\x1b[") || strings.Contains(l, "[2/") {
			t.Errorf("progress reached the test's output: %q", l)
		}
	}
}

func TestProgressNoColor(t *testing.T) {
	screen, _ := suiteOnPTY(t, map[string]string{"TERM": "xterm", "NO_COLOR": "1"})
	if !strings.Contains(screen, "[2/") || strings.Contains(screen, "\x1b[2m") {
		t.Errorf("NO_COLOR: %q", screen)
	}
}

func TestProgressDumbTerminal(t *testing.T) {
	screen, _ := suiteOnPTY(t, map[string]string{"TERM": "dumb"})
	if screen != "" {
		t.Errorf("TERM=dumb got %q", screen)
	}
}
