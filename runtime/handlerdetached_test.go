package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHandlersContextIsToldAsAHandlers: a tool posts a refund to a fake
// of the service (an httptest.Server of the test), whose handler books it,
// traced, with the request's context. The baseline's context_detached
// warning asked to "pass the agent's ctx", which cannot cross HTTP, though
// the runtime knows a handler of this process made the call (red team rtN
// F8): it now says so, and gives no advice. A tool that calls with
// context.Background() itself is still asked for the agent's ctx.
func TestHandlersContextIsToldAsAHandlers(t *testing.T) {
	book := &Op{Name: "book", Kind: KindWrite, Params: []string{"payment"}}
	refund := &Op{Name: "refund", Kind: KindWrite, Params: []string{"payment"}}
	note := &Op{Name: "note", Kind: KindWrite, Params: []string{"payment"}}
	write := func(ctx context.Context, op *Op, p string) error {
		c, _ := Begin(ctx, op, []any{p}, []any{p}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		return c.Finish(nil)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := write(r.Context(), book, "p1"); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	agent := func(ctx context.Context) error {
		c, _ := Begin(ctx, refund, []any{"p1"}, []any{"p1"}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if err := c.Finish(err); err != nil {
			return err
		}
		return write(context.Background(), note, "p1") // detached by the agent's own code
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioBaseline))
	if err != nil {
		t.Fatal(err)
	}
	var handler, own []string
	for _, f := range rep.Findings {
		if f.Code != CodeContextDetached {
			continue
		}
		if strings.Contains(f.Message, "by a handler of this process (an HTTP or gRPC server) serving the agent's request") {
			handler = append(handler, f.Message)
		} else {
			own = append(own, f.Message)
		}
	}
	if len(handler) != 1 || strings.Contains(handler[0], "pass the agent's ctx") {
		t.Errorf("the handler's call is not told as a handler's, without advice: %q (others %q)", handler, own)
	}
	if len(own) != 1 || !strings.Contains(own[0], "pass the agent's ctx") {
		t.Errorf("the agent's own context.Background() is not asked for the agent's ctx: %q", own)
	}
}
