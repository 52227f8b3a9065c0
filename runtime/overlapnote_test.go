package runtime

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
)

// TestOverlappedRepeatSaysWhatStateSaw: a tool hands its refund to a
// service in the process that answers over a channel (no HTTP, no gRPC:
// nothing tells that the service's call serves the tool's), and the
// service books it, traced, once per key. The service's call is a sibling
// of the tool's, the two overlap, and without a Settle each execution
// counts. The finding said "State saw no execution change the world"
// where State went from {} to {p1:1} (red team rtN F7): it now says what
// State saw change, and that it could not tell whose change it was.
func TestOverlappedRepeatSaysWhatStateSaw(t *testing.T) {
	book := &Op{Name: "book", Kind: KindWrite, Params: []string{"payment", "key"}}
	refund := &Op{Name: "refund", Kind: KindWrite, Params: []string{"payment"}}
	var mu sync.Mutex
	var refunds map[string]int
	var keys map[string]bool
	type request struct {
		payment string
		reply   chan error
	}
	requests := make(chan request)
	go func() { // the service, started before the suite
		for req := range requests {
			c, _ := Begin(context.Background(), book, []any{req.payment, "refund:" + req.payment}, []any{req.payment}, nil)
			err := c.Start()
			if err == nil {
				mu.Lock()
				if !keys["refund:"+req.payment] {
					keys["refund:"+req.payment] = true
					refunds[req.payment]++
				}
				mu.Unlock()
				err = c.Finish(nil)
			}
			req.reply <- err
		}
	}()
	defer close(requests)
	tool := func(ctx context.Context) error {
		c, _ := Begin(ctx, refund, []any{"p1"}, []any{"p1"}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		reply := make(chan error)
		requests <- request{"p1", reply}
		return c.Finish(<-reply)
	}
	agent := func(ctx context.Context) error {
		if err := tool(ctx); err != nil {
			return tool(ctx) // one retry
		}
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error {
			mu.Lock()
			refunds, keys = map[string]int{}, map[string]bool{}
			mu.Unlock()
			return nil
		}),
		State(func() any {
			mu.Lock()
			defer mu.Unlock()
			return maps.Clone(refunds)
		}),
		OnlyScenario(ScenarioLostAck+"/refund#1"))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, f := range rep.Findings {
		if f.Code == CodeDuplicateWrite {
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) == 0 {
		t.Fatalf("no duplicate_write (the repeat counts without a Settle): %v", rep.Findings)
	}
	for _, m := range msgs {
		t.Log(m)
		if strings.Contains(m, "State saw no execution change the world") {
			t.Errorf("the finding says State saw no change, where it saw p1 refunded: %s", m)
		}
		if !strings.Contains(m, "State saw the world change only while its executions overlapped other calls") || !strings.Contains(m, "p1") {
			t.Errorf("the finding does not say what State saw change: %s", m)
		}
	}
}
