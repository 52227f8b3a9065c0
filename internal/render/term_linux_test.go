package render

import (
	"testing"

	"github.com/agentidem/agentidem-go/internal/ptytest"
)

func TestIsTerminalOnAPTY(t *testing.T) {
	_, tty := ptytest.Open(t)
	if !IsTerminal(tty) {
		t.Fatal("a pseudo-terminal is a terminal")
	}
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "")
	if got := StyleOf(tty); got != (Style{Live: true, Color: true}) {
		t.Errorf("StyleOf(terminal) = %+v", got)
	}
	t.Setenv("NO_COLOR", "1")
	if got := StyleOf(tty); got != (Style{Live: true}) {
		t.Errorf("StyleOf(terminal) with NO_COLOR = %+v", got)
	}
}
