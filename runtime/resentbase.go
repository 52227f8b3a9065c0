package runtime

import (
	"fmt"
	"strconv"
	"strings"
)

// When the baseline's own call sent its write request more than once (its
// first answer a 5xx the service gave after applying it, and its client
// sent it again), the baseline's change is not known to be one request's,
// and resentInside cannot measure the lost_response call's change against
// it. State can still tell, in the cases below (red team rtW #1: a keyed
// refund through go-retryablehttp against a gateway that books, then
// answers 502; inconclusive on every run, with a note that the baseline
// may have applied it twice, where State showed its call gained exactly
// one refund).
//
// A window that only gained entries, at most one in each place, with no
// number moved, no field changed and nothing removed, is at most one
// application of the request, however many times it was sent: applied
// twice, the same request adds its entries twice. That decides the
// lost_response call safe, or, for the baseline's call, makes its change
// one request's, to compare with as usual. A window that gained entries
// only, as many identical ones in a place as the requests sent, is what a
// service that applied each of them leaves: the note says so, with the
// counts. Anything else (a number moved, entries with ids that differ) is
// what one application or more may leave alike: the note says what State
// showed, and that it does not tell how many of the requests applied.

// added is what a change did, when it only added: the entries added, by
// the path of their collection (a list's elements, a map's keys' values).
// other is set when it did anything else: removed an entry, moved a
// number, changed a string or a bool, or replaced a value by another kind.
type added struct {
	entries map[string][]any
	other   bool
}

// addedOf reads the change from snapshot a to snapshot b; ok is false when
// one does not decode as JSON.
func addedOf(a, b string) (ad added, ok bool) {
	x, err := decodeState(a)
	if err != nil {
		return ad, false
	}
	y, err := decodeState(b)
	if err != nil {
		return ad, false
	}
	ad.entries = map[string][]any{}
	ad.walk("", x, y)
	return ad, true
}

func (ad *added) walk(path string, a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			ad.other = true
			return
		}
		for k := range x {
			if _, in := y[k]; !in {
				ad.other = true
			}
		}
		for _, k := range sortedKeys(y) {
			if xv, in := x[k]; in {
				ad.walk(path+"\x01"+k, xv, y[k])
			} else {
				ad.entries[path] = append(ad.entries[path], y[k])
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			ad.other = true
			return
		}
		// The old elements must all still be there; the rest are added.
		have := entryCounts(x)
		for _, e := range y {
			if k := encode(e); have[k] > 0 {
				have[k]--
			} else {
				ad.entries[path] = append(ad.entries[path], e)
			}
		}
		for _, n := range have {
			if n > 0 {
				ad.other = true
			}
		}
	case nil:
		switch y := b.(type) {
		case nil:
		case map[string]any:
			for _, k := range sortedKeys(y) {
				ad.entries[path] = append(ad.entries[path], y[k])
			}
		case []any:
			ad.entries[path] = append(ad.entries[path], y...)
		default:
			ad.other = true
		}
	default:
		if !equalValues(a, b) {
			ad.other = true
		}
	}
}

// atMostOnce reports whether the change only added entries, at least one,
// and no more than one in any place.
func (ad added) atMostOnce() bool {
	if ad.other || len(ad.entries) == 0 {
		return false
	}
	for _, es := range ad.entries {
		if len(es) > 1 {
			return false
		}
	}
	return true
}

// perRequest returns a place where the change, which only added, added n
// entries, all identical: n requests each applied. "" when there is none.
func (ad added) perRequest(n int) string {
	if ad.other || n < 2 {
		return ""
	}
	for _, p := range sortedKeys(ad.entries) {
		es := ad.entries[p]
		if len(es) != n {
			continue
		}
		same := true
		for _, e := range es[1:] {
			if encode(e) != encode(es[0]) {
				same = false
				break
			}
		}
		if same {
			return p
		}
	}
	return ""
}

// sends counts the requests of sent that are first's: the same method,
// host, path and body.
func sends(sent []sentRequest, first *sentRequest) int {
	n := 0
	for _, r := range sent {
		if r.Method == first.Method && r.Host == first.Host && r.Path == first.Path && r.body == first.body {
			n++
		}
	}
	return n
}

// baselineResent decides the lost_response call o's scenario where the
// baseline's same call b sent first's request more than once (see above).
// It returns done when it decided (safe, or inconclusive through
// inconclusive); otherwise the baseline's change is one request's and the
// caller compares with it as usual.
func baselineResent(o, b *Operation, first *sentRequest, inconclusive func(string)) (done bool) {
	n := sends(b.sent(), first)
	answer := "no answer"
	if first.Status != 0 {
		answer = "an answer of " + strconv.Itoa(first.Status)
	}
	sentAgain := fmt.Sprintf("the baseline's %s sent %s %s inside the call too, after %s", b.ID, first.what(), timesAgain(n-1), answer)
	if o.stateSeen() {
		if ad, ok := addedOf(o.stateWindow()); ok && ad.atMostOnce() {
			return true // at most one application, whatever was sent
		}
	}
	if !b.stateSeen() {
		inconclusive(sentAgain + ", and State could not tell its change apart from other calls' (its window held other writes), so the suite cannot tell whether that change is one request's, and cannot compare with it")
		return true
	}
	bb, ba := b.stateWindow()
	bad, ok := addedOf(bb, ba)
	if !ok {
		inconclusive(sentAgain + ", and State's snapshots around it do not decode as JSON, so the suite cannot tell whether its change is one request's, and cannot compare with it")
		return true
	}
	if bad.atMostOnce() {
		return false // one application: compare with it
	}
	ob, oa := o.stateWindow()
	change := orNothingChange(describeChange(ob, oa, maxChange))
	if p := bad.perRequest(n); p != "" {
		inconclusive(fmt.Sprintf("%s, and State saw its window gain %d identical entries in %s, one for each request it sent: the baseline itself may have applied the request %s (a service that applies a request, then fails, and a client that sends it again), so its change is not one request's, and the suite cannot compare with it (%s changed the state by %s); if it did, every failure after applying repeats the write in production too: make the request idempotent at the service (an Idempotency-Key it honors, a conditional write)",
			sentAgain, n, placeName(p), timesN(n), o.ID, change))
		return true
	}
	inconclusive(fmt.Sprintf("%s, so its change is not known to be one request's, and the suite cannot compare with it: State saw the baseline's call change the state by %s, and %s by %s, which does not tell how many of the requests the service applied (a window that only gains entries, at most one in each place, would)",
		sentAgain, orNothingChange(describeChange(bb, ba, maxChange)), o.ID, change))
	return true
}

// timesN is n times in words: "twice", "3 times".
func timesN(n int) string {
	if n == 2 {
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

func orNothingChange(s string) string {
	if strings.TrimSpace(s) == "" {
		return "nothing"
	}
	return s
}
