package runtime

import (
	"encoding/json"
	"strconv"
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
