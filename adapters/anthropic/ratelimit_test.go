package agentidemanthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agentidemanthropic "github.com/agentidem/agentidem-go/adapters/anthropic"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/toolrunner"
)

// A red team (rtL, R2 and R3) ran the tool runner against a Messages API
// that rate-limits as one shared by all callers does: every other request
// is answered 429 with retry-after-ms 5, and the SDK retries. The agent
// checks for a booking in one turn and books in the next if there was
// none: only two deliveries at once book twice. The suite said SAFE in 9
// of 45 runs: a delivery in the SDK's retry back-off (a select on
// time.After in its requestconfig) was taken for blocked, and the other
// went on alone at its first gate, so the deliveries ran one after the
// other (R3); or a delivery got three 429s in a row, gave up before its
// first tool call, and the other's calls alone were "ok" (R2).

// rateLimited answers every other request 429, as a rate limiter shared by
// both deliveries does, asking for a retry after the given milliseconds;
// firstOnly, only the first request of each scenario.
type rateLimited struct {
	h         http.Handler
	n         atomic.Int64
	after     string // retry-after-ms
	firstOnly bool
}

func (l *rateLimited) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if n := l.n.Add(1); l.firstOnly && n == 1 || !l.firstOnly && n%2 == 1 {
		w.Header().Set("retry-after-ms", l.after)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)
		return
	}
	l.h.ServeHTTP(w, r)
}

// checkThenBookScript asks find_booking for room A, then book_room if the
// answer was "none", then answers.
func checkThenBookScript(conv []apiMessage) ([]apiBlock, string) {
	turns, none := 0, false
	for _, m := range conv {
		if m.Role == "assistant" {
			turns++
		}
		if m.Role == "user" && strings.Contains(string(m.Content), `"none"`) {
			none = true // find_booking's answer
		}
	}
	switch {
	case turns == 0:
		return []apiBlock{{Name: "find_booking", Input: json.RawMessage(`{"room":"A"}`)}}, ""
	case turns == 1 && none:
		return []apiBlock{{Name: "book_room", Input: json.RawMessage(`{"room":"A","guest":"ann"}`)}}, ""
	}
	return nil, "Done."
}

type roomIn struct {
	Room  string `json:"room" jsonschema:"required"`
	Guest string `json:"guest,omitempty"`
}

// rooms is the hotel: bookings appended, or, keyed, one per room.
type rooms struct {
	mu       sync.Mutex
	bookings []string
	keyed    bool
}

func (h *rooms) snapshot() any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(slices.Values(h.bookings))
}

// roomsSuite runs the check-then-book agent's concurrent duplicate
// delivery against the rate-limited model, the SDK retrying up to retries
// times, retry-after-ms 5.
func roomsSuite(t *testing.T, keyed bool, retries int, opts ...testkit.Option) *runtime.Result {
	return roomsSuiteLimited(t, keyed, retries, &rateLimited{after: "5"}, opts...)
}

func roomsSuiteLimited(t *testing.T, keyed bool, retries int, lim *rateLimited, opts ...testkit.Option) *runtime.Result {
	t.Helper()
	var h *rooms
	lim.h = &messagesAPI{script: checkThenBookScript}
	srv := httptest.NewServer(lim)
	defer srv.Close()
	agent := func(ctx context.Context) error {
		find, err := toolrunner.NewBetaToolFromJSONSchema("find_booking", "find a booking", func(ctx context.Context, in roomIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			for _, b := range h.bookings {
				if strings.HasPrefix(b, in.Room+":") {
					return text("found " + b), nil
				}
			}
			return text("none"), nil
		})
		if err != nil {
			return err
		}
		book, err := toolrunner.NewBetaToolFromJSONSchema("book_room", "book a room", func(ctx context.Context, in roomIn) (anthropic.BetaToolResultBlockParamContentUnion, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			for _, b := range h.bookings {
				if h.keyed && strings.HasPrefix(b, in.Room+":") {
					return text("already booked"), nil
				}
			}
			h.bookings = append(h.bookings, in.Room+":"+in.Guest)
			return text("booked"), nil
		})
		if err != nil {
			return err
		}
		client := anthropic.NewClient(option.WithAPIKey("test-key"), option.WithBaseURL(srv.URL+"/"), option.WithMaxRetries(retries))
		runner := client.Beta.Messages.NewToolRunner(agentidemanthropic.Wrap(agentidemanthropic.Tools{
			"find_booking": agentidemanthropic.Read(agentidemanthropic.Entity("room")),
			"book_room":    agentidemanthropic.Write(agentidemanthropic.Identity("room")),
		}, []anthropic.BetaTool{find, book}), anthropic.BetaToolRunnerParams{
			BetaMessageNewParams: anthropic.BetaMessageNewParams{
				Model: "claude-scripted", MaxTokens: 100,
				Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Book room A for ann unless it is booked."))},
			},
			MaxIterations: 10, DisableThread: true,
		})
		_, err = runner.RunToCompletion(ctx)
		return err
	}
	rep := testkit.Run(t, agent, append([]testkit.Option{testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { h = &rooms{keyed: keyed}; lim.n.Store(0); return nil }),
		testkit.State(func() any { return h.snapshot() }),
		testkit.With(runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent))}, opts...)...)
	if !rep.BaselineSucceeded {
		t.Fatalf("baseline: %+v", rep.BaselineFailure)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	return rep.Results[0]
}

