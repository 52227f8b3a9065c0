package runtime

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seenDesk is one account row: a balance that book_order charges 10 an
// order, a last_seen mark that a heartbeat of the world's flips, and a
// flag.
type seenDesk struct {
	// mode is the tool's: "dedup" charges an order once (the correct
	// agent), "naive" on each call, "toggle" once, and flips the flag on
	// each call (a toggle done twice ends where it began).
	mode string
	// beatInBaseline has the heartbeat beat once, in the first Setup's
	// world (the baseline's), while its call runs: a beat slower than a
	// run, which a loaded machine put inside the baseline's call, and
	// which never comes in the shorter later runs.
	beatInBaseline bool
	// queued has the call queue the charge for a worker, which books it
	// 5 ms later, and the suite a Settle that waits for it.
	queued   bool
	pending  int
	meet     *rendezvous
	mu       sync.Mutex
	setups   int
	orders   map[string]bool
	charged  int
	lastSeen string
	flag     bool
	beat     chan struct{} // the heartbeat's, in the baseline's world
	beaten   chan struct{}
}

func (d *seenDesk) setup(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setups++
	d.orders, d.charged, d.lastSeen, d.flag, d.pending = map[string]bool{}, 0, "a", false, 0
	d.beat, d.beaten = nil, nil
	if d.beatInBaseline && d.setups == 1 {
		beat, beaten := make(chan struct{}), make(chan struct{})
		d.beat, d.beaten = beat, beaten
		go func() { // the world's heartbeat: one beat, when the call lets it
			<-beat
			d.mu.Lock()
			d.lastSeen = "b"
			d.mu.Unlock()
			close(beaten)
		}()
	}
	return nil
}

func (d *seenDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return map[string]any{"accounts": []any{map[string]any{"id": "acme", "balance": 100 - 10*d.charged, "last_seen": d.lastSeen, "flag": d.flag}}}
}

func (d *seenDesk) book(ctx context.Context, op *Op) error {
	return traced(ctx, op, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
		d.meet.wait()
		d.mu.Lock()
		charge := func() {
			if d.mode == "naive" || !d.orders["o-1"] {
				d.charged++
			}
			d.orders["o-1"] = true
		}
		if d.queued {
			d.pending++
			go func() {
				time.Sleep(5 * time.Millisecond)
				d.mu.Lock()
				defer d.mu.Unlock()
				charge()
				d.pending--
			}()
		} else {
			charge()
		}
		if d.mode == "toggle" {
			d.flag = !d.flag
		}
		beat, beaten := d.beat, d.beaten
		d.beat = nil
		d.mu.Unlock()
		if beat != nil {
			close(beat)
			select {
			case <-beaten:
			case <-time.After(time.Second):
			}
		}
		return nil
	})
}

// Two deliveries at once, their calls overlapped, are judged by the end
// against what one delivery left. A heartbeat slower than a run beat
// inside the baseline's call (a loaded machine's timing, made here on
// every run) and never in the concurrent run: the ends differ in
// last_seen alone, which nothing in that run changed. The correct agent
// was a duplicate_write there (CI229, CI239: "last_seen: "b" → "a""); the
// repeat is now unjudged, the scenario inconclusive, since the earlier
// scenarios, each of which booked once, ended with last_seen as they
// began. A toggle flipped twice ends as such a run does, where it began,
// but every earlier run flipped the flag: it is judged, never passed; its
// sequential delivery is caught too. The naive agent's second charge, a value this run
// changed, is caught in both deliveries. Each case runs with the charge
// made in the call (the cluster's window judges it: untouchedInWindow)
// and made by a worker after it, with a Settle (the end judges it:
// untouchedEndDiff); switched off, either rule leaves its case a
// duplicate_write of the correct agent.
func TestAnEndThatDiffersOnlyWhereTheRunChangedNothingIsUnjudged(t *testing.T) {
	for _, c := range []struct {
		mode                   string
		beatInBaseline, queued bool
	}{{"dedup", true, false}, {"dedup", false, false}, {"naive", true, false}, {"toggle", false, false},
		{"dedup", true, true}, {"naive", true, true}} {
		d := &seenDesk{mode: c.mode, beatInBaseline: c.beatInBaseline, queued: c.queued, meet: &rendezvous{timeout: 20 * time.Millisecond}}
		op := &Op{Name: "book_order", Kind: KindWrite, Params: []string{"order"}}
		opts := []Option{Setup(d.setup), State(d.snapshot)}
		if c.queued {
			opts = append(opts, Settle(func(ctx context.Context) error { return noneLeft(ctx, &d.mu, &d.pending) }))
		}
		rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return d.book(ctx, op) }, opts...)
		require.NoError(t, err)
		conc, seq := resultOf(t, rep, ScenarioDuplicateConcurrent), resultOf(t, rep, ScenarioDuplicateSeq)
		untouched := notesSaying(conc.Trace, "which this run's calls did not change")
		overlapped := false
		for _, o := range conc.Trace.Ops {
			overlapped = overlapped || o.Overlapped
		}
		switch c.mode {
		case "dedup":
			for _, r := range rep.Results {
				assert.Empty(t, r.Findings, "%s, beat in the baseline %v: %s: %q", c.mode, c.beatInBaseline, r.Scenario, r.Trace.Notes)
			}
			if !c.beatInBaseline {
				assert.Empty(t, untouched, "the ends alike: judged")
				assert.False(t, conc.Inconclusive, "the ends alike: judged")
				continue
			}
			require.True(t, overlapped, "the deliveries' calls overlapped")
			if assert.Len(t, untouched, 1, "%q", conc.Trace.Notes) {
				assert.Contains(t, untouched[0], `accounts[id="acme"].last_seen`)
			}
			assert.True(t, conc.Inconclusive)
		case "naive":
			assert.NotEmpty(t, seq.Findings, "the second charge")
			assert.NotEmpty(t, conc.Findings, "the second charge: %q", conc.Trace.Notes)
			assert.Empty(t, untouched)
		case "toggle":
			assert.NotEmpty(t, seq.Findings, "the flag flipped back by the second delivery")
			require.True(t, overlapped, "the deliveries' calls overlapped")
			assert.True(t, len(conc.Findings) > 0 || conc.Inconclusive && len(untouched) == 1, "never a plain pass: %q", conc.Trace.Notes)
		}
	}
}

