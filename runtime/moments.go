package runtime

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A moment stored as a number: time.Now().Unix(), UnixMilli, UnixMicro or
// UnixNano, SQLite's unixepoch() (with 'subsec', seconds and a fraction),
// a payment API's "created": 1733400000. Two runs stamp what they make at
// other moments in those as in a date-time string (clockLike), and
// compared across runs the baseline's time against the run's read as a
// change: a duplicate_write on every run of a create-if-absent that stores
// created_ms, 7 runs in 200 where it stores whole seconds and the two runs
// straddle one, findings in six scenarios of a payment agent that rolls
// back and retries, and parallel tags stamped in milliseconds that never
// ended in one world (red team, /tmp/rtK section 1). A number has no
// shape that says "moment", so its value does: an integer that, read as
// seconds, milliseconds, microseconds or nanoseconds since the Unix epoch,
// falls within the suite's wall-clock window, from momentMargin before the
// first suite of the process was made to momentMargin after now; or a
// number with a fraction whose whole part does, as seconds. A counter, an
// amount or an id is compared as before: to be taken for a moment it
// would have to lie within minutes of now counted in one of those units
// (about 1.8e9 as seconds, 1.8e12 as milliseconds), where a balance, a
// quantity or a row number does not live, and a snowflake id (a few
// milliseconds since a later epoch, shifted by 12 or 22 bits) is not
// there either.

// momentMargin widens the suite's wall-clock window on both sides. Before
// the suite: a stamp cut to whole seconds (unixepoch()) is up to a second
// older than the suite's start measured in nanoseconds. After now: a sink
// whose clock runs ahead of this process's (a database server, an API
// reached over the network, kept by NTP to well under a second). A minute
// covers both with room, and keeps the window a band of minutes, where
// the values of counters and amounts are not.
const momentMargin = time.Minute

// processStart is the start of the window before any suite was made (a
// test of the comparisons themselves). It is read on the real clock:
// package initialisation never runs in a testing/synctest bubble.
var processStart = time.Now().UnixNano()

// bubbleEpoch is the moment every testing/synctest bubble's clock starts
// at, midnight UTC on 2000-01-01: a suite run in a bubble (VirtualTime, or
// a test's own synctest.Test) stamps on that clock.
var bubbleEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// firstSuite is the moment the first suite of the process was made, on
// the real clock, in nanoseconds since the Unix epoch; 0 before.
var firstSuite atomic.Int64

// noteSuiteStart records t, the moment a suite was made, as the start of
// the window where it is the first. A suite made in a bubble is not
// recorded: its moment is on the bubble's clock, 26 years before the real
// one, and a window from it to the real now would take every count of
// about 1e9 to 1.8e9 for a moment in seconds.
func noteSuiteStart(t time.Time) {
	if ns := t.UnixNano(); ns >= processStart {
		firstSuite.CompareAndSwap(0, ns)
	}
}

// momentWindow is the wall-clock window a number must fall within, read
// in one of the units, to count as a moment (epochLike), in nanoseconds
// since the Unix epoch.
type momentWindow struct{ lo, hi int64 }

// nowWindow returns the window as of now, on the clock the caller runs
// on: in a testing/synctest bubble (its now before the process started),
// from the bubble's epoch to its now.
func nowWindow() momentWindow {
	now := time.Now().UnixNano()
	lo := firstSuite.Load()
	switch {
	case now < processStart:
		lo = bubbleEpoch
	case lo == 0:
		lo = processStart
	}
	return momentWindow{lo - int64(momentMargin), now + int64(momentMargin)}
}

// epochLike reports whether n, the text of a JSON number, reads as a
// moment within w: an integer in seconds, milliseconds, microseconds or
// nanoseconds since the Unix epoch, or seconds with a fraction
// (unixepoch('subsec'), a float64 of Unix seconds).
func (w momentWindow) epochLike(n string) bool {
	whole, frac := n, false
	for i := 0; i < len(n); i++ {
		switch c := n[i]; {
		case c == '.' && i > 0 && !frac:
			whole, frac = n[:i], true
		case c >= '0' && c <= '9':
		default:
			return false // a sign, an exponent: no moment of now
		}
	}
	if len(whole) < 9 || len(whole) > 19 {
		return false // fewer than 9 digits is before 2001 even in seconds
	}
	v, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return false
	}
	units := []int64{1e9, 1e6, 1e3, 1} // seconds, ms, µs, ns
	if frac {
		units = units[:1]
	}
	for _, u := range units {
		if v >= w.lo/u && v <= w.hi/u {
			return true
		}
	}
	return false
}

