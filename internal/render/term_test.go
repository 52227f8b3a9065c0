package render

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		name string
		tty  bool
		env  func(string) string
		want Style
	}{
		{"terminal", true, env("TERM", "xterm-256color"), Style{Live: true, Color: true}},
		{"terminal NO_COLOR", true, env("TERM", "xterm", "NO_COLOR", "1"), Style{Live: true}},
		{"terminal empty NO_COLOR", true, env("TERM", "xterm", "NO_COLOR", ""), Style{Live: true, Color: true}},
		{"dumb terminal", true, env("TERM", "dumb"), Style{}},
		{"pipe", false, env("TERM", "xterm"), Style{}},
		{"pipe NO_COLOR", false, env("NO_COLOR", "1"), Style{}},
	}
	for _, c := range cases {
		if got := Decide(c.tty, c.env); got != c.want {
			t.Errorf("%s: Decide = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is not a terminal")
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("a file is not a terminal")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if IsTerminal(null) {
		t.Error("/dev/null is a character device, not a terminal")
	}
}

func TestProgress(t *testing.T) {
	var live bytes.Buffer
	p := NewProgress(&live, Style{Live: true}, 2)
	p.Step("reading a.json")
	p.Step("rendering \x1b[2Jhtml")
	p.Done("wrote out.html")
	want := "\r\x1b[K[1/2] reading a.json\r\x1b[K[2/2] rendering \\u001b[2Jhtml\r\x1b[Kwrote out.html\n"
	if live.String() != want {
		t.Errorf("live progress %q, want %q", live.String(), want)
	}

	var plain bytes.Buffer
	p = NewProgress(&plain, Style{}, 2)
	p.Step("reading a.json")
	p.Step("rendering html")
	p.Done("wrote out.html")
	if plain.String() != "wrote out.html\n" {
		t.Errorf("plain progress %q: only the final line, no redraws", plain.String())
	}

	// Steps dropped on the way come off the total.
	var dropped bytes.Buffer
	p = NewProgress(&dropped, Style{Live: true}, 4)
	p.Step("reading golden.json")
	p.Drop(2)
	p.Step("rendering html")
	if want := "\r\x1b[K[1/4] reading golden.json\r\x1b[K[2/2] rendering html"; dropped.String() != want {
		t.Errorf("progress after Drop %q, want %q", dropped.String(), want)
	}

	var colored bytes.Buffer
	p = NewProgress(&colored, Style{Live: true, Color: true}, 0)
	p.Step("x")
	if !strings.Contains(colored.String(), ansiDim+"[1]"+ansiReset) {
		t.Errorf("colored progress %q", colored.String())
	}
}
