package testkit

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/agentidem/agentidem-go/internal/render"
)

// progressDelay is how long a suite runs before it shows progress: a short
// suite says nothing.
var progressDelay = time.Second

// openTTY opens the terminal of the person running go test. go test pipes
// a test binary's output (and buffers it when given packages), so the
// binary's own stdout is never that terminal; the controlling terminal is,
// when there is one. CI jobs, cron and nohup have none, so they get nothing.
var openTTY = func() (io.WriteCloser, error) {
	if err := ttyFailed.Load(); err != nil {
		return nil, *err
	}
	f, err := openDevTTY()
	if err != nil {
		ttyFailed.Store(&err)
		return nil, err
	}
	return f, nil
}

// ttyFailed keeps the error of the first attempt to open /dev/tty that
// failed: a process without a controlling terminal does not gain one, and
// each attempt is a system call per suite (some 20 us in a VM, a twentieth
// of a seven-scenario suite).
var ttyFailed atomic.Pointer[error]

var openDevTTY = func() (*os.File, error) { return os.OpenFile("/dev/tty", os.O_WRONLY, 0) }

// progress redraws one status line on the terminal while a suite runs:
// "[7/19] TestRefund crash_restart/refund#1". It writes only to a live
// terminal (see render.Decide: not when TERM is dumb; no color under
// NO_COLOR), never into the test's output, and never with go test -v,
// whose own lines already show each scenario. A nil *progress does
// nothing.
type progress struct {
	mu    sync.Mutex
	tty   io.WriteCloser
	color bool
	test  string
	total int
	n     int
	start time.Time
	now   func() time.Time
	drawn bool
}

// startProgress returns the progress display of a suite of total
// scenarios, or nil when there is no terminal to draw on.
func startProgress(test string, total int) *progress {
	if verbose() {
		return nil
	}
	tty, err := openTTY()
	if err != nil {
		return nil
	}
	style := render.Decide(render.IsTerminal(tty), os.Getenv)
	if !style.Live {
		tty.Close()
		return nil
	}
	return &progress{tty: tty, color: style.Color, test: test, total: total, n: 1, start: time.Now(), now: time.Now}
}

// verbose reports whether go test runs with -v (or -json, which implies it).
var verbose = func() bool {
	f := flag.Lookup("test.v")
	if f == nil {
		return false
	}
	v := f.Value.String()
	return v != "" && v != "false"
}

// step counts the next scenario, named name, and shows it once the suite
// has run for progressDelay.
func (p *progress) step(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.now().Sub(p.start) < progressDelay {
		return
	}
	counter := fmt.Sprintf("[%d/%d]", p.n, max(p.total, p.n))
	if p.color {
		counter = "\x1b[2m" + counter + "\x1b[0m"
	}
	line := printable(p.test + " " + name)
	if len(line) > 100 {
		line = line[:97] + "..."
	}
	fmt.Fprintf(p.tty, "\r\x1b[K%s %s", counter, line)
	p.drawn = true
}

// clear erases the status line, so that the test's own output starts on
// a clean line.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.tty, "\r\x1b[K")
		p.drawn = false
	}
}

// done erases the line and lets go of the terminal.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.clear()
	p.tty.Close()
}

// printable drops control characters (a test or op name cannot move the
// cursor).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}
