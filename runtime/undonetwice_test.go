package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagSvc is an account service behind an httptest server that Setup
// starts, so that its goroutines are alive while the agent runs and no
// Settle is given, as with a real service: GET /acme answers "1" where the
// account is flagged and "0" where not; POST /acme/flag flags it and
// answers the flag it left. Each flag waits up to 20 ms for another to
// meet it, so that two deliveries at once overlap, as over a slow service.
type flagSvc struct {
	// mode is the service's: "set" flags the account (a repeat changes
	// nothing), "toggle" flips the flag (a repeat undoes the first), and
	// "busy" sets it, but where two flags meet, refuses both with the
	// answer "busy" and changes nothing.
	mode   string
	flips  *rendezvous
	mu     sync.Mutex
	flag   bool
	active int
	clash  bool
	srv    *httptest.Server
}

func newFlagSvc(mode string) *flagSvc {
	s := &flagSvc{mode: mode, flips: &rendezvous{timeout: 20 * time.Millisecond}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			s.mu.Lock()
			defer s.mu.Unlock()
			io.WriteString(w, map[bool]string{false: "0", true: "1"}[s.flag])
			return
		}
		s.mu.Lock()
		s.active++
		s.mu.Unlock()
		s.flips.wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.clash = s.clash || s.active > 1
		answer := ""
		switch {
		case s.mode == "busy" && s.clash:
			answer = "busy"
		case s.mode == "toggle":
			s.flag = !s.flag
		default:
			s.flag = true
		}
		if s.active--; s.active == 0 {
			s.clash = false
		}
		if answer == "" {
			answer = map[bool]string{false: "0", true: "1"}[s.flag]
		}
		io.WriteString(w, answer)
	}))
	return s
}

func (s *flagSvc) snapshot() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"accounts": []any{map[string]any{"id": "acme", "flagged": s.flag}}}
}

// send sends an HTTP request to the service and returns the answer's body.
func (s *flagSvc) send(ctx context.Context, method, path string) (string, error) {
	return httpAnswer(ctx, method, s.srv.URL+path, nil)
}

// httpAnswer sends an HTTP request with body (nil for none) and returns
// the answer's body, as a tool's client does.
func httpAnswer(ctx context.Context, method, url string, body io.Reader) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// tracedAnswer runs fn as a traced call of op whose result is the answer
// fn returns, with the shape of generated code.
func tracedAnswer(ctx context.Context, op *Op, id string, fn func(context.Context) (string, error)) (answer string, err error) {
	c, cctx := Begin(ctx, op, []any{id}, []any{id}, nil)
	if err = c.Start(); err != nil {
		return "", err
	}
	defer c.Recover(&err)
	answer, err = fn(cctx)
	if lost := c.Finish(err, answer); lost != nil {
		return "", lost
	}
	return answer, err
}

// runFlagAgent runs the suite of an agent that reads whether the account
// is flagged and flags it where it is not (red team rQ's
// check-then-toggle), against a flagSvc of mode made anew by each Setup.
func runFlagAgent(t *testing.T, mode string) *Report {
	t.Helper()
	read := &Op{Name: "get_account", Kind: KindRead, Params: []string{"account"}}
	flag := &Op{Name: "flag_account", Kind: KindWrite, Params: []string{"account"}}
	var svc *flagSvc
	agent := func(ctx context.Context) error {
		st, err := tracedAnswer(ctx, read, "acme", func(ctx context.Context) (string, error) { return svc.send(ctx, http.MethodGet, "/acme") })
		if err != nil || st == "1" {
			return err
		}
		_, err = tracedAnswer(ctx, flag, "acme", func(ctx context.Context) (string, error) { return svc.send(ctx, http.MethodPost, "/acme/flag") })
		return err
	}
	var all []*flagSvc
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			svc = newFlagSvc(mode)
			all = append(all, svc)
			return nil
		}),
		State(func() any { return svc.snapshot() }))
	for _, s := range all {
		s.srv.Close()
	}
	require.NoError(t, err)
	return rep
}

// Two deliveries at once of an agent that flags an account where it is
// not flagged both read "0" and both flag it, through a service whose
// flag flips: the account ends unflagged, where one delivery flagged it.
// With the service's goroutines alive and no Settle, the rule for calls
// whose effect had not landed when the end was read (notLandedYet) took
// that for less than one delivery's effect: inconclusive, so go test
// passed, on every run (red team rQ's check-then-toggle with no
// heartbeat; the `_reread` variant shows its bug in no other scenario).
// But in the baseline and in every other scenario in which the call ran
// once, its change was there when it returned: nothing of it was still
// to land, and the two calls undid each other, a duplicate_write. The
// twin that sets the flag passes, and a service that refuses both calls
// when they meet ("busy", nothing changed, answers unlike the baseline's)
// is no finding.
func TestTwoFlipsThatUndidEachOtherOverHTTPAreCaught(t *testing.T) {
	for _, mode := range []string{"toggle", "set", "busy"} {
		t.Run(mode, func(t *testing.T) {
			rep := runFlagAgent(t, mode)
			conc := resultOf(t, rep, ScenarioDuplicateConcurrent)
			overlapped := slices.ContainsFunc(conc.Trace.Ops, func(o Operation) bool { return o.Name == "flag_account" && o.Overlapped })
			require.True(t, overlapped, "the deliveries' flags overlapped: %q", conc.Trace.Notes)
			switch mode {
			case "toggle":
				assert.Equal(t, []string{"duplicate_write flag_account"}, findings(rep, ScenarioDuplicateConcurrent), "both deliveries flipped it: %q", conc.Trace.Notes)
				assert.Empty(t, notesSaying(conc.Trace, "had not landed"), "no note beside the finding")
			case "set":
				assert.Empty(t, findings(rep, ""), "the flag set twice is flagged once")
				assert.False(t, conc.Inconclusive, "%q", conc.Trace.Notes)
			case "busy":
				assert.Empty(t, findings(rep, ""), "both refused: nothing was done twice: %q", conc.Trace.Notes)
			}
		})
	}
}
