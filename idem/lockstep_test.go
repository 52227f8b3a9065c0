package idem_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
)

var (
	opMarkPaid = &runtime.Op{Name: "mark_paid", Kind: runtime.KindWrite, Params: []string{"order"}, Idempotent: true}
	opShip     = &runtime.Op{Name: "ship_order", Kind: runtime.KindWrite, Params: []string{"order"}}
)

// tracedWrite is what agentidem-gen writes around a write tool.
func tracedWrite(ctx context.Context, op *runtime.Op, order string, fn func(context.Context) error) (err error) {
	c, cctx := runtime.Begin(ctx, op, []any{order}, []any{order}, nil)
	if err = c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = fn(cctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

// A payment provider's webhook (the agent POSTs the event to a handler
// that Setup starts, carrying the run with runtime.Token and Resolve); the
// handler dedupes the event by its id with idem.Do and, inside it, marks
// the order paid and ships it. In duplicate_delivery/concurrent the second
// delivery's handler waits in idem.Do for the key the first one's holds
// pending, at its gate: the agent's own serialization. The harness took
// that wait (a select on idem's poll timer) for busy outside any gate,
// waited 1 s, let the holder go on alone, and noted that "the other
// delivery was on no lock ... so the harness, not the agent, may have run
// them one after the other", in the report too (red team rtY #2). The wait
// is a lock now: the note names the key and the delivery holding it, says
// nothing of the harness, and the holder goes on alone without waiting
// out the 1 s. Its buggy twin, with no idem.Do, ships twice and is
// UNSAFE.
func TestWaitForAKeyTheOtherDeliveryHoldsIsALock(t *testing.T) {
	t.Run("Dedupe", func(t *testing.T) { keyedWebhook(t, true) })
	t.Run("NoDedupe", func(t *testing.T) { keyedWebhook(t, false) })
}

func keyedWebhook(t *testing.T, withDedupe bool) {
	var (
		mu        sync.Mutex
		paid      map[string]bool
		shipments map[string]int
		srv       *httptest.Server
		dedupe    *idem.Store
	)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, stop := runtime.Resolve(r.Context(), r.Header.Get("Agentidem-Run"))
		defer stop()
		work := func(ctx context.Context) (string, error) {
			err := tracedWrite(ctx, opMarkPaid, "ord-1", func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				paid["ord-1"] = true
				return nil
			})
			if err != nil {
				return "", err
			}
			return "shipped", tracedWrite(ctx, opShip, "ord-1", func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				shipments["ord-1"]++
				return nil
			})
		}
		var err error
		if withDedupe {
			_, _, err = idem.Do(ctx, dedupe, idem.Key("webhook", "evt_1"), "ord-1", work)
		} else {
			_, err = work(ctx)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	agent := func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, bytes.NewReader([]byte(`{"id":"evt_1"}`)))
		req.Header.Set("Agentidem-Run", runtime.Token(ctx))
		resp, err := srv.Client().Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	rep, err := runtime.Run(context.Background(), t.Name(), agent, runtime.OnlyScenario(runtime.ScenarioDuplicateConcurrent),
		runtime.Setup(func(context.Context) error {
			mu.Lock()
			paid, shipments = map[string]bool{}, map[string]int{}
			mu.Unlock()
			dedupe = idem.NewMemory()
			srv = httptest.NewServer(handler)
			return nil
		}),
		runtime.Teardown(func(context.Context) error { srv.Close(); return nil }),
		runtime.State(func() any {
			mu.Lock()
			defer mu.Unlock()
			return []any{paid["ord-1"], shipments["ord-1"]}
		}))
	if err != nil {
		t.Fatal(err)
	}
	var res *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == runtime.ScenarioDuplicateConcurrent {
			res = r
		}
	}
	if res == nil {
		t.Fatal("no concurrent delivery was run")
	}
	notes := strings.Join(res.Trace.Notes, "\n")
	if !withDedupe {
		var codes []string
		for _, f := range res.Findings {
			codes = append(codes, f.Code+" "+strings.Join(f.Ops, ","))
		}
		if rep.Safe || !slices.Contains(codes, runtime.CodeDuplicateWrite+" ship_order") {
			t.Errorf("safe %v, findings %q: want duplicate_write ship_order", rep.Safe, codes)
		}
		return
	}
	t.Logf("safe %v, inconclusive %v, %s; notes:\n%s\nreport notes: %q", rep.Safe, res.Inconclusive, res.Duration, notes, rep.Notes)
	if !rep.Safe || res.Inconclusive {
		t.Errorf("safe %v, inconclusive %v: want SAFE", rep.Safe, res.Inconclusive)
	}
	if !strings.Contains(notes, " went on alone at ") {
		t.Fatalf("no delivery went on alone: the deliveries were not serialized by the key?\n%s", notes)
	}
	if want := " for idempotency key " + `"` + idem.Key("webhook", "evt_1") + `", which delivery `; !strings.Contains(notes, "waiting in idem.Do at ") || !strings.Contains(notes, want) {
		t.Errorf("the note does not name the key and its holder (%q):\n%s", want, notes)
	}
	for _, bad := range []string{"on no lock", "the harness, not the agent", "still busy outside any gate after"} {
		if strings.Contains(notes, bad) || strings.Contains(strings.Join(rep.Notes, "\n"), bad) {
			t.Errorf("a note says %q:\n%s\n%q", bad, notes, rep.Notes)
		}
	}
}
