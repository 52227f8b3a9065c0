package testkit

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestProgressWaitsASecond: a short suite draws nothing; a long one draws
// "[i/n] test scenario" and erases it.
func TestProgressWaitsASecond(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{tty: nopCloser{&buf}, test: "TestRefund", total: 5, n: 1, start: now, now: func() time.Time { return now }}
	p.step("lost_acknowledgement/refund#1")
	p.clear()
	if buf.Len() != 0 {
		t.Fatalf("drew %q before a second had passed", buf.String())
	}
	now = now.Add(1500 * time.Millisecond)
	p.step("crash_restart/refund#1")
	if got, want := buf.String(), "\r\x1b[K[3/5] TestRefund crash_restart/refund#1"; got != want {
		t.Errorf("drew %q, want %q", got, want)
	}
	p.done()
	if !strings.HasSuffix(buf.String(), "\r\x1b[K") {
		t.Errorf("the line was not erased: %q", buf.String())
	}
	var nilp *progress
	nilp.step("x")
	nilp.clear()
	nilp.done()
}

// TestProgressNeedsATerminal: a pipe (or no terminal at all) gets nothing,
// and neither does go test -v.
func TestProgressNeedsATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	restore := openTTY
	t.Cleanup(func() { openTTY = restore })
	openTTY = func() (io.WriteCloser, error) { return w, nil }
	if p := startProgress("T", 3); p != nil {
		t.Error("progress on a pipe")
	}
	openTTY = func() (io.WriteCloser, error) { return nil, os.ErrNotExist }
	if p := startProgress("T", 3); p != nil {
		t.Error("progress without a terminal")
	}
}