// heldFromStart finds each value restlessPlaces names (a key, a row by its
// naming column, a list's only row, a line by how it begins) and asks that
// it was there at the start and is the same at the end; a value the run
// made (a key the start lacks) or changed is not held.
func TestHeldFromStartReadsEachPlace(t *testing.T) {
	from := `{"accounts":[{"id":"acme","last_seen":"a","n":1},{"id":"b","last_seen":"x","n":1}],"w":["worker=w1 t=3"],"one":[{"k":1,"j":5}],"m":{"x":1}}`
	for _, c := range []struct {
		name, to string
		held     bool
	}{
		{"all held, other values changed", `{"accounts":[{"id":"acme","last_seen":"a","n":2},{"id":"b","last_seen":"x","n":2}],"w":["worker=w1 t=3"],"one":[{"k":1,"j":6}],"m":{"x":1,"y":2}}`, true},
		{"a row's value changed", `{"accounts":[{"id":"acme","last_seen":"b","n":1},{"id":"b","last_seen":"x","n":1}],"w":["worker=w1 t=3"],"one":[{"k":1,"j":5}],"m":{"x":1}}`, false},
		{"a line changed", `{"accounts":[{"id":"acme","last_seen":"a","n":1},{"id":"b","last_seen":"x","n":1}],"w":["worker=w1 t=4"],"one":[{"k":1,"j":5}],"m":{"x":1}}`, false},
		{"the only row changed", `{"accounts":[{"id":"acme","last_seen":"a","n":1},{"id":"b","last_seen":"x","n":1}],"w":["worker=w1 t=3"],"one":[{"k":2,"j":5}],"m":{"x":1}}`, false},
		{"a key changed", `{"accounts":[{"id":"acme","last_seen":"a","n":1},{"id":"b","last_seen":"x","n":1}],"w":["worker=w1 t=3"],"one":[{"k":1,"j":5}],"m":{"x":3}}`, false},
	} {
		places := [][]string{
			{"accounts", rowSelect + "id\x00\"acme\"", "last_seen"},
			{"w", linePrefix + "worker=w1 t="},
			{"one", rowSelect, "k"},
			{"m", "x"},
		}
		assert.Equal(t, c.held, heldFromStart(from, c.to, places), c.name)
	}
	assert.False(t, heldFromStart(`{"m":{}}`, `{"m":{"x":1}}`, [][]string{{"m", "x"}}), "made by the run")
	assert.False(t, heldFromStart(`{"m":{"x":1}}`, `{"m":{}}`, [][]string{{"m", "x"}}), "taken away")
}

// An agent that reads whether the account is flagged and flips the flag
// where it is not, through an endpoint that toggles (red team rQ's
// check-then-toggle). Two deliveries at once both read "not flagged" and
// both flip it: it ends unflagged, where one delivery flagged it, and the
// flag held what the run began with, which the rule above took for less
// than one execution: inconclusive, and go test passed (red team rQ, 14
// runs of 14; the build before caught it). Every other scenario of the
// suite flips it once and ends flagged: the flag is the op's own effect,
// and the concurrent delivery's end is judged, a duplicate_write. The
// twin that sets the flag, whose two deliveries end flagged, passes.
func TestACheckThenToggleDoneTwiceAtOnceIsCaught(t *testing.T) {
	read := &Op{Name: "get_account", Kind: KindRead, Params: []string{"account"}}
	flip := &Op{Name: "flag_account", Kind: KindWrite, Params: []string{"account"}}
	for _, toggles := range []bool{true, false} {
		d := &seenDesk{mode: "dedup", meet: &rendezvous{timeout: 20 * time.Millisecond}}
		flips := &rendezvous{timeout: 20 * time.Millisecond} // the two flips overlap, as over a slow service
		agent := func(ctx context.Context) error {
			var flagged bool
			if err := traced(ctx, read, []any{"acme"}, []any{"acme"}, func(context.Context) error {
				d.meet.wait()
				d.mu.Lock()
				flagged = d.flag
				d.mu.Unlock()
				return nil
			}); err != nil || flagged {
				return err
			}
			return traced(ctx, flip, []any{"acme"}, []any{"acme"}, func(context.Context) error {
				flips.wait()
				d.mu.Lock()
				defer d.mu.Unlock()
				if toggles {
					d.flag = !d.flag
				} else {
					d.flag = true
				}
				return nil
			})
		}
		rep, err := Run(context.Background(), t.Name(), agent, Setup(d.setup), State(d.snapshot))
		require.NoError(t, err)
		conc := resultOf(t, rep, ScenarioDuplicateConcurrent)
		if !toggles {
			assert.Empty(t, findings(rep, ""), "the flag set, not toggled")
			continue
		}
		assert.Equal(t, []string{"duplicate_write flag_account"}, findings(rep, ScenarioDuplicateConcurrent), "both deliveries flipped it: %q", conc.Trace.Notes)
		assert.Empty(t, notesSaying(conc.Trace, "which this run's calls did not change"))
		assert.Empty(t, notesSaying(conc.Trace, "a client, a connection or a cache made once"), "no note that blames a client beside the finding")
	}
}
