package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// welcomeSvc is a user service behind an httptest server, as red team
// rQ's welcome worker: POST /welcome answers 40 ms later, having queued a
// welcome mail for u1 (once: create if absent; naive: each time). A mailer
// that Setup starts sends what is queued every 5 ms, bumping the account's
// mail count, and the service's heartbeat bumps last_seen in the same row
// every 130 ms, slower than the looks that learn what changes by itself.
// State reads the account row; the queue is not in it, and no Settle is
// given.
type welcomeSvc struct {
	naive bool
	// workersRow puts the heartbeat in a row of its own, in a workers
	// table, beside the account's.
	workersRow bool
	// mailInBaseline has the first Setup's service answer once the mail
	// went out, as a loaded machine slowed its answer: the baseline's
	// call window holds the mail, and the later runs' do not.
	mailInBaseline bool
	setups         int
	waitMail       bool
	mu             sync.Mutex
	mails          int
	lastSeen       int
	queued         int
	welcomed       bool
	srv            *httptest.Server
	stop           chan struct{}
	wg             sync.WaitGroup
}

func (s *welcomeSvc) start() {
	s.mu.Lock()
	s.mails, s.lastSeen, s.queued, s.welcomed = 0, 0, 0, false
	s.setups++
	s.waitMail = s.mailInBaseline && s.setups == 1
	s.mu.Unlock()
	s.stop = make(chan struct{})
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(40 * time.Millisecond)
		s.mu.Lock()
		if s.naive || !s.welcomed {
			s.welcomed = true
			s.queued++
		}
		wait := s.waitMail
		s.mu.Unlock()
		for wait {
			time.Sleep(time.Millisecond)
			s.mu.Lock()
			wait = s.queued > 0
			s.mu.Unlock()
		}
		io.WriteString(w, `{"ok":"welcome"}`)
	}))
	every := func(d time.Duration, tick func()) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			t := time.NewTicker(d)
			defer t.Stop()
			for {
				select {
				case <-s.stop:
					return
				case <-t.C:
				}
				s.mu.Lock()
				tick()
				s.mu.Unlock()
			}
		}()
	}
	every(5*time.Millisecond, func() {
		if s.queued > 0 {
			s.queued--
			s.mails++
		}
	})
	every(130*time.Millisecond, func() { s.lastSeen++ })
}

func (s *welcomeSvc) close() {
	close(s.stop)
	s.wg.Wait()
	s.srv.Close()
}

func (s *welcomeSvc) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.workersRow {
		return map[string]any{"accounts": []any{map[string]any{"id": "acme", "mails": s.mails}}, "workers": []any{map[string]any{"name": "w1", "last_seen": s.lastSeen}}}
	}
	return map[string]any{"accounts": []any{map[string]any{"id": "acme", "mails": s.mails, "last_seen": s.lastSeen}}}
}

func (s *welcomeSvc) welcome(ctx context.Context) (string, error) {
	return httpAnswer(ctx, http.MethodPost, s.srv.URL+"/welcome", strings.NewReader(`{"key":"u1"}`))
}

// runWelcomeBeside runs the suite of an agent that welcomes u1, retrying once
// on an error.
func runWelcomeBeside(t *testing.T, s *welcomeSvc) *Report {
	t.Helper()
	op := &Op{Name: "welcome", Kind: KindWrite, Params: []string{"user"}}
	agent := func(ctx context.Context) error {
		var err error
		for range 2 {
			if _, err = tracedAnswer(ctx, op, "u1", func(ctx context.Context) (string, error) { return s.welcome(ctx) }); err == nil {
				return nil
			}
		}
		return err
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { s.start(); return nil }),
		Teardown(func(context.Context) error { s.close(); return nil }),
		State(s.snapshot))
	require.NoError(t, err)
	return rep
}