// holdsNumber reports whether snapshot s may hold a number that is a
// moment within w (epochLike): a quick look at its runs of digits.
func (w momentWindow) holdsNumber(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < '0' || s[i] > '9' {
			i++
			continue
		}
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		if j-i >= 9 && w.epochLike(s[i:j]) {
			return true
		}
		i = j
	}
	return false
}

// numberMoment returns clockMoment for a number that is a moment within w
// (epochLike) and that no call was given (named), else n as it is.
func (w momentWindow) numberMoment(n json.Number, named ...map[string]bool) any {
	if !w.epochLike(string(n)) {
		return n
	}
	for _, m := range named {
		if m[string(n)] {
			return n
		}
	}
	return clockMoment
}

// mapScalars returns snapshot s with every string value changed by f and
// every number by g, encoded as encode does; s is returned as it is when
// it cannot be decoded.
func mapScalars(s string, f func(string) string, g func(json.Number) any) string {
	v, err := decodeState(s)
	if err != nil {
		return s
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
			return x
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
			return x
		case string:
			return f(x)
		case json.Number:
			return g(x)
		}
		return v
	}
	return encode(walk(v))
}

// A moment written as text that does not begin its string, or in a
// compact form: a note "subscribed at 2026-12-05 19:58:22.389861+00" (a
// PostgreSQL timestamptz as text), a receipt "RCPT-20261205-195822-792"
// (to_char(clock_timestamp(), 'YYYYMMDD-HH24MISS-MS')), a file name
// "export_20261205T195822Z.csv". Only a moment that begins a string was
// one (clockLike), and a correct create-if-absent that wrote such a note
// or receipt was a duplicate_write in every concurrent delivery: the
// baseline's clock against the run's (red team, /tmp/rtM P1). Inside a
// string, digits are not a moment by their shape alone (an order
// ORD-20261205-000123, a version 2026.12.05), so such a moment is one
// only where it lies within the suite's wall-clock window (momentWindow),
// read in its zone, or where it has none in UTC or in the process's own
// zone: a sink stamps the time it is now, and an order number, a
// quantity or a date a call set does not name a second within minutes of
// now. A moment that begins its string is one whatever its date, as
// before: that is a created_at column, a time.Time in JSON.

// textMoments returns string x with every moment it holds replaced by
// clockMoment, unless given says that moment's text was given to a call:
// the moment that begins it (clockLike, to the end of its fraction of a
// second and its zone: momentLen), and each within w after it (momentAt).
// The rest of x stays.
func (w momentWindow) textMoments(x string, given func(string) bool) string {
	var b strings.Builder
	last, i := 0, 0
	if clockLike(x) {
		if n := momentLen(x); !given(x[:n]) {
			b.WriteString(clockMoment)
			last = n
		}
		i = momentLen(x)
	}
	for ; i+14 <= len(x); i++ {
		n := w.momentAt(x, i)
		if n == 0 {
			continue
		}
		if !given(x[i : i+n]) {
			b.WriteString(x[last:i])
			b.WriteString(clockMoment)
			last = i + n
		}
		i += n - 1
	}
	if last == 0 {
		return x
	}
	b.WriteString(x[last:])
	return b.String()
}

// momentAt returns the length of the moment that s holds at offset i, or
// 0: a date and a time of day to the second, "2026-12-05 19:58:22" or
// "2026-12-05T19:58:22" (clockLike), or compact, "20261205195822" with
// "T", "-", "_" or " " between date and time or nothing, then a fraction
// of a second and a zone (momentEnd); not glued to a letter or a digit
// before it or to a digit after it, and within w (withinText).
func (w momentWindow) momentAt(s string, i int) int {
	if !isDigit(s[i]) || i > 0 && (isDigit(s[i-1]) || isLetter(s[i-1])) {
		return 0
	}
	var f [6]int // year, month, day, hour, minute, second
	num := func(j, n int) (int, bool) {
		v := 0
		for k := j; k < j+n; k++ {
			if k >= len(s) || !isDigit(s[k]) {
				return 0, false
			}
			v = v*10 + int(s[k]-'0')
		}
		return v, true
	}
	var end int
	compact := false
	switch {
	case clockLike(s[i:]):
		f[0], _ = num(i, 4)
		for k, at := range [5]int{5, 8, 11, 14, 17} {
			f[1+k], _ = num(i+at, 2)
		}
		end = i + 19
	default:
		// Compact: eight digits of date, at most one separator, six of
		// time.
		var y, m, d bool
		f[0], y = num(i, 4)
		f[1], m = num(i+4, 2)
		f[2], d = num(i+6, 2)
		ok := y && m && d
		if !ok {
			return 0
		}
		t := i + 8
		if t < len(s) && strings.IndexByte("T-_ ", s[t]) >= 0 {
			t++
		}
		for k := range 3 {
			var good bool
			f[3+k], good = num(t+2*k, 2)
			ok = ok && good
		}
		if !ok {
			return 0
		}
		end, compact = t+6, true
	}
	if end < len(s) && isDigit(s[end]) {
		return 0 // more digits: a number, not a moment
	}
	end, offset, zoned := momentEnd(s, end, compact)
	if end < len(s) && isDigit(s[end]) {
		return 0
	}
	if f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60 {
		return 0
	}
	if !w.withinText(f, offset, zoned) {
		return 0
	}
	return end - i
}

