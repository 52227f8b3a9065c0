package runtime

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A heartbeat in State beside a Settle. A world whose goroutines change a
// place by themselves (a lease renewed, a poller's last-seen mark, a phase
// flipped every 20 ms) never holds still. Without a Settle the baseline's
// end is read again and again, and the places that change there twice or
// more are learned (untraced.restless). With a Settle the end is read once,
// after the Settle said quiet, so nothing was learned, and a beat inside a
// repeat's window was taken for the repeat's change: a correct agent was a
// duplicate_write in 7 suites of 20 (TestAHeartbeatInStateBesideASettle;
// red team rU's probe, 81 runs of 90 before the sixteenth sitting).
//
// So where a Settle is given, the baseline reads the state again and again
// after Setup, before its agent runs (restlessBefore): no call has been
// made, and what changes then is the world's own, whoever started the
// goroutines that change it (Setup, or the test before the suite: a
// service it runs for all its suites, which Setup only empties). A place
// that changes twice or more is restless, and every snapshot of the suite
// from then on, the baseline's included, reads it as null
// (judge.leaveOut): the windows, the ends and the Settle's second look
// (settlelook.go) compare what the calls did. The baseline's trace says
// which places were left out. The look ends once the state, with those
// places left out, held still for restlessHold polls (100 ms, as the
// baseline's end without a Settle, endCalibrate), within restlessPolls
// (400 ms): 100 ms once per suite for a world that holds still, about
// 150 ms for one with a 20 ms heartbeat. A heartbeat slower than the hold
// is not learned, as without a Settle: with a hold of 50 ms, one every
// 80 ms was not, and a correct agent whose queue took 40 ms was a
// duplicate_write in 15 runs of 15 (red team rV). A place that is an
// entry of a list (a log a heartbeat appends to) holds no value to null,
// and is not left out.

// restlessHold and restlessPolls are restlessBefore's polls, endPoll
// apart: how many the state must hold still for, and how many at most.
const (
	restlessHold  = 20
	restlessPolls = 80
)

// restlessBefore reads the state every endPoll until it held still, with
// the places that changed twice or more left out, for restlessHold polls,
// or for restlessPolls in all. It returns those places by key (place.key)
// and their names; none where a snapshot failed or did not decode.
func (j *judge) restlessBefore() (map[string]bool, []string) {
	prev, err := j.snapshot()
	if err != nil {
		return nil, nil
	}
	var (
		views stateViews
		keys  map[string]bool
		names []string
		times = map[string]int{}
		still = prev // prev with keys left out: what must hold still
	)
	for polls, held := 0, 0; polls < restlessPolls && held < restlessHold; polls++ {
		endSleep(endPoll)
		s, err := j.snapshot()
		if err != nil {
			return nil, nil
		}
		if s != prev {
			places, ok := changedPlaces(views.of(prev), views.of(s))
			if !ok {
				return nil, nil
			}
			prev = s
			for _, p := range places {
				if p.elem {
					continue // an entry of a list: no value to null (nullOut)
				}
				if times[p.key()]++; times[p.key()] == 2 {
					if keys == nil {
						keys = map[string]bool{}
					}
					keys[p.key()] = true
					names = append(names, p.name())
				}
			}
		}
		if s = nullOut(s, keys); s != still {
			still, held = s, 0
			continue
		}
		held++
	}
	slices.Sort(names)
	return keys, names
}

// restlessNote is the baseline trace's note for places names, left out of
// every state (restlessBefore), learned in d.
func restlessNote(names []string, d time.Duration) string {
	return fmt.Sprintf("State's %s changed by itself twice or more in the %d ms after Setup, before the agent ran, and a Settle is given: taken for what the world changes on its own (a heartbeat, a lease renewed), it is read as null in every state this suite compares, so a write whose only effect is there is not seen; keep such places out of State for the suite to judge them",
		strings.Join(names, ", "), d.Milliseconds())
}