// The heartbeat beats in the row that holds the mail count, and beat on
// while a later run's end was read: the run took the places that changed
// twice there for restless, and left them out of the states it compared.
// It took the whole row for one place (a list of one row is one value to
// changedPlaces), so the mail count went out with the heartbeat: a
// retry's window in which the mailer sent what the first call queued
// (mails 0 → 1, the baseline's world did the same after its call) read as
// "only the heartbeat moved", and the correct agent was a duplicate_write
// in lost_acknowledgement on every run (red team rQ's
// welcome_worker_nosettle, 3 of 3 with a count heartbeat, 2 of 3 with a
// flipping one). Only the row's fields that changed twice are left out now
// (movedTwice): the window is the world's, unjudged where the end cannot
// say more. The agent that queues a mail each time is never a plain pass.
func TestAHeartbeatInTheRowOfTheWorkersMailIsNoSecondMail(t *testing.T) {
	for _, naive := range []bool{false, true} {
		rep := runWelcomeBeside(t, &welcomeSvc{naive: naive})
		if !naive {
			assert.Empty(t, findings(rep, ""), "the mailer's one mail under a heartbeat: %s", findingMessages(rep, ""))
			continue
		}
		inconclusive := false
		for _, r := range rep.Results {
			inconclusive = inconclusive || r.Inconclusive
		}
		assert.True(t, len(rep.Findings) > 0 || inconclusive, "two mails queued: never a plain pass")
	}
}

// movedTwice names a field of a list's only row, or of a row a column
// names, that changed twice, not the row, so that the row's other fields
// stay in the states compared; a value of an object is named by its key.
// A row by its key column is counted, as changedPlaces names it, with no
// path to null.
func TestMovedTwiceNamesTheFieldsOfARow(t *testing.T) {
	var views stateViews
	states := []string{
		`{"accounts":[{"id":"acme","last_seen":0,"mails":0}],"n":0,"w":[{"name":"w1","t":1},{"name":"w2","t":1}]}`,
		`{"accounts":[{"id":"acme","last_seen":1,"mails":1}],"n":1,"w":[{"name":"w1","t":2},{"name":"w2","t":1}]}`,
		`{"accounts":[{"id":"acme","last_seen":2,"mails":1}],"n":2,"w":[{"name":"w1","t":3},{"name":"w2","t":1}]}`,
	}
	moved := movedTwice(states, &views)
	var names []string
	rowKeys := 0
	for _, p := range moved {
		if p == nil {
			rowKeys++ // the row of w by its key, as changedPlaces names it: counted, nothing to null
			continue
		}
		names = append(names, restlessName(p))
	}
	assert.Equal(t, 1, rowKeys)
	assert.ElementsMatch(t, []string{restlessName([]string{"accounts", rowSelect + "id\x00\"acme\"", "last_seen"}), "n", restlessName([]string{"w", rowSelect + "name\x00\"w1\"", "t"})}, names)
	assert.Equal(t, `{"accounts":[{"id":"acme","last_seen":null,"mails":1}],"n":null,"w":[{"name":"w1","t":null},{"name":"w2","t":1}]}`, nullPaths(states[2], moved))
}

// The heartbeat beats in a row of its own, and a loaded machine put the
// worker's mail inside the baseline's call: one execution changed the
// mail count in its window there. In the later runs the mail lands after
// the call, inside the retry's window (lost_acknowledgement), or after two
// deliveries at once (concurrent): the window made one execution's change,
// or the cluster less, and the end, read again, never held still for the
// heartbeat, which no look had learned. The correct agent was a
// duplicate_write in both, on every run, though its run ended with the one
// mail the baseline's did (red team rQ's welcome worker, 2 runs of 30 with
// a workers row's heartbeat). The values in which the end differs from the
// baseline's are asked of a control run (byItselfEndAsk): the heartbeat
// alone, which changes with no agent, so the repeats are unjudged. The
// naive service mails twice, and the end's mail count, which no heartbeat
// explains, keeps its findings (in lost_acknowledgement where the first
// mail landed before the retry's window, which then held nothing, the
// retry is unjudged, as it was with no heartbeat).
func TestAHeartbeatBesideALateMailIsAskedOfAControlRun(t *testing.T) {
	for _, naive := range []bool{false, true} {
		rep := runWelcomeBeside(t, &welcomeSvc{naive: naive, workersRow: true, mailInBaseline: true})
		if !naive {
			assert.Empty(t, findings(rep, ""), "the mailer's one mail, late, beside a heartbeat: %s", findingMessages(rep, ""))
			for _, sc := range []string{"lost_acknowledgement/welcome#1", ScenarioDuplicateConcurrent} {
				r := resultOf(t, rep, sc)
				assert.True(t, r.Inconclusive, "never a plain pass: %s: %q", sc, r.Trace.Notes)
			}
			continue
		}
		assert.Contains(t, findings(rep, ""), "duplicate_write welcome", "the second mail")
	}
}