// withinText reports whether the date and time of day f (year, month,
// day, hour, minute, second), in the zone offset seconds east of UTC where
// zoned, else in UTC or in the process's own zone, is a moment within w.
func (w momentWindow) withinText(f [6]int, offset int, zoned bool) bool {
	in := func(loc *time.Location) bool {
		ns := time.Date(f[0], time.Month(f[1]), f[2], f[3], f[4], f[5], 0, loc).UnixNano()
		// The second the text names holds the moment stamped in it.
		return ns+int64(time.Second) > w.lo && ns <= w.hi
	}
	if zoned {
		return in(time.FixedZone("", offset))
	}
	return in(time.UTC) || in(time.Local)
}

// momentEnd returns where the moment whose date and time of day end at n
// in s ends, past a fraction of a second (".123", ",5"; in a compact
// moment also "-792" or "_792", three, six or nine digits, as
// to_char's MS and US write it) and a zone (Z; +01:00, +0100 or +01, as
// PostgreSQL writes it; " +0000 UTC", as time.Time's String writes it,
// with its monotonic reading "m=+0.001"), and the zone's offset east of
// UTC in seconds, zoned false where it has none.
func momentEnd(s string, n int, compact bool) (end, offset int, zoned bool) {
	digits := func(j int) int { // the digits from j on
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		return k - j
	}
	switch {
	case n+1 < len(s) && (s[n] == '.' || s[n] == ',') && isDigit(s[n+1]):
		n += 1 + digits(n+1)
	case compact && n+1 < len(s) && (s[n] == '-' || s[n] == '_'):
		if d := digits(n + 1); d == 3 || d == 6 || d == 9 {
			n += 1 + d
		}
	}
	two := func(j int) (int, bool) {
		if j+1 < len(s) && isDigit(s[j]) && isDigit(s[j+1]) {
			return int(s[j]-'0')*10 + int(s[j+1]-'0'), true
		}
		return 0, false
	}
	zone := func(j int) (int, int, bool) { // a zone [+-]hh[[:]mm] at j: its length and offset
		if j >= len(s) || s[j] != '+' && s[j] != '-' {
			return 0, 0, false
		}
		sign := 1
		if s[j] == '-' {
			sign = -1
		}
		h, ok := two(j + 1)
		if !ok || h > 14 {
			return 0, 0, false
		}
		k := j + 3
		m := 0
		if k < len(s) && s[k] == ':' {
			if m, ok = two(k + 1); !ok {
				return 0, 0, false
			}
			k += 3
		} else if mm, ok := two(k); ok {
			m, k = mm, k+2
		}
		if k < len(s) && isDigit(s[k]) || m > 59 {
			return 0, 0, false
		}
		return k - j, sign * (h*3600 + m*60), true
	}
	switch {
	case n < len(s) && s[n] == 'Z':
		return n + 1, 0, true
	case n+1 < len(s) && s[n] == ' ' && (s[n+1] == '+' || s[n+1] == '-'):
		l, off, ok := zone(n + 1)
		if !ok {
			return n, 0, false
		}
		n += 1 + l // " +0000", then a zone's name
		upper := func(i int) bool { return i < len(s) && s[i] >= 'A' && s[i] <= 'Z' }
		if n < len(s) && s[n] == ' ' && upper(n+1) {
			n++
			for upper(n) {
				n++
			}
		}
		if strings.HasPrefix(s[n:], " m=") {
			n += 3
			for n < len(s) && s[n] != ' ' {
				n++
			}
		}
		return n, off, true
	}
	if l, off, ok := zone(n); ok {
		return n + l, off, true
	}
	return n, 0, false
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
