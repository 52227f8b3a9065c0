package gosdk_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	mcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/adapters/mcp/gosdk"
	"github.com/agentidem/agentidem-go/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type statusIn struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}
type idsIn struct {
	IDs string `json:"ids"`
}

// A help desk whose close_all tool closes each ticket through set_status,
// calling it over a session of its own to the same server: the nested
// calls run on the server's goroutines while close_all's body waits for
// their answers. They are traced as the agent's calls, and a redelivery
// that opens the tickets again and closes them again leaves the desk as
// one delivery does: set_status sets back what close_all changed, and
// close_all's repeat closes what the redelivery opened (an idempotent
// op's repeat that started midway).
func TestToolCallingAToolOverASession(t *testing.T) {
	var mu sync.Mutex
	status := map[string]string{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "desk", Version: "1.0.0"}, nil)
	var connect func(ctx context.Context) (*sdk.ClientSession, func(), error)
	sdk.AddTool(srv, &sdk.Tool{Name: "set_status"}, func(ctx context.Context, _ *sdk.CallToolRequest, in statusIn) (*sdk.CallToolResult, any, error) {
		mu.Lock()
		status[in.ID] = in.Status
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "close_all"}, func(ctx context.Context, _ *sdk.CallToolRequest, in idsIn) (*sdk.CallToolResult, any, error) {
		cs, stop, err := connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer stop()
		for _, id := range []string{"t1", "t2"} {
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "set_status", Arguments: map[string]any{"id": id, "status": "closed"}}); err != nil {
				return nil, nil, err
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "closed"}}}, nil, nil
	})
	srv.AddReceivingMiddleware(gosdk.Middleware(mcp.Tools{
		"set_status": mcp.Write(mcp.Identity("id", "status"), mcp.Idempotent()),
		"close_all":  mcp.Write(mcp.Identity("ids"), mcp.Idempotent()),
	}))
	connect = func(ctx context.Context) (*sdk.ClientSession, func(), error) {
		st, ct := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(context.WithoutCancel(ctx), st, nil)
		if err != nil {
			return nil, nil, err
		}
		client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		client.AddSendingMiddleware(gosdk.Propagate())
		cs, err := client.Connect(context.WithoutCancel(ctx), ct, nil)
		if err != nil {
			ss.Close()
			return nil, nil, err
		}
		return cs, func() { cs.Close(); ss.Wait() }, nil
	}
	agent := func(ctx context.Context) error {
		cs, stop, err := connect(ctx)
		if err != nil {
			return err
		}
		defer stop()
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, id := range []string{"t1", "t2"} {
			wg.Go(func() {
				_, errs[i] = cs.CallTool(ctx, &sdk.CallToolParams{Name: "set_status", Arguments: map[string]any{"id": id, "status": "open"}})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "close_all", Arguments: map[string]any{"ids": "t1,t2"}})
		return err
	}
	rep := testkit.Run(t, agent, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { mu.Lock(); status = map[string]string{}; mu.Unlock(); return nil }),
		testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(status) }))
	var names []string
	for _, o := range rep.Baseline.Trace.Ops {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	if want := []string{"close_all", "set_status", "set_status", "set_status", "set_status"}; !slices.Equal(names, want) {
		t.Fatalf("baseline calls %v, want %v", names, want)
	}
	// close_all's set_status calls, over a session of its own, are made
	// inside it: they name it as their parent and are no batch with it.
	// The agent's two parallel set_status calls are a batch.
	var closeID string
	for _, o := range rep.Baseline.Trace.Ops {
		if o.Name == "close_all" {
			closeID = o.ID
		}
	}
	nested, parallel := 0, 0
	for _, o := range rep.Baseline.Trace.Ops {
		switch {
		case o.Parent == closeID:
			nested++
			if o.Batch != 0 {
				t.Errorf("%s, made inside %s, is in batch %d", o.ID, closeID, o.Batch)
			}
		case o.Name == "set_status":
			parallel++
			if o.Parent != "" || o.Batch == 0 {
				t.Errorf("%s, the agent's own parallel call: parent %q, batch %d", o.ID, o.Parent, o.Batch)
			}
		}
	}
	if nested != 2 || parallel != 2 {
		t.Errorf("%d calls made inside close_all and %d of the agent's own, want 2 and 2", nested, parallel)
	}
	if !rep.Safe {
		for _, f := range rep.Problems {
			t.Errorf("%s: %s", f.Code, f.Message)
		}
	}
}
