package testkit

import (
	"bytes"
	"errors"
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

// A process without a controlling terminal does not gain one: /dev/tty is
// tried once, not once per suite.
func TestNoTerminalIsTriedOnce(t *testing.T) {
	restoreOpen, restoreFailed, restoreVerbose := openDevTTY, ttyFailed.Load(), verbose
	t.Cleanup(func() { openDevTTY, verbose = restoreOpen, restoreVerbose; ttyFailed.Store(restoreFailed) })
	ttyFailed.Store(nil)
	verbose = func() bool { return false } // go test -v shows no progress, and tries no terminal
	tries := 0
	openDevTTY = func() (*os.File, error) {
		tries++
		return nil, errors.New("open /dev/tty: no such device or address")
	}
	for range 3 {
		if p := startProgress("T", 3); p != nil {
			t.Fatal("progress without a terminal")
		}
	}
	if tries != 1 {
		t.Fatalf("/dev/tty was tried %d times by 3 suites, want once", tries)
	}
}
