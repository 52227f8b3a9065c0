package runtime

import "testing"

// withoutClocks leaves out the moments no call was given, and nothing
// else: a date alone, a moment the agent passed, a value that only starts
// like a moment or is cut short.
func TestWithoutClocks(t *testing.T) {
	for _, c := range []struct {
		in    string
		named string
		want  string // "" for in unchanged
	}{
		{`{"at":"2026-12-03T18:14:12.123Z","id":1}`, "", `{"at":"\u0000clock","id":1}`},
		{`[{"at":"2026-12-03 18:14:12"}]`, "", `[{"at":"\u0000clock"}]`},
		{`{"at":"2026-12-03T18:14:12Z"}`, "2026-12-03T18:14:12Z", ""},
		{`{"due":"2026-12-03","n":"2026-12-03T18:1"}`, "", ""},
		{`{"k":"x2026-12-03T18:14:12Z"}`, "", ""},
	} {
		named := map[string]bool{c.named: c.named != ""}
		in, _ := decodeState(c.in)
		want := encode(in)
		if c.want != "" {
			v, _ := decodeState(c.want)
			want = encode(v)
		}
		if got := withoutClocks(c.in, named); got != want {
			t.Errorf("withoutClocks(%s) = %q, want %q", c.in, got, want)
		}
	}
	for s, want := range map[string]bool{
		`{"at":"2026-12-03T18:14:12Z"}`: true,
		`{"due":"2026-12-03"}`:          false,
		`"2026-12-03 18:14"`:            false,
	} {
		if got := holdsClock(s); got != want {
			t.Errorf("holdsClock(%s) = %v, want %v", s, got, want)
		}
	}
}
