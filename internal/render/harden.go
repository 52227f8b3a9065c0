package render

import "strings"

// isBidi reports whether r is a Unicode bidirectional control: embeddings,
// overrides and isolates (U+202A..U+202E, U+2066..U+2069) and the marks
// U+200E, U+200F and U+061C. In text from a trace they can make a reader see
// another value than the one recorded ("Trojan Source"), so renderers show
// them escaped.
func isBidi(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// hasBidi is strings.ContainsFunc(s, isBidi), by bytes: it looks for the
// UTF-8 encodings of the runes isBidi accepts. A lead byte always starts
// a rune where ContainsFunc decodes one, so the two agree on any input,
// invalid UTF-8 included. Text runs it over the whole summary, where
// ContainsFunc called isBidi through a func value for each byte; the lead
// bytes are found with strings.IndexByte, many bytes a step (a byte a
// step took a tenth of the ten-write suite's summary).
func hasBidi(s string) bool {
	for t := s; ; {
		i := strings.IndexByte(t, 0xd8) // U+061C is D8 9C
		if i < 0 || i+1 >= len(t) {
			break
		}
		if t[i+1] == 0x9c {
			return true
		}
		t = t[i+1:]
	}
	// U+200E, U+200F: E2 80 8E..8F; U+202A..U+202E: E2 80 AA..AE;
	// U+2066..U+2069: E2 81 A6..A9.
	for t := s; ; {
		i := strings.IndexByte(t, 0xe2)
		if i < 0 || i+2 >= len(t) {
			return false
		}
		c1, c2 := t[i+1], t[i+2]
		if c1 == 0x80 && (c2 == 0x8e || c2 == 0x8f || c2 >= 0xaa && c2 <= 0xae) || c1 == 0x81 && c2 >= 0xa6 && c2 <= 0xa9 {
			return true
		}
		t = t[i+1:]
	}
}

// escapeBidi writes every bidirectional control in s as the six characters
// \uXXXX. The result is safe in text, in HTML text and in HTML attributes.
func escapeBidi(s string) string {
	if !hasBidi(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		writeEscaped(&b, r, isBidi)
	}
	return b.String()
}

// maxIndentDepth is how deep indentJSON indents; deeper values stay on one
// line, so the output grows linearly with the input whatever its depth.
const maxIndentDepth = 16

// indentJSON indents compact JSON by two spaces per level, down to
// maxIndentDepth levels; what is deeper is written compact, on the line of
// its parent. (json.Indent indents every level: for a value nested n deep
// its output grows as n², 162 MB for a 27 KB report of depth 9,000.)
// Invalid JSON is returned as it is.
func indentJSON(compact string) string {
	var b strings.Builder
	b.Grow(len(compact) + len(compact)/2)
	depth := 0
	newline := func(d int) {
		b.WriteByte('\n')
		for i := 0; i < d; i++ {
			b.WriteString("  ")
		}
	}
	for i := 0; i < len(compact); i++ {
		c := compact[i]
		switch c {
		case '"':
			j := i + 1
			for j < len(compact) && compact[j] != '"' {
				if compact[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(compact) {
				return compact
			}
			b.WriteString(compact[i : j+1])
			i = j
		case '{', '[':
			if i+1 < len(compact) && (compact[i+1] == '}' || compact[i+1] == ']') {
				b.WriteByte(c)
				b.WriteByte(compact[i+1])
				i++
				continue
			}
			depth++
			b.WriteByte(c)
			if depth <= maxIndentDepth {
				newline(depth)
			}
		case '}', ']':
			if depth <= maxIndentDepth {
				newline(depth - 1)
			}
			depth--
			b.WriteByte(c)
		case ',':
			b.WriteByte(c)
			if depth <= maxIndentDepth {
				newline(depth)
			}
		case ':':
			b.WriteByte(c)
			if depth <= maxIndentDepth {
				b.WriteByte(' ')
			}
		case ' ', '\t', '\n', '\r':
		default:
			b.WriteByte(c)
		}
	}
	if depth != 0 {
		return compact
	}
	return b.String()
}
