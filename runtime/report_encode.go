package runtime

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// reportWriter appends a report's JSON by hand: the bytes that encoding/json
// writes for the wire shapes of report_compat.go (compact, for
// Report.MarshalJSON) or those bytes after json.Indent with two spaces,
// except that each operation of a trace stays compact on a line of its own
// (for WriteJSON), written directly at their depth, and so does each
// finding and each duplicate. Through reflection and an
// indenting pass, writing the report file was the largest single cost of a
// ten-write suite under testkit. The wire shapes stay the reference:
// TestReportEncoderMatchesReflection (and ...OnFilledReports, which fails
// on a field added to a report type and not here) and FuzzReportEncoder
// hold the two to the same bytes.
//
// The rules copied from encoding/json: field order and omitempty as it
// resolves the embedded wire shapes; strings escaped by appendJSONString
// (HTML-safe, invalid UTF-8 as U+FFFD); times as time.Time.MarshalJSON
// writes them; an empty array or object is [] or {} in both forms. A value
// of type any (a call's result, an argument, a finding's details) that is
// not a scalar, []any, []string, map[string]any (keys sorted) or positional
// is written by encoding/json alone, then indented at its depth. An error is
// the first one encoding/json would have returned, wrapped as it would have
// been.
type reportWriter struct {
	b      []byte
	indent bool
	depth  int
	// first: nothing written yet in the innermost array or object.
	first bool
	err   error
	// scratch holds a composite value while it is indented; keys the keys
	// of the maps being written.
	scratch []byte
	keys    []string
	clock   clock
	// names and sites escape an operation's name and site once for the
	// operations that repeat them.
	names, sites escaped
	// texts is where in b strings were written (appendText).
	texts texts
	// like is the last long string escaped, by its first byte (likeText).
	like [8]likeText
	// spans is where in b the findings of the results were written, in
	// the order written, when record is set (report): the report's own
	// list of findings repeats them, and is copied from there.
	spans  []findingSpan
	record bool
	// ops is where in b the parts of operations that repeat from one
	// scenario to the next were written (opMemo).
	ops opMemo
}

// findingSpan is where a finding was written: b[start:end].
type findingSpan struct {
	f          *Finding
	start, end int
}

// newlineSpaces starts a line at depth d up to 64: newlineSpaces[:1+2*d].
const newlineSpaces = "\n                                                                                                                                "

func (w *reportWriter) newline() {
	if !w.indent {
		return
	}
	if n := 1 + 2*w.depth; n <= len(newlineSpaces) {
		w.b = append(w.b, newlineSpaces[:n]...)
		return
	}
	w.b = append(w.b, '\n')
	for range w.depth {
		w.b = append(w.b, ' ', ' ')
	}
}

func (w *reportWriter) open(c byte) {
	w.b = append(w.b, c)
	w.depth++
	w.first = true
}

func (w *reportWriter) close(c byte) {
	w.depth--
	if !w.first {
		w.newline()
	}
	w.b = append(w.b, c)
	w.first = false
}

// elem starts an array element.
func (w *reportWriter) elem() { w.b = w.sep(w.b) }

// commaNewlineSpaces is a comma and newlineSpaces: what goes between two
// elements at depth d up to 64 is commaNewlineSpaces[:2+2*d], and before
// the first commaNewlineSpaces[1:2+2*d].
const commaNewlineSpaces = "," + newlineSpaces

// commaNewline16 and newline16 are what goes before an element down to
// depth 7, after another and first, as arrays (sep).
var (
	commaNewline16 = [16]byte([]byte(commaNewlineSpaces[:16]))
	newline16      = [16]byte([]byte(newlineSpaces[:16]))
)

// sep appends to b what goes before an element: a comma unless it is the
// first, and its line. The comma and the line are appended in one piece,
// and key appends the rest of its member to the same b, not to w.b a
// piece at a time: a report writes 2,500 members and as many elements of
// arrays.
func (w *reportWriter) sep(b []byte) []byte {
	first := w.first
	w.first = false
	if !w.indent {
		if first {
			return b
		}
		return append(b, ',')
	}
	// Down to depth 7 (every line of a report but a deeper value's),
	// sixteen bytes are stored from an array, in moves the compiler
	// writes inline, and cut to the length: appending the slice of
	// commaNewlineSpaces called memmove for a few bytes, 7% of the
	// encoding's CPU profile. With the compact case's comma appended
	// alone, this took the encoding of BenchmarkReportWriteJSON's report
	// from 167 to 165 µs of CPU (medians of 14 alternated runs of 40 ×
	// 100 writes, GOMAXPROCS=1, tenth sitting).
	if n := 2 + 2*w.depth; n <= len(commaNewline16) {
		src := &commaNewline16
		if first {
			src, n = &newline16, n-1
		}
		l := len(b)
		b = slices.Grow(b, len(commaNewline16))[:l+len(commaNewline16)]
		*(*[len(commaNewline16)]byte)(b[l:]) = *src
		return b[:l+n]
	}
	from := 0
	if first {
		from = 1
	}
	if n := 2 + 2*w.depth; n <= len(commaNewlineSpaces) {
		return append(b, commaNewlineSpaces[from:n]...)
	}
	b = append(b, commaNewlineSpaces[from:2]...)
	for range w.depth {
		b = append(b, ' ', ' ')
	}
	return b
}

// key starts an object member; name needs no escaping.
func (w *reportWriter) key(name string) {
	b := w.sep(w.b)
	b = append(b, '"')
	b = append(b, name...)
	if w.indent {
		b = append(b, '"', ':', ' ')
	} else {
		b = append(b, '"', ':')
	}
	w.b = b
}

func (w *reportWriter) null() { w.b = append(w.b, "null"...) }

