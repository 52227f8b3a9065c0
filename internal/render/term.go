package render

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Style is how output to one stream may look.
type Style struct {
	// Live: the stream is an interactive terminal, so progress may redraw
	// one line in place.
	Live bool
	// Color: ANSI colors are welcome.
	Color bool
}

// Decide picks the style of a stream: live progress only on a terminal
// whose TERM is not "dumb", color only when it is live and NO_COLOR is unset
// or empty (https://no-color.org). Everything else, pipes, files and CI
// logs, gets plain text.
func Decide(isTerminal bool, getenv func(string) string) Style {
	if !isTerminal || getenv("TERM") == "dumb" {
		return Style{}
	}
	return Style{Live: true, Color: getenv("NO_COLOR") == ""}
}

// StyleOf decides the style of w from the process environment: see Decide.
func StyleOf(w io.Writer) Style { return Decide(IsTerminal(w), os.Getenv) }

// IsTerminal reports whether w is an interactive terminal. Files, pipes,
// buffers and devices such as /dev/null are not.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

// Progress shows the steps of a long job. On a live stream it redraws one
// status line ("[3/12] lost_acknowledgement/refund#1"); on a plain stream
// it prints nothing but the lines passed to Done, so logs stay clean.
type Progress struct {
	w     io.Writer
	style Style
	total int
	n     int
	drawn bool
}

// NewProgress returns a progress display on w in the given style, for a job
// of total steps (0 when unknown).
func NewProgress(w io.Writer, style Style, total int) *Progress {
	return &Progress{w: w, style: style, total: total}
}

// Step records the start of the next step, named msg.
func (p *Progress) Step(msg string) {
	p.n++
	if !p.style.Live {
		return
	}
	counter := fmt.Sprintf("[%d]", p.n)
	if p.total > 0 {
		counter = fmt.Sprintf("[%d/%d]", p.n, p.total)
	}
	if p.style.Color {
		counter = ansiDim + counter + ansiReset
	}
	// \r and erase-line redraw the status line in place.
	fmt.Fprintf(p.w, "\r\x1b[K%s %s", counter, shorten(clean(msg), 100))
	p.drawn = true
}

// Drop takes n steps off the total, for steps that will not run after
// all (agentidem-gen report renders no page for a file it skipped as not
// a report), so that the last step still reads [total/total].
func (p *Progress) Drop(n int) {
	if p.total > 0 {
		p.total = max(p.total-n, p.n)
	}
}

// Done clears the status line and prints msg on its own line (nothing when
// msg is empty).
func (p *Progress) Done(msg string) {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
	if msg != "" {
		fmt.Fprintln(p.w, strings.TrimRight(msg, "\n"))
	}
}
