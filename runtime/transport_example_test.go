package runtime_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/agentidem/agentidem-go/runtime"
)

var refundOp = &runtime.Op{Name: "refund", Kind: runtime.KindWrite, Params: []string{"order"}}

// refundTraced is what agentidem-gen writes for a refund tool whose HTTP
// helper sends its POST again when the client fails.
func refundTraced(ctx context.Context, hc *http.Client, url, order string) (err error) {
	refund := func(ctx context.Context) error {
		for range 3 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/refunds", strings.NewReader(order))
			if resp, err := hc.Do(req); err == nil {
				return resp.Body.Close()
			}
		}
		return fmt.Errorf("refund %s: no answer", order)
	}
	if !runtime.Enabled() {
		return refund(ctx)
	}
	c, ctx := runtime.Begin(ctx, refundOp, []any{order}, []any{order}, nil)
	if err := c.Start(); err != nil {
		return err
	}
	defer c.Recover(&err)
	err = refund(ctx)
	if lost := c.Finish(err); lost != nil {
		return lost
	}
	return err
}

// Transport lets the suite meet a retry inside a tool call: the tool's
// client goes through it, and the lost_response scenario drops the answer
// to the refund's POST after the service made the refund. The helper sends
// it again, the service refunds twice, and State shows it.
func ExampleTransport() {
	var mu sync.Mutex
	var refunds []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		refunds = append(refunds, string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	client := &http.Client{Transport: runtime.Transport(nil)}

	rep, err := runtime.Run(context.Background(), "refund-agent", func(ctx context.Context) error {
		return refundTraced(ctx, client, srv.URL, "o-1")
	},
		runtime.OnlyScenario("lost_response/refund#1"),
		runtime.Setup(func(context.Context) error { mu.Lock(); refunds = nil; mu.Unlock(); return nil }),
		runtime.State(func() any {
			mu.Lock()
			defer mu.Unlock()
			return map[string]any{"refunds": append([]string{}, refunds...)}
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Results {
		for _, f := range r.Findings {
			fmt.Println(r.Scenario, f.Code)
		}
	}
	// Output:
	// lost_response/refund#1 duplicate_write
}