func (w *reportWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// wrap wraps an error raised since the error state before was taken as
// encoding/json wraps the error of a MarshalJSON method of type t.
func (w *reportWriter) wrap(before error, t reflect.Type) {
	if before == nil && w.err != nil {
		w.err = &json.MarshalerError{Type: t, Err: w.err}
	}
}

func (w *reportWriter) str(k, v string) {
	w.key(k)
	w.text(v)
}

// texts remembers where in the report written so far the JSON text of
// strings is. A finding's message, its replay line and its scenario are
// written again in the report's findings (and the replay line a third
// time in its result), the same strings, and a message is hundreds of
// bytes with quotes to escape: a string of textMin bytes or more is looked
// up by the address of its bytes. An operation's entity (a key's
// canonical JSON, quotes and all) comes back in the operation at the same
// place in each scenario, another string each time: a shorter string with
// a byte to escape is looked up by its length and four of its bytes, the
// first, the middle one and the last two (keys quoted, "\"entry-0\"" to
// "\"entry-9\"", differ only in the one before the last: looked up by three,
// they shared one slot, and the report of ten writes of such keys escaped
// 441 short strings again). There are 256 slots, 8 KB of the writer's
// stack: in 64, testkit's ten-write report escaped 43 short strings again
// and copied 102 long ones, against 19 and 136 in 256, and its encoding
// took 5% longer (paired runs of both). A short plain string is quicker
// written again. Each entry holds its string, which keeps the
// bytes at that address from being freed and reused for another string
// while the report is written, and a string is taken only when it is
// equal to the entry's.
type texts [256]textAt

// textAt is a string's text in a report: b[off:end].
type textAt struct {
	s        string
	off, end int
}

const textMin = 24

// text appends v as a JSON string to w.b.
func (w *reportWriter) text(v string) { w.b = w.appendText(w.b, v) }

// appendText appends s as a JSON string to b, which is w.b or its
// continuation, copied from where it was written before if it was.
func (w *reportWriter) appendText(b []byte, s string) []byte {
	var slot uint
	if len(s) < textMin {
		if plainLen(s) == len(s) {
			b = append(b, '"')
			b = append(b, s...)
			return append(b, '"')
		}
		slot = uint(len(s)) ^ uint(s[0])<<1 ^ uint(s[len(s)/2])<<2 ^ uint(s[len(s)-1])<<3
		if len(s) > 2 {
			slot ^= uint(s[len(s)-2])
		}
	} else {
		slot = uint(uintptr(unsafe.Pointer(unsafe.StringData(s)))>>3) ^ uint(len(s))
	}
	e := &w.texts[slot%uint(len(w.texts))]
	if e.end > 0 && e.s == s {
		return append(b, b[e.off:e.end]...)
	}
	off := len(b)
	if len(s) < textMin {
		b = appendEscaped(b, s)
	} else {
		b = w.like[s[0]%uint8(len(w.like))].append(b, s)
	}
	e.s, e.off, e.end = s, off, len(b)
	return b
}

// likeText is the last long string appendText escaped of those that start
// with the same byte (reportWriter.like), and how much of it is plain at
// either end: s[:head] and s[tail:] (jsonPlain). A report's long strings
// come in kinds that differ in a few bytes from one to the next: a
// finding's message ("post executed 2 times for identity \"entry-3\"
// (1:post#4, 2:post#5): one effect done ...", 300 bytes of which the
// last 250 are the same in each) and replay line ("go test -run
// '^TestAgent$/^crash_restart$/^post#4$' <package>"). The part of the
// string that is equal to the last one's plain ends is plain too, and is
// found by comparing eight bytes at a time, where plainLen reads one: only
// the rest is looked at byte by byte. In the ten-write suite's report
// under TestAgent, 197 long strings (32.6 KB) are escaped so, 27.7 KB of
// them in the shared ends. Its WriteJSON to io.Discard took 151 µs before
// and 141 after (medians of 8 runs of 2,700 writes of each build
// alternated, GOMAXPROCS=1, fifteenth sitting), and right after its
// suite, as testkit writes it, 198 and 188 µs of thread CPU (10 runs of
// 300 suites); an earlier build of it, whose eight bytes were read one at
// a time, bought nothing. (Reading eight bytes at a time to test each
// for the bytes to escape, plainLen's loop's alternative, did not pay.)
type likeText struct {
	s          string
	head, tail int
}

// append appends s as a JSON string to b, as appendEscaped does, and
// keeps s as the last string.
func (l *likeText) append(b []byte, s string) []byte {
	pre := commonPrefix(s, l.s[:l.head])
	suf := commonSuffix(s[pre:], l.s[l.tail:])
	// s[:pre] and s[len(s)-suf:] are plain bytes; what lies between is
	// escaped as appendEscaped does, from a byte that starts a rune
	// (a plain byte is ASCII) to one that is plain.
	end := len(s) - suf
	b = append(b, '"')
	i := pre + plainLen(s[pre:end])
	head, tail := i, 0
	b = append(b, s[:i]...)
	for i < end {
		n := 1
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		default:
			if c >= utf8.RuneSelf {
				_, n = utf8.DecodeRuneInString(s[i:])
			}
			b = appendJSONStringFrom(b, s[i:i+n], 0)
			b = b[:len(b)-1] // its closing quote
		}
		i += n
		tail = i
		j := i + plainLen(s[i:end])
		b = append(b, s[i:j]...)
		i = j
	}
	if tail == 0 {
		head = len(s) // all of s is plain
	}
	b = append(b, s[end:]...)
	l.s, l.head, l.tail = s, head, tail
	return append(b, '"')
}

// load8 is the eight bytes of s from i on, the first in the low byte.
// The callers keep i+8 within s: it is not checked.
func load8(s string, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))[:])
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := load8(a, i) ^ load8(b, i); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	k := 0
	for ; k+8 <= n; k += 8 {
		if x := load8(a, len(a)-k-8) ^ load8(b, len(b)-k-8); x != 0 {
			return k + bits.LeadingZeros64(x)/8
		}
	}
	for k < n && a[len(a)-k-1] == b[len(b)-k-1] {
		k++
	}
	return k
}

// forget drops the texts and operations' parts written from n on, which
// are written over.
func (w *reportWriter) forget(n int) {
	for i := range w.texts {
		if e := &w.texts[i]; e.end > n {
			*e = textAt{}
		}
	}
	for i := range w.ops {
		if e := &w.ops[i]; e.headEnd > n || e.tailEnd > n {
			*e = opSeen{}
		}
	}
}

func (w *reportWriter) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

// strNull writes v, or null when it is empty (a *string from nullable).
func (w *reportWriter) strNull(k, v string) {
	w.key(k)
	if v == "" {
		w.null()
		return
	}
	w.text(v)
}

