package render

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: what a user's terminal looks like
// to a program.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pty: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pty: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

func TestIsTerminalOnAPTY(t *testing.T) {
	_, tty := openPTY(t)
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