func resultCodes(r *runtime.Result) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	return out
}

// With retries enough for every request to get through, the deliveries
// wait out each other's back-off at the lockstep's gates: both find no
// booking, both book, every run. Before, the one that reached its gate
// while the other was in its back-off went on alone, and the scenario was
// safe.
func TestCheckThenBookWithRateLimitIsCaught(t *testing.T) {
	for i := range 8 {
		r := roomsSuite(t, false, 20)
		if !slices.Contains(resultCodes(r), runtime.CodeDuplicateWrite) {
			t.Errorf("run %d: no duplicate_write (safe %v, inconclusive %v): %v; notes: %v", i, r.Safe, r.Inconclusive, resultCodes(r), r.Trace.Notes)
		}
		if notes := strings.Join(r.Trace.Notes, "\n"); strings.Contains(notes, "went on alone") {
			t.Errorf("run %d: a delivery went on alone: %s", i, notes)
		}
	}
}

// With the SDK's default retries (2), a delivery may get three 429s in a
// row and give up, before its first call or between its turns: that run
// did not test two deliveries of the same work, and says so (inconclusive,
// with a note naming the delivery and its error). Never safe.
func TestCheckThenBookWithRateLimitNeverSafe(t *testing.T) {
	caught, stopped := 0, 0
	for i := range 12 {
		r := roomsSuite(t, false, 2)
		notes := strings.Join(r.Trace.Notes, "\n")
		switch {
		case slices.Contains(resultCodes(r), runtime.CodeDuplicateWrite):
			caught++
		case r.Inconclusive && strings.Contains(notes, "429 Too Many Requests") && strings.Contains(notes, "duplicate delivery: delivery"):
			stopped++
		default:
			t.Errorf("run %d: safe %v, inconclusive %v, findings %v, error %q, notes: %s", i, r.Safe, r.Inconclusive, resultCodes(r), r.Error, notes)
		}
	}
	t.Logf("caught %d, stopped by a 429 (inconclusive) %d", caught, stopped)
}

// The twin whose sink books a room once: safe whenever both deliveries
// reached their calls, never unsafe.
func TestKeyedBookWithRateLimitIsSafe(t *testing.T) {
	for i := range 6 {
		r := roomsSuite(t, true, 20)
		if !r.Safe || r.Inconclusive || len(r.Findings) > 0 {
			t.Errorf("run %d: safe %v, inconclusive %v, findings %v, notes %v", i, r.Safe, r.Inconclusive, resultCodes(r), r.Trace.Notes)
		}
	}
}

// A back-off longer than the lockstep waits for a delivery busy outside
// any gate (aloneAfter: 1 s under a stall bound of 4 s): the first request
// of the scenario is answered 429, retry after 1.5 s. The other delivery,
// at its first gate, goes on alone after aloneAfter and books; the one in
// its back-off then finds the booking. The agent did not serialize its
// deliveries, the world's rate limit did: the scenario says so,
// inconclusive, never safe (it was safe, the delivery in the back-off
// taken for blocked, the other let go at once).
func TestRateLimitBackoffPastAloneAfterIsInconclusive(t *testing.T) {
	for i := range 2 {
		r := roomsSuiteLimited(t, false, 2, &rateLimited{after: "1500", firstOnly: true}, testkit.With(runtime.StallTimeout(4*time.Second)))
		notes := strings.Join(r.Trace.Notes, "\n")
		if r.Safe || !r.Inconclusive || len(r.Findings) > 0 || !strings.Contains(notes, "in its API client's retry back-off at ") || !strings.Contains(notes, "did not test the deliveries at once") {
			t.Errorf("run %d: safe %v, inconclusive %v, findings %v, notes: %s", i, r.Safe, r.Inconclusive, resultCodes(r), notes)
		}
	}
}