func (w *reportWriter) boolean(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

func (w *reportWriter) boolOmit(k string, v bool) {
	if v {
		w.boolean(k, v)
	}
}

func (w *reportWriter) integer(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *reportWriter) intOmit(k string, v int) {
	if v != 0 {
		w.integer(k, int64(v))
	}
}

// stringsOmit writes a []string field with omitempty.
func (w *reportWriter) stringsOmit(k string, v []string) {
	if len(v) > 0 {
		w.key(k)
		w.stringList(v)
	}
}

func (w *reportWriter) stringList(v []string) {
	if !w.indent {
		// Compact (a finding's ops, identities and calls, a
		// duplicate's operation ids): the elements and their commas
		// appended straight to b, not through open, elem and close.
		b := append(w.b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = w.appendText(b, s)
		}
		w.b = append(b, ']')
		w.first = false
		return
	}
	w.open('[')
	for _, s := range v {
		w.elem()
		w.text(s)
	}
	w.close(']')
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	timePtrType = reflect.TypeFor[*time.Time]()
)

// time writes t as time.Time.MarshalJSON does; typ is the field's type,
// which encoding/json names in the error.
func (w *reportWriter) time(k string, t time.Time, typ reflect.Type) {
	w.key(k)
	w.b = w.appendTime(w.b, t, typ)
}

// appendTime appends t as time.Time.MarshalJSON writes it, or null where it
// fails (see time).
func (w *reportWriter) appendTime(b []byte, t time.Time, typ reflect.Type) []byte {
	sec, loc := t.Unix(), t.Location()
	if c := &w.clock; c.loc == loc && c.sec == sec && loc != nil {
		// The same second as the time before, in the same place: its
		// date, clock and zone, and this time's fraction. The date and
		// the zone are copied as arrays and cut to their length, in
		// moves the compiler writes inline: appending them as slices
		// called memmove for each, a fifth of the encoding's memmoves.
		l := len(b)
		b = slices.Grow(b, len(c.date)+10+len(c.zone))
		*(*[len(c.date)]byte)(b[l : l+len(c.date)]) = c.date
		b = appendFraction(b[:l+dateText], t.Nanosecond())
		l = len(b)
		*(*[len(c.zone)]byte)(b[l : l+len(c.zone)]) = c.zone
		return b[:l+c.zoneLen]
	}
	b = append(b, '"')
	n := len(b)
	text, err := t.AppendText(b)
	if err != nil {
		_, err = t.MarshalJSON()
		w.fail(&json.MarshalerError{Type: typ, Err: err})
		w.forget(n - 1)
		return append(b[:n-1], "null"...)
	}
	w.clock.remember(text[n:], sec, loc)
	return append(text, '"')
}

// clock is the text of the last time written: RFC 3339 splits into the
// date and clock to the second (19 bytes for years 0 to 9999), a fraction
// of the second without its trailing zeros, and the zone. A report's times
// come by the hundred within one second, and the text of the date is the
// costliest part of writing one. date holds the opening quote and the
// date (dateText bytes), zone the zone and the closing quote (zoneLen
// bytes; a longer zone is not kept).
type clock struct {
	loc     *time.Location
	sec     int64
	date    [24]byte
	zone    [8]byte
	zoneLen int
}

// dateText is the length of a time's text up to its fraction, quote
// included: "2006-01-02T15:04:05.
const dateText = 1 + len("2006-01-02T15:04:05")

// remember keeps text, the RFC 3339 text of a time at second sec in loc.
func (c *clock) remember(text []byte, sec int64, loc *time.Location) {
	const dateLen = dateText - 1
	c.loc = nil
	if len(text) <= dateLen || text[dateLen-3] != ':' {
		return // a year of more than four digits, or before year 0
	}
	zone := text[dateLen:]
	if zone[0] == '.' {
		i := 1
		for i < len(zone) && zone[i] >= '0' && zone[i] <= '9' {
			i++
		}
		zone = zone[i:]
	}
	if len(zone) >= len(c.zone) {
		return
	}
	c.loc, c.sec = loc, sec
	c.date[0] = '"'
	copy(c.date[1:], text[:dateLen])
	c.zoneLen = copy(c.zone[:], zone)
	c.zone[c.zoneLen] = '"'
	c.zoneLen++
}

// appendFraction appends ns as RFC 3339 with nanoseconds writes a
// fraction of a second: a dot and up to nine digits without trailing
// zeros, nothing for zero; ns is below a second, as time.Time.Nanosecond
// returns it. A report writes two times per call, 1,600 in
// the ten-write suite's, each with a fraction: the digits after the first
// are worked out eight at a time, a byte each in one word (divided by
// 10,000, by 100 and by 10 in every lane at once with multiplications),
// the trailing zeros counted from the word's leading zero bytes, and the
// digits written in one store (two digits at a time took 11% of the
// encoding's profile, 12 to 13 ns a time; this takes 7 to 8).
func appendFraction(b []byte, ns int) []byte {
	if ns == 0 {
		return b
	}
	hi, r := ns/1e8, uint64(ns%1e8)
	// Digits 2 to 5 in the low half, 6 to 9 in the high one; then each
	// half split into two pairs (n/100 is n*5243>>19 below 10,000), and
	// each pair into two digits (n/10 is n*103>>10 below 179), the first
	// digit in the lowest byte, first in memory.
	x := r/10000 | r%10000<<32
	q := x * 5243 >> 19 & 0x0000007f0000007f
	x = q | (x-q*100)<<16
	q = x * 103 >> 10 & 0x000f000f000f000f
	x = q | (x-q*10)<<8
	n := 2 + 8 - bits.LeadingZeros64(x)/8 // bytes to keep: the dot, the first digit, up to the last nonzero one
	// Ten bytes appended as constants and cut to n: appending n bytes
	// from an array is a call to copy them.
	l := len(b)
	b = append(b, '.', byte('0'+hi), 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint64(b[l+2:], x+0x3030303030303030)
	return b[:l+n]
}

// raw appends compact JSON written by encoding/json, indented at the
// current depth.
func (w *reportWriter) raw(v []byte) {
	if !w.indent || len(v) <= 2 || (v[0] != '{' && v[0] != '[') {
		w.b = append(w.b, v...)
		return
	}
	prefix := newlineSpaces[1:]
	if 2*w.depth <= len(prefix) {
		prefix = prefix[:2*w.depth]
	} else {
		prefix = strings.Repeat("  ", w.depth)
	}
	buf := bytes.NewBuffer(w.b)
	if err := json.Indent(buf, v, prefix, "  "); err != nil {
		w.fail(err)
	}
	w.b = buf.Bytes()
}

// reindent indents the composite value appended from start on.
func (w *reportWriter) reindent(start int) {
	if !w.indent || len(w.b)-start <= 2 || (w.b[start] != '{' && w.b[start] != '[') {
		return
	}
	w.scratch = append(w.scratch[:0], w.b[start:]...)
	w.forget(start)
	w.b = w.b[:start]
	w.raw(w.scratch)
}

// value writes a value of type any as encoding/json does.
func (w *reportWriter) value(v any) {
	switch x := v.(type) {
	case nil:
		w.null()
		return
	case string:
		w.b = appendEscaped(w.b, x)
		return
	case bool:
		w.b = strconv.AppendBool(w.b, x)
		return
	case int:
		w.b = strconv.AppendInt(w.b, int64(x), 10)
		return
	case int64:
		w.b = strconv.AppendInt(w.b, x, 10)
		return
	case float64:
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			w.b = appendFloat64(w.b, x)
			return
		}
	case []string:
		if x != nil {
			w.stringList(x)
			return
		}
	case []any:
		if x != nil {
			w.open('[')
			for _, e := range x {
				w.elem()
				w.value(e)
			}
			w.close(']')
			return
		}
	case map[string]any:
		if x != nil {
			w.object(x)
			return
		}
	case positional:
		w.positional(Args(x))
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		w.null()
		return
	}
	w.raw(b)
}

// object writes a map as encoding/json does: keys in sorted order.
func (w *reportWriter) object(m map[string]any) {
	if len(m) <= smallObject {
		w.smallObject(m)
		return
	}
	lo := len(w.keys)
	for k := range m {
		w.keys = append(w.keys, k)
	}
	slices.Sort(w.keys[lo:])
	hi := len(w.keys)
	w.open('{')
	for i := lo; i < hi; i++ {
		k := w.keys[i]
		w.elem()
		w.b = appendEscaped(w.b, k)
		w.b = append(w.b, ':')
		if w.indent {
			w.b = append(w.b, ' ')
		}
		w.value(m[k])
	}
	w.close('}')
	clear(w.keys[lo:hi])
	w.keys = w.keys[:lo]
}

// smallObject is the most members object writes from an array on its
// stack (smallObject).
const smallObject = 8

// smallObject writes a map of up to smallObject members: its keys and
// values are taken in one pass over the map into an array, sorted there
// by insertion, and written from there. A finding's details (five members
// for a duplicate_write) were written by listing the keys, sorting them
// with slices.Sort and looking each value up in the map again: 22% of the
// CPU profile of BenchmarkReportWriteJSON. This took the encoding of its
// report from 179 to 175 µs of CPU (medians of 5 alternated runs,
// GOMAXPROCS=1, 2026-12-06, tenth sitting).
func (w *reportWriter) smallObject(m map[string]any) {
	var kv [smallObject]struct {
		k string
		v any
	}
	n := 0
	for k, v := range m {
		kv[n].k, kv[n].v = k, v
		n++
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && kv[j].k < kv[j-1].k; j-- {
			kv[j], kv[j-1] = kv[j-1], kv[j]
		}
	}
	w.open('{')
	for i := range n {
		w.elem()
		w.b = appendEscaped(w.b, kv[i].k)
		w.b = append(w.b, ':')
		if w.indent {
			w.b = append(w.b, ' ')
		}
		w.value(kv[i].v)
	}
	w.close('}')
}

// appendFloat64 writes a finite f as encoding/json's float encoder does.
func appendFloat64(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// positional writes arguments as positional.MarshalJSON does.
func (w *reportWriter) positional(a Args) {
	if !w.indent {
		// Compact (a duplicate's and a duplicate_write's details'):
		// appended straight, not through open, key, elem, reindent and
		// close, as namedArgs. 225 of each in the ten-write suite's
		// report: written right after its suite, its WriteJSON took
		// 186 µs of thread CPU before and 178 after (medians of 6 runs
		// of 300 suites alternated, GOMAXPROCS=1, fifteenth sitting).
		b := append(w.b, `{"args":[`...)
		for i, v := range a.Values {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, v)
		}
		w.b = append(b, `],"kwargs":{}}`...)
		w.first = false
		return
	}
	w.open('{')
	w.key("args")
	w.open('[')
	for _, v := range a.Values {
		w.elem()
		start := len(w.b)
		w.b = appendValue(w.b, v)
		w.reindent(start)
	}
	w.close(']')
	w.key("kwargs")
	w.b = append(w.b, '{', '}')
	w.close('}')
}

// namedArgs writes arguments as Args.MarshalJSON does.
func (w *reportWriter) namedArgs(a Args) {
	if !w.indent {
		// Compact (a duplicate's), as positional.
		b := append(w.b, '{')
		for i, v := range a.Values {
			if i > 0 {
				b = append(b, ',')
			}
			if i < len(a.Names) {
				b = appendEscaped(b, a.Names[i])
			} else {
				b = append(b, `"arg`...)
				b = strconv.AppendInt(b, int64(i), 10)
				b = append(b, '"')
			}
			b = append(b, ':')
			b = appendValue(b, v)
		}
		w.b = append(b, '}')
		w.first = false
		return
	}
	w.open('{')
	for i, v := range a.Values {
		w.elem()
		if i < len(a.Names) {
			w.b = appendEscaped(w.b, a.Names[i])
		} else {
			w.b = append(w.b, `"arg`...)
			w.b = strconv.AppendInt(w.b, int64(i), 10)
			w.b = append(w.b, '"')
		}
		w.b = append(w.b, ':')
		if w.indent {
			w.b = append(w.b, ' ')
		}
		start := len(w.b)
		w.b = appendValue(w.b, v)
		w.reindent(start)
	}
	w.close('}')
}

// operation writes operationJSON: the plain operation's fields that the
// AgentIdem ones do not shadow, in order, then those. Operations are
// written compact, one per line (trace), six tenths of a report's bytes
// (the ten-write suite's: 165 of 278 KB): the keys and separators are
// appended as literals, the name and site, which repeat from one operation
// to the next, are escaped once each, and the text written once is copied
// where the operation repeats it (the identity that is the entity, an
// argument in named_args).
func (w *reportWriter) operation(o *Operation) {
	e := w.ops.of(o.ID)
	if e.head != nil && sameHead(o, e.head) {
		w.operationRest(o, e, append(w.b, w.b[e.headAt:e.headEnd]...), e.entity, e.entityEnd)
		return
	}
	b := w.b
	headAt := len(b)
	b = append(b, `{"id":`...)
	b = appendEscaped(b, o.ID)
	b = append(b, `,"name":`...)
	b = w.names.append(b, o.Name)
	switch o.Kind {
	case KindRead:
		b = append(b, `,"kind":"read"`...)
	case KindWrite:
		b = append(b, `,"kind":"write"`...)
	default:
		b = append(b, `,"kind":`...)
		b = appendEscaped(b, o.Kind.String())
	}
	b = appendStrOmit(b, `,"identity_error":`, o.IdentityError)
	if len(o.IdentityPanic) > 0 {
		w.b = append(b, `,"identity_panic":`...)
		w.stringList(o.IdentityPanic)
		b = w.b
	}
	if len(o.After) > 0 {
		w.b = append(b, `,"after":`...)
		w.stringList(o.After)
		b = w.b
	}
	// The entity's text, which the identity most often repeats.
	entity, entityEnd := 0, 0
	if o.Entity != "" {
		b = append(b, `,"entity":`...)
		entity = len(b)
		b = w.appendText(b, o.Entity)
		entityEnd = len(b)
	}
	if len(o.IdentityPanic) == 0 && len(o.After) == 0 {
		e.head, e.headAt, e.headEnd, e.entity, e.entityEnd = o, headAt, len(b), entity, entityEnd
	}
	w.operationRest(o, e, b, entity, entityEnd)
}

// operationRest writes the operation from its status on; b holds it up to
// its entity, whose text is b[entity:entityEnd] (entityEnd 0 without one).
func (w *reportWriter) operationRest(o *Operation, e *opSeen, b []byte, entity, entityEnd int) {
	switch {
	case o.Status == StatusSuccess && o.Observation == ObservationReceived:
		b = append(b, `,"status":"success","observation":"received"`...)
	case o.Status == StatusFailed && o.Observation == ObservationFailed:
		b = append(b, `,"status":"failed","observation":"failed"`...)
	default:
		b = append(b, `,"status":`...)
		b = appendEscaped(b, string(o.Status))
		b = append(b, `,"observation":`...)
		b = appendEscaped(b, string(o.Observation))
	}
	if o.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	if o.Idempotent {
		b = append(b, `,"idempotent":true`...)
	}
	b = appendStrOmit(b, `,"repeat":`, o.Repeat)
	b = appendStrOmit(b, `,"judged_by":`, o.JudgedBy)
	b = appendStrOmit(b, `,"state_change":`, o.StateChange)
	b = appendStrOmit(b, `,"state_error":`, o.StateError)
	if o.Overlapped {
		b = append(b, `,"overlapped":true`...)
	}
	b = appendStrOmit(b, `,"fault":`, string(o.Fault))
	if o.Panic != nil {
		w.b = append(b, `,"panic":`...)
		w.panicValue(o.Panic)
		b = w.b
	}
	b = append(b, `,"invocation":`...)
	b = appendInt(b, o.Invocation)
	b = append(b, `,"occurrence":`...)
	b = appendInt(b, o.Occurrence)
	b = append(b, `,"seq":`...)
	b = appendInt(b, o.Seq)
	b = appendStrOmit(b, `,"parent":`, o.Parent)
	b = appendIntOmit(b, `,"start_tick":`, o.StartTick)
	b = appendIntOmit(b, `,"end_tick":`, o.EndTick)
	b = appendIntOmit(b, `,"batch":`, o.Batch)
	if o.Detached {
		b = append(b, `,"detached":true`...)
	}
	if o.Site != "" {
		b = append(b, `,"site":`...)
		b = w.sites.append(b, o.Site)
	}
	b = append(b, `,"started_at":`...)
	b = w.appendTime(b, o.StartedAt, timeType)
	if e.tail != nil && sameTail(o, e.tail) {
		b = append(b, b[e.tailAt:e.tailEnd]...)
	} else {
		b = w.operationTail(o, e, b, entity, entityEnd)
	}
	if o.CompletedAt.IsZero() {
		b = append(b, `,"completed_at":null`...)
	} else {
		b = append(b, `,"completed_at":`...)
		b = w.appendTime(b, o.CompletedAt, timePtrType)
	}
	if sent := o.sent(); len(sent) > 0 {
		b = append(b, `,"http_requests":[`...)
		for i, s := range sent {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"method":`...)
			b = appendEscaped(b, s.Method)
			b = append(b, `,"host":`...)
			b = appendEscaped(b, s.Host)
			b = append(b, `,"path":`...)
			b = appendEscaped(b, s.Path)
			if s.Write {
				b = append(b, `,"write":true`...)
			}
			b = appendIntOmit(b, `,"status":`, s.Status)
			if s.Lost {
				b = append(b, `,"lost":true`...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	w.b = append(b, '}')
	w.first = false
}

// operationTail appends the operation's args, named_args, identity,
// result and error to b, and notes them in e when another operation's
// could be the same bytes (sameTail).
func (w *reportWriter) operationTail(o *Operation, e *opSeen, b []byte, entity, entityEnd int) []byte {
	tailAt := len(b)
	// Each argument is written twice, in args and in named_args: a
	// value of a type whose text cannot change from one writing to the
	// next (a string, a number, a bool, nil) is copied the second time.
	b = append(b, `,"args":{"args":[`...)
	var again [8]struct{ off, end int }
	for i, v := range o.Args.Values {
		if i > 0 {
			b = append(b, ',')
		}
		off := len(b)
		b = appendValue(b, v)
		if i < len(again) && fixedText(v) {
			again[i].off, again[i].end = off, len(b)
		}
	}
	b = append(b, `],"kwargs":{}},"named_args":{`...)
	for i, v := range o.Args.Values {
		if i > 0 {
			b = append(b, ',')
		}
		if i < len(o.Args.Names) {
			b = appendEscaped(b, o.Args.Names[i])
		} else {
			b = append(b, `"arg`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, '"')
		}
		b = append(b, ':')
		if i < len(again) && again[i].end > 0 {
			b = append(b, b[again[i].off:again[i].end]...)
		} else {
			b = appendValue(b, v)
		}
	}
	b = append(b, `},"identity":`...)
	switch {
	case o.Kind != KindWrite:
		b = append(b, "null"...)
	case entityEnd > 0 && o.Identity == o.Entity:
		b = append(b, b[entity:entityEnd]...)
	default:
		b = w.appendText(b, o.Identity)
	}
	b = append(b, `,"result":`...)
	if o.Result == nil {
		b = append(b, "null"...)
	} else {
		w.b = b
		w.value(o.Result)
		b = w.b
	}
	if o.Error == "" {
		b = append(b, `,"error":null`...)
	} else {
		w.b = append(b, `,"error":`...)
		w.text(o.Error)
		b = w.b
	}
	if fixedTail(o) {
		e.tail, e.tailAt, e.tailEnd = o, tailAt, len(b)
	}
	return b
}

// fixedText reports whether v is of a type whose JSON text appendValue
// writes alike each time: not one whose text comes from a MarshalJSON
// method or reflection.
func fixedText(v any) bool {
	switch v.(type) {
	case nil, string, bool, int, int64, int32, uint, uint64, uint32:
		return true
	}
	return false
}

// appendInt appends v in decimal; one digit takes no call.
func appendInt(b []byte, v int) []byte {
	if uint(v) < 10 {
		return append(b, byte('0'+v))
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// appendStrOmit appends key and v, a JSON string, unless v is empty.
func appendStrOmit(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendEscaped(append(b, key...), v)
}

// appendIntOmit appends key and v unless v is 0.
func appendIntOmit(b []byte, key string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

// escaped remembers the JSON text of the last string written through it.
type escaped struct {
	s    string
	text []byte
}

// append appends s as a JSON string, escaping it only when it differs from
// the last one.
func (e *escaped) append(b []byte, s string) []byte {
	if s == e.s && e.text != nil {
		return append(b, e.text...)
	}
	n := len(b)
	b = appendEscaped(b, s)
	e.s, e.text = s, append(e.text[:0], b[n:]...)
	return b
}

func (w *reportWriter) panicValue(p *Panic) {
	w.open('{')
	w.strOmit("op", p.Op)
	w.str("value", p.Value)
	w.str("stack", p.Stack)
	w.close('}')
}

func (w *reportWriter) fault(f *Fault) {
	w.open('{')
	w.str("kind", string(f.Kind))
	w.str("op", f.Op)
	w.integer("occurrence", int64(f.Occurrence))
	w.close('}')
}

// trace writes traceJSON for t under the id id.
func (w *reportWriter) trace(t *Trace, id string) {
	start, end := t.times()
	w.open('{')
	w.str("id", id)
	w.str("target", t.Name)
	w.time("started_at", start, timeType)
	w.time("completed_at", end, timeType)
	w.key("operations")
	w.open('[')
	// Each operation on a line of its own, compact: a trace's operations
	// are nine tenths of a report, and indented they were twice the bytes
	// to write and to page through.
	indent := w.indent
	for i := range t.Ops {
		w.elem()
		w.indent = false
		w.operation(&t.Ops[i])
		w.indent = indent
	}
	w.close(']')
	if len(t.Panics) > 0 {
		w.key("panics")
		w.open('[')
		for i := range t.Panics {
			w.elem()
			w.panicValue(&t.Panics[i])
		}
		w.close(']')
	}
	w.stringsOmit("errors", t.Errors)
	if t.Fault != nil {
		w.key("fault")
		w.fault(t.Fault)
	}
	w.boolOmit("fired", t.Fired)
	w.strOmit("fault_note", t.FaultNote)
	w.integer("invocations", int64(t.Invocations))
	w.stringsOmit("notes", t.Notes)
	w.stringsOmit("detached", t.Detached)
	w.stringsOmit("refused", t.Refused)
	w.stringsOmit("unattributed", t.Unattributed)
	w.close('}')
}

// traceOf writes the trace of a result as withID(scenario).wire() does.
func (w *reportWriter) traceOf(t *Trace, scenario string) {
	if t == nil {
		w.null()
		return
	}
	id := t.ID
	if scenario != "" {
		id = scenario
	}
	w.trace(t, id)
}

func (w *reportWriter) invariant(ir *InvariantResult) {
	w.open('{')
	w.str("name", ir.Name)
	w.boolean("passed", ir.OK)
	w.strNull("message", ir.Error)
	w.close('}')
}

// duplicate writes what Duplicate.MarshalJSON does.
func (w *reportWriter) duplicate(d *Duplicate) {
	if !w.indent {
		// Compact, as a result writes each duplicate: the keys appended
		// as literals with their separators (see compactFinding).
		b := append(w.b, `{"operation_name":`...)
		b = w.appendText(b, d.Op)
		b = append(b, `,"identity":`...)
		b = w.appendText(b, d.Identity)
		b = append(b, `,"count":`...)
		w.b = append(strconv.AppendInt(b, int64(d.Count), 10), `,"args":`...)
		w.positional(d.Args)
		w.b = append(w.b, `,"named_args":`...)
		w.namedArgs(d.Args)
		w.b = append(w.b, `,"operation_ids":`...)
		w.stringList(d.Calls)
		w.b = append(w.b, '}')
		w.first = false
		return
	}
	w.open('{')
	w.str("operation_name", d.Op)
	w.str("identity", d.Identity)
	w.integer("count", int64(d.Count))
	w.key("args")
	w.positional(d.Args)
	w.key("named_args")
	w.namedArgs(d.Args)
	w.key("operation_ids")
	w.stringList(d.Calls)
	w.close('}')
}

// finding writes findingJSON.
func (w *reportWriter) finding(f *Finding) {
	if !w.indent {
		w.compactFinding(f)
		return
	}
	w.open('{')
	w.str("code", f.Code)
	w.str("severity", string(f.Severity))
	w.str("message", f.Message)
	w.str("scenario", f.Scenario)
	w.stringsOmit("ops", f.Ops)
	w.stringsOmit("identities", f.Identities)
	w.stringsOmit("calls", f.Calls)
	w.str("replay", f.Replay)
	w.strOmit("stack", f.Stack)
	w.key("details")
	if len(f.Details) == 0 {
		w.b = append(w.b, '{', '}')
	} else {
		w.value(f.Details)
	}
	w.stringsOmit("follows", f.Follows)
	if len(f.SeenIn) > 0 {
		w.key("seen_in")
		w.open('[')
		for _, o := range f.SeenIn {
			w.elem()
			w.open('{')
			w.str("scenario", o.Scenario)
			w.str("replay", o.Replay)
			w.close('}')
		}
		w.close(']')
	}
	w.close('}')
}

// compactFinding writes findingJSON compact, as findings are written in a
// report: the keys are appended as literals with their separators, not
// each through key and sep, and a list of strings without open, elem and
// close. With duplicate's, this took the encoding of
// BenchmarkReportWriteJSON's report from 163 to 150 µs of CPU (medians
// of 14 alternated runs of 40 × 100 writes, GOMAXPROCS=1, load 4, tenth
// sitting), and of TestMeasureSuite's ten-write report (75 findings
// with their details, 10 problems) from 172 to 167 µs (4 runs of 3,600).
func (w *reportWriter) compactFinding(f *Finding) {
	b := append(w.b, `{"code":`...)
	b = w.appendText(b, f.Code)
	b = append(b, `,"severity":`...)
	b = w.appendText(b, string(f.Severity))
	b = append(b, `,"message":`...)
	b = w.appendText(b, f.Message)
	b = append(b, `,"scenario":`...)
	b = w.appendText(b, f.Scenario)
	b = w.appendStringsOmit(b, `,"ops":`, f.Ops)
	b = w.appendStringsOmit(b, `,"identities":`, f.Identities)
	b = w.appendStringsOmit(b, `,"calls":`, f.Calls)
	b = append(b, `,"replay":`...)
	b = w.appendText(b, f.Replay)
	if f.Stack != "" {
		b = append(b, `,"stack":`...)
		b = w.appendText(b, f.Stack)
	}
	if len(f.Details) == 0 {
		b = append(b, `,"details":{}`...)
	} else if x, count := dupDetailsOf(f.Details); x != nil {
		w.b = append(b, `,"details":`...)
		w.dupDetails(x, count)
		b = w.b
	} else {
		w.b = append(b, `,"details":`...)
		w.value(f.Details)
		b = w.b
	}
	b = w.appendStringsOmit(b, `,"follows":`, f.Follows)
	b = w.appendSeenIn(b, f.SeenIn)
	w.b = append(b, '}')
	w.first = false
}

// appendSeenIn appends a problem's "seen_in" member to b, where it has
// one: the scenarios it was seen in, each with its replay line.
func (w *reportWriter) appendSeenIn(b []byte, seen []Occurrence) []byte {
	if len(seen) == 0 {
		return b
	}
	b = append(b, `,"seen_in":[`...)
	for i, o := range seen {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"scenario":`...)
		b = w.appendText(b, o.Scenario)
		b = append(b, `,"replay":`...)
		b = w.appendText(b, o.Replay)
		b = append(b, '}')
	}
	return append(b, ']')
}

// dupDetailsOf returns the values of m when m is a duplicate_write's
// details as duplicateDetails made them, unchanged: five members, whose
// name, identity, arguments and ids are the ones it packed from one
// dupDetails (their addresses in it), and the count. Else nil.
func dupDetailsOf(m map[string]any) (*dupDetails, int) {
	if len(m) != 5 {
		return nil, 0
	}
	args, op, id, ids := m["args"], m["operation_name"], m["identity"], m["operation_ids"]
	count, ok := m["count"].(int)
	if !ok || typeOf(args) != positionalType || typeOf(op) != stringType || typeOf(id) != stringType || typeOf(ids) != stringsType {
		return nil, 0
	}
	// Compared as numbers: no pointer is made to a dupDetails before the
	// four addresses say one holds them.
	var x dupDetails
	base := uintptr(dataOf(args)) - unsafe.Offsetof(x.args)
	if uintptr(dataOf(op)) != base+unsafe.Offsetof(x.op) || uintptr(dataOf(id)) != base+unsafe.Offsetof(x.identity) ||
		uintptr(dataOf(ids)) != base+unsafe.Offsetof(x.ids) {
		return nil, 0
	}
	return (*dupDetails)(unsafe.Add(dataOf(op), -int(unsafe.Offsetof(x.op)))), count
}

// dataOf is the data word of an interface value.
func dataOf(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).data }

// dupDetails writes the details of a duplicate_write finding from the
// values duplicateDetails packed (dupDetailsOf), their keys in sorted
// order, as object writes the map. A ten-write suite's report has 57 such
// findings: iterating each map, sorting its keys and switching on each
// value's type was a sixth of the report's encoding in a CPU profile of
// TestMeasureSuite (smallObject and value, 0.15 of 0.83 s). This took
// BenchmarkReportWriteJSON's CPU time to 0.94 of before (6 alternated runs
// of 10,000 writes, GOMAXPROCS=1, eleventh sitting); inside the suite,
// 0.985 paired round by round, under the noise of a loaded machine.
func (w *reportWriter) dupDetails(x *dupDetails, count int) {
	if w.indent {
		w.value(map[string]any{"args": x.args, "count": count, "identity": x.identity, "operation_ids": x.ids, "operation_name": x.op})
		return
	}
	w.b = append(w.b, `{"args":`...)
	w.positional(Args(x.args))
	b := append(w.b, `,"count":`...)
	b = strconv.AppendInt(b, int64(count), 10)
	b = append(b, `,"identity":`...)
	b = appendEscaped(b, x.identity)
	w.b = append(b, `,"operation_ids":`...)
	if x.ids == nil {
		w.null()
	} else {
		w.stringList(x.ids)
	}
	b = append(w.b, `,"operation_name":`...)
	b = appendEscaped(b, x.op)
	w.b = append(b, '}')
	w.first = false
}

// appendStringsOmit appends key and v, compact, unless v is empty.
func (w *reportWriter) appendStringsOmit(b []byte, key string, v []string) []byte {
	if len(v) == 0 {
		return b
	}
	b = append(b, key...)
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = w.appendText(b, s)
	}
	return append(b, ']')
}

// findings writes fs, each finding compact on a line of its own, as a
// trace's operations are: indented, the findings of the ten-write suite's
// report (160 with its problems, each with a map of details) were a fifth
// of its bytes in spaces and line breaks alone.
func (w *reportWriter) findings(fs []Finding) {
	w.open('[')
	indent := w.indent
	for i := range fs {
		w.elem()
		w.indent = false
		if w.record {
			w.spans = append(w.spans, findingSpan{f: &fs[i], start: len(w.b)})
			w.finding(&fs[i])
			w.spans[len(w.spans)-1].end = len(w.b)
		} else {
			w.finding(&fs[i])
		}
		w.indent = indent
	}
	w.close(']')
}

// allFindings writes the report's findings, which Report.tally made as the
// baseline's then each result's, in order (spans holds where result wrote
// those: the results', then the baseline's). A finding that is the one
// written there (sameFinding) is copied from there, not written again:
// encoding them twice was a third of the ten-write suite's report (75
// findings, each with a map of details).
func (w *reportWriter) allFindings(r *Report, fromResults, fromBaseline []findingSpan) {
	if len(r.Findings) != len(fromBaseline)+len(fromResults) {
		w.findings(r.Findings)
		return
	}
	w.open('[')
	indent := w.indent
	for i := range r.Findings {
		w.elem()
		var sp *findingSpan
		if i < len(fromBaseline) {
			sp = &fromBaseline[i]
		} else {
			sp = &fromResults[i-len(fromBaseline)]
		}
		if !sameFinding(&r.Findings[i], sp.f) {
			w.indent = false
			w.finding(&r.Findings[i])
			w.indent = indent
			continue
		}
		w.b = append(w.b, w.b[sp.start:sp.end]...)
	}
	w.close(']')
}

// sameFinding reports whether a is a copy of b, every field the same
// value, its strings, lists and map the same memory (Report.tally copies
// the results' findings into the report's): a was written as b was. A
// field added to Finding must be compared here
// (TestSameFindingComparesEveryField).
func sameFinding(a, b *Finding) bool {
	return sameBeforeSeenIn(a, b) && len(a.SeenIn) == len(b.SeenIn) && unsafe.SliceData(a.SeenIn) == unsafe.SliceData(b.SeenIn)
}

// sameBeforeSeenIn is sameFinding but for SeenIn, the last field written.
func sameBeforeSeenIn(a, b *Finding) bool {
	same := func(x, y []string) bool { return len(x) == len(y) && unsafe.SliceData(x) == unsafe.SliceData(y) }
	str := func(x, y string) bool { return len(x) == len(y) && unsafe.StringData(x) == unsafe.StringData(y) }
	return str(a.Code, b.Code) && a.Severity == b.Severity && str(a.Message, b.Message) &&
		str(a.Scenario, b.Scenario) && same(a.Ops, b.Ops) && same(a.Identities, b.Identities) &&
		same(a.Calls, b.Calls) && str(a.Replay, b.Replay) && str(a.Stack, b.Stack) &&
		mapData(a.Details) == mapData(b.Details) && len(a.Details) == len(b.Details) &&
		same(a.Follows, b.Follows)
}

// problem writes p, a problem of the report, compact. GroupFindings made
// it a copy of the first finding of its kind with the scenarios it was
// seen in: when a finding written in a result without SeenIn is the same
// but for that (sameBeforeSeenIn), its bytes up to its closing brace are
// copied and only seen_in is written. spans are the results' and the
// baseline's findings; at is where the last problem was found in them,
// where the next is looked for first (problems come in the order of
// their first finding). The ten-write suite's report has 10 problems,
// each a duplicate_write with its details: copied, WriteJSON of that
// report to io.Discard took 3 to 5 µs less of about 165, and written
// right after its suite about 2.5 µs less of 189 (medians of 6 runs of
// each build alternated, GOMAXPROCS=1, fifteenth sitting).
func (w *reportWriter) problem(p *Finding, spans []findingSpan, at int) int {
	for k := range spans {
		i := (at + k) % len(spans)
		sp := &spans[i]
		if len(sp.f.SeenIn) > 0 || !sameBeforeSeenIn(p, sp.f) {
			continue
		}
		b := append(w.b, w.b[sp.start:sp.end-1]...)
		b = w.appendSeenIn(b, p.SeenIn)
		w.b = append(b, '}')
		w.first = false
		return i + 1
	}
	w.finding(p)
	return at
}

// mapData is the pointer a map value holds.
func mapData(m map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// result writes resultJSON: the AgentIdem fields, then the plain result's
// fields that they do not shadow.
func (w *reportWriter) result(r *Result) {
	kind := r.Kind
	if kind == "" {
		kind = r.Scenario
	}
	w.open('{')
	w.str("scenario", Family(kind))
	w.key("operation_index")
	if r.OperationIndex >= 0 {
		w.b = strconv.AppendInt(w.b, int64(r.OperationIndex), 10)
	} else {
		w.null()
	}
	w.strNull("operation_name", r.OperationName)
	w.strNull("phase", r.Phase)
	w.boolean("safe", r.Safe)
	w.boolean("failed", r.Failed)
	w.strNull("error", r.Error)
	w.key("trace")
	w.traceOf(r.Trace, r.Scenario)
	w.key("invariants")
	w.open('[')
	for i := range r.Invariants {
		w.elem()
		w.invariant(&r.Invariants[i])
	}
	w.close(']')
	w.key("duplicates")
	w.open('[')
	indent := w.indent
	for i := range r.Duplicates {
		w.elem()
		w.indent = false // compact, as findings are
		w.duplicate(&r.Duplicates[i])
		w.indent = indent
	}
	w.close(']')
	w.key("findings")
	w.findings(r.Findings)
	w.str("scenario_id", r.Scenario)
	w.str("kind", r.Kind)
	w.boolOmit("inconclusive", r.Inconclusive)
	if r.Fault != nil {
		w.key("fault")
		w.fault(r.Fault)
	}
	w.boolean("fault_fired", r.FaultFired)
	w.str("replay", r.Replay)
	w.strOmit("schedule", r.Schedule)
	w.strOmit("legend", r.Legend)
	w.strOmit("outcome", r.Outcome)
	w.integer("duration_ns", int64(r.Duration))
	w.strOmit("clock", r.Clock)
	w.close('}')
}

var (
	resultPtrType = reflect.TypeFor[*Result]()
	findingType   = reflect.TypeFor[Finding]()
)

// report writes what Report.MarshalJSON's wire struct encodes to: the
// AgentIdem fields, the plain report's fields they do not shadow, then the
// findings.
func (w *reportWriter) report(r *Report) {
	w.open('{')
	w.str("schema_version", r.SchemaVersion)
	w.boolean("safe", r.Safe)
	w.integer("fault_count", int64(r.FaultCount))
	w.integer("unsafe_count", int64(r.UnsafeCount))
	w.boolean("baseline_succeeded", r.BaselineSucceeded)
	w.key("baseline_failure")
	if bf := r.failureJSON(); bf != nil {
		w.open('{')
		w.str("error_type", bf.ErrorType)
		w.str("message", bf.Message)
		w.close('}')
	} else {
		w.null()
	}
	w.key("baseline")
	if r.Baseline != nil {
		w.traceOf(r.Baseline.Trace, r.Baseline.Scenario)
	} else {
		w.null()
	}
	w.key("results")
	w.spans, w.record = slices.Grow(w.spans[:0], len(r.Findings)), true
	w.open('[')
	for _, res := range r.Results {
		w.elem()
		if res == nil {
			w.null()
			continue
		}
		w.result(res)
	}
	w.close(']')
	w.str("name", r.Name)
	w.integer("inconclusive_count", int64(r.InconclusiveCount))
	w.key("baseline_result")
	fromResults := len(w.spans)
	if r.Baseline == nil {
		w.null()
	} else {
		before := w.err
		w.result(r.Baseline)
		w.wrap(before, resultPtrType)
	}
	w.record = false
	if len(r.Problems) > 0 {
		w.key("problems")
		w.open('[')
		indent := w.indent
		at := 0
		for i := range r.Problems {
			w.elem()
			before := w.err
			w.indent = false
			at = w.problem(&r.Problems[i], w.spans, at)
			w.indent = indent
			w.wrap(before, findingType)
		}
		w.close(']')
	}
	w.stringsOmit("notes", r.Notes)
	w.integer("agent_runs", int64(r.AgentRuns))
	w.integer("seed", r.Seed)
	w.time("started_at", r.StartedAt, timeType)
	w.integer("duration_ns", int64(r.Duration))
	if s := r.Shard; s != nil {
		w.key("shard")
		w.open('{')
		w.integer("index", int64(s.Index))
		w.integer("total", int64(s.Total))
		w.strOmit("source", s.Source)
		w.integer("planned", int64(s.Planned))
		w.integer("ran", int64(s.Ran))
		w.intOmit("diverged", s.Diverged)
		if len(s.Merged) > 0 {
			w.key("merged")
			w.open('[')
			for _, m := range s.Merged {
				w.elem()
				w.b = strconv.AppendInt(w.b, int64(m), 10)
			}
			w.close(']')
		}
		w.close('}')
	}
	w.key("findings")
	w.allFindings(r, w.spans[:fromResults], w.spans[fromResults:])
	w.close('}')
}

// plainLen is the length of the longest prefix of s made of bytes that
// jsonPlain says are plain. Reading eight bytes at a time (a word tested
// for each byte to escape at once) was tried twice and not kept: in the
// ninth sitting no difference the loaded machine let us measure, in the
// tenth 154 µs of CPU for BenchmarkReportWriteJSON's report against 149
// with this loop (medians of 16 alternated runs, GOMAXPROCS=1): a
// report's strings are short, and a long message has a byte to escape
// every few dozen.
func plainLen(s string) int {
	i := 0
	for i < len(s) && jsonPlain[s[i]] {
		i++
	}
	return i
}

// appendEscaped appends s as appendJSONString does, each plain run
// between the bytes it escapes in one piece (plainLen).
func appendEscaped(b []byte, s string) []byte {
	i := plainLen(s)
	b = append(b, '"')
	for i < len(s) {
		b = append(b, s[:i]...)
		s = s[i:]
		// s[0] is not plain: a quote or a backslash is escaped here
		// without a call (the quotes around the keys and ids a
		// finding's message quotes), anything else as
		// appendJSONStringFrom does, and the next plain run is found
		// by plainLen's loop. Against appendJSONString, this took the
		// encoding of BenchmarkReportWriteJSON's report from 168 to
		// 164 µs of CPU (medians of 10 alternated runs, GOMAXPROCS=1,
		// load 5, tenth sitting); with stringList's compact lists,
		// from 169 to 160.
		n := 1
		switch c := s[0]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		default:
			if c >= utf8.RuneSelf {
				_, n = utf8.DecodeRuneInString(s)
			}
			b = appendJSONStringFrom(b, s[:n], 0)
			b = b[:len(b)-1] // its closing quote
		}
		s = s[n:]
		i = plainLen(s)
	}
	b = append(b, s...)
	return append(b, '"')
}

// opMemo remembers where in a report the parts of operations that repeat
// from one scenario to the next were written: each scenario calls the
// same tools with the same ids, names, entities and arguments, and only
// the times, the status and the counters differ. An operation's head (its
// id, name, kind and entity) and its tail (its args, named_args, identity,
// result and error) are copied from the last operation written with the
// same id, looked up by the address of its id (a suite's traces share
// their call ids, callIDs), when every field they are written from is
// equal (sameHead, sameTail): the bytes are those encoding would write.
// In the ten-write suite's report under TestAgent, 288 of 436 heads and
// 243 tails are copied; its WriteJSON to io.Discard took 3 to 5 µs less
// of about 165 (medians of 6 runs of 2,700 writes of each build
// alternated, GOMAXPROCS=1, fifteenth sitting); written right after its
// suite, as testkit writes it, the difference was under the noise (189.1
// against 188.6 µs of thread CPU, medians of 6 runs of 300 suites).
type opMemo [1 << opMemoBits]opSeen

const opMemoBits = 7

// opSeen is an operation written earlier: its head is b[headAt:headEnd],
// its entity's text b[entity:entityEnd], its tail b[tailAt:tailEnd].
type opSeen struct {
	head, tail        *Operation
	headAt, headEnd   int
	entity, entityEnd int
	tailAt, tailEnd   int
}

// of returns the slot of operations with the id id.
func (m *opMemo) of(id string) *opSeen {
	h := (uint64(uintptr(unsafe.Pointer(unsafe.StringData(id)))) + uint64(len(id))) * 0x9e3779b97f4a7c15
	return &m[h>>(64-opMemoBits)]
}

// sameHead reports whether o's head is written as p's was.
func sameHead(o, p *Operation) bool {
	return o.ID == p.ID && o.Name == p.Name && o.Kind == p.Kind && o.IdentityError == p.IdentityError &&
		len(o.IdentityPanic) == 0 && len(o.After) == 0 && o.Entity == p.Entity
}

// fixedTail reports whether o's tail is written from values whose text
// cannot change (fixedText): one that sameTail can compare.
func fixedTail(o *Operation) bool {
	if o.Result != nil && !fixedText(o.Result) {
		return false
	}
	for _, v := range o.Args.Values {
		if !fixedText(v) {
			return false
		}
	}
	return true
}

// sameTail reports whether o's tail is written as p's was; p's is one
// fixedTail allowed.
func sameTail(o, p *Operation) bool {
	if o.Kind != p.Kind || o.Identity != p.Identity || o.Error != p.Error || o.Result != p.Result ||
		len(o.Args.Values) != len(p.Args.Values) || len(o.Args.Names) != len(p.Args.Names) {
		return false
	}
	for i, v := range o.Args.Values {
		if v != p.Args.Values[i] {
			return false
		}
	}
	for i, n := range o.Args.Names {
		if n != p.Args.Names[i] {
			return false
		}
	}
	return true
}
