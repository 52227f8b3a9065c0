package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

// A catalog of prices, set through one request struct that the agent
// reuses for each call, as Go code often does (a sync.Pool does the same):
// the arguments of a call are what the struct held when it began.
type priceReq struct {
	Cents int
}

type catalog struct {
	mu     sync.Mutex
	prices map[string]int
	// add makes setPrice add to the price instead of setting it: a write
	// that is not idempotent, whatever its declaration says.
	add bool
}

func (c *catalog) setPrice(sku string, req *priceReq) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.add {
		c.prices[sku] += req.Cents
		return
	}
	c.prices[sku] = req.Cents
}

func (c *catalog) snapshot() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := make(map[string]int, len(c.prices))
	for k, v := range c.prices {
		m[k] = v
	}
	return m
}

func setPriceOp() *Op {
	return &Op{Name: "setPrice", Kind: KindWrite, Params: []string{"sku", "req"}, Idempotent: true}
}

// runCatalog runs agent over a fresh catalog for each scenario, with the
// catalog's prices as the State.
func runCatalog(t *testing.T, add bool, agent func(ctx context.Context, c *catalog) error) *Report {
	t.Helper()
	var c *catalog
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return agent(ctx, c) },
		Setup(func(context.Context) error { c = &catalog{prices: map[string]int{}, add: add}; return nil }),
		State(func() any { return c.snapshot() }))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestReusedRequestWithNewValuesIsAnUpdateNotARepeat(t *testing.T) {
	op := setPriceOp()
	// The list price, then the sale price, through one request value.
	rep := runCatalog(t, false, func(ctx context.Context, c *catalog) error {
		req := &priceReq{Cents: 1000}
		for _, cents := range []int{1000, 800} {
			req.Cents = cents
			if err := traced(ctx, op, []any{"sku1", req}, []any{"sku1"}, func(context.Context) error {
				c.setPrice("sku1", req)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if !rep.BaselineSucceeded || !rep.Safe {
		t.Fatalf("an agent that sets two prices through one request is safe: %v", findings(rep, ""))
	}
	o := opByID(t, rep, "baseline", "1:setPrice#2")
	if o.Repeat != RepeatUpdate || !o.Effective() {
		t.Fatalf("the sale price: repeat=%q effective=%v, want an effective update", o.Repeat, o.Effective())
	}
	if got, want := argsJSON(o.Args), `{"sku":"sku1","req":{"Cents":800}}`; got != want {
		t.Fatalf("the sale price's arguments: %s, want %s", got, want)
	}
}

func argsJSON(a Args) string {
	b, _ := a.MarshalJSON()
	return string(b)
}

// lineReq is the request of addLine; the agent reuses one for each line.
type lineReq struct {
	Item string
	Qty  int
}

type cart struct {
	mu    sync.Mutex
	lines []string
}

func (c *cart) addLine(order string, req *lineReq) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, order+":"+req.Item)
}

func TestTraceAndReportShowEachCallsOwnArgumentsWhenTheRequestIsReused(t *testing.T) {
	op := &Op{Name: "addLine", Kind: KindWrite, Params: []string{"order", "req"}}
	var c *cart
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error {
		req := &lineReq{}
		for _, item := range []string{"apple", "pear"} {
			req.Item, req.Qty = item, 1
			if err := traced(ctx, op, []any{"o1", req}, []any{"o1", req.Item}, func(context.Context) error {
				c.addLine("o1", req)
				return nil
			}); err != nil {
				return err // no retry: a failed line stays failed
			}
		}
		req.Item, req.Qty = "", 0 // the agent clears the request when done
		return nil
	}, Setup(func(context.Context) error { c = &cart{}; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"1:addLine#1": `{"order":"o1","req":{"Item":"apple","Qty":1}}`,
		"1:addLine#2": `{"order":"o1","req":{"Item":"pear","Qty":1}}`,
	}
	for id, args := range want {
		if got := argsJSON(opByID(t, rep, "baseline", id).Args); got != args {
			t.Errorf("trace: %s has arguments %s, want %s", id, got, args)
		}
	}
	// The report file: each operation's named and positional arguments.
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var file struct {
		Baseline struct {
			Operations []struct {
				ID        string          `json:"id"`
				Identity  string          `json:"identity"`
				NamedArgs json.RawMessage `json:"named_args"`
				Args      struct {
					Args []json.RawMessage `json:"args"`
				} `json:"args"`
			} `json:"operations"`
		} `json:"baseline"`
	}
	if err := json.Unmarshal(buf.Bytes(), &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Baseline.Operations) != 2 {
		t.Fatalf("the report's baseline has %d operations, want 2", len(file.Baseline.Operations))
	}
	for _, o := range file.Baseline.Operations {
		if got := string(o.NamedArgs); got != want[o.ID] {
			t.Errorf("report: %s (identity %s) has named_args %s, want %s", o.ID, o.Identity, got, want[o.ID])
		}
		item := strings.TrimSuffix(strings.TrimPrefix(want[o.ID], `{"order":"o1","req":`), "}")
		if len(o.Args.Args) != 2 || string(o.Args.Args[1]) != item {
			t.Errorf("report: %s has positional args %s, want [\"o1\", %s]", o.ID, o.Args.Args, item)
		}
	}
}

func TestRepeatWithAReusedRequestHoldingTheSameValuesIsStillCaught(t *testing.T) {
	op := setPriceOp()
	// One call, retried once on an error with the same request, as it was.
	retrying := func(ctx context.Context, c *catalog) error {
		req := &priceReq{Cents: 100}
		call := func() error {
			return traced(ctx, op, []any{"sku1", req}, []any{"sku1"}, func(context.Context) error {
				c.setPrice("sku1", req)
				return nil
			})
		}
		if err := call(); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			req.Cents = 100 // filled in again, to the same values
			return call()
		}
		return nil
	}
	// Declared idempotent, a setPrice that adds is shown wrong by the
	// state: the retry's arguments equal the first call's, so it is a
	// repeat, not an update.
	rep := runCatalog(t, true, retrying)
	if got := findings(rep, "lost_acknowledgement/setPrice#1"); len(got) != 1 || got[0] != "not_idempotent setPrice" {
		t.Fatalf("lost_acknowledgement/setPrice#1: %v, want not_idempotent setPrice", got)
	}
	o := opByID(t, rep, "lost_acknowledgement/setPrice#1", "1:setPrice#2")
	if o.Repeat == RepeatUpdate {
		t.Fatalf("the retry with the same arguments was taken for an update")
	}
	// Undeclared, the retry is a duplicate by count.
	op.Idempotent = false
	var c *catalog
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return retrying(ctx, c) },
		Setup(func(context.Context) error { c = &catalog{prices: map[string]int{}, add: true}; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(rep, "lost_acknowledgement/setPrice#1"); len(got) != 1 || got[0] != "duplicate_write setPrice" {
		t.Fatalf("undeclared, lost_acknowledgement/setPrice#1: %v, want duplicate_write setPrice", got)
	}
}

func TestMapArgumentsChangedAfterTheCallKeepTheirValuesAtTheCall(t *testing.T) {
	// A map of strings is recorded by its JSON; a map[string]any, the
	// shape of a framework tool's arguments, by a copy that keeps its
	// type, down through the lists and maps it holds.
	op := &Op{Name: "tag", Kind: KindWrite, Params: []string{"id", "labels", "fields"}}
	tr, err := RunTraced(context.Background(), t.Name(), func(ctx context.Context) error {
		labels := map[string]string{"status": "open"}
		fields := map[string]any{"tags": []any{"a"}, "meta": map[string]any{"n": 1.0}}
		if err := traced(ctx, op, []any{"T-1", labels, fields}, []any{"T-1"}, func(context.Context) error { return nil }); err != nil {
			return err
		}
		labels["status"], labels["owner"] = "closed", "bob"
		fields["tags"].([]any)[0] = "b"
		fields["meta"].(map[string]any)["n"] = 2.0
		fields["added"] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 1 {
		t.Fatalf("%d calls recorded, want 1", len(tr.Ops))
	}
	a := tr.Ops[0].Args
	want := `{"id":"T-1","labels":{"status":"open"},"fields":{"meta":{"n":1},"tags":["a"]}}`
	if got := argsJSON(a); got != want {
		t.Fatalf("arguments %s, want them as they were at the call: %s", got, want)
	}
	if _, ok := a.Values[2].(map[string]any); !ok {
		t.Fatalf("fields recorded as %T, want a map[string]any", a.Values[2])
	}
}

// notJSON holds a func, which JSON cannot encode.
type notJSON struct {
	Name string
	F    func()
}

func TestArgumentsThatCannotBeEncodedAreShownByTheirTypeAsBefore(t *testing.T) {
	op := &Op{Name: "run", Kind: KindWrite, Params: []string{"job", "ch"}}
	tr, err := RunTraced(context.Background(), t.Name(), func(ctx context.Context) error {
		job := &notJSON{Name: "a", F: func() {}}
		return traced(ctx, op, []any{job, make(chan int)}, []any{"a"}, func(context.Context) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	// Escaped as encoding/json escapes < and >.
	want := `{"job":"\u003c*runtime.notJSON: not JSON\u003e","ch":"\u003cchan int: not JSON\u003e"}`
	if got := argsJSON(tr.Ops[0].Args); got != want {
		t.Fatalf("arguments %s, want %s", got, want)
	}
}

func TestAPointerAmongMoreArgumentsThanTheCallHoldsKeepsItsValueAtTheCall(t *testing.T) {
	// Five arguments: more than a Call holds in place, kept apart.
	op := &Op{Name: "reprice", Kind: KindWrite, Params: []string{"a", "b", "c", "d", "req"}}
	tr, err := RunTraced(context.Background(), t.Name(), func(ctx context.Context) error {
		req := &priceReq{Cents: 1000}
		if err := traced(ctx, op, []any{1, 2, 3, 4, req}, []any{1}, func(context.Context) error { return nil }); err != nil {
			return err
		}
		req.Cents = 800
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := argsJSON(tr.Ops[0].Args), `{"a":1,"b":2,"c":3,"d":4,"req":{"Cents":1000}}`; got != want {
		t.Fatalf("arguments %s, want %s", got, want)
	}
}
