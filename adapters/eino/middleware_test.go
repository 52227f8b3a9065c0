package agentidemeino_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agentidemeino "github.com/agentidem/agentidem-go/adapters/eino"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

var specs = agentidemeino.Tools{
	"lookup": agentidemeino.Read(agentidemeino.Entity("user")),
	"pay":    agentidemeino.Write(agentidemeino.Identity("order"), agentidemeino.Redact("card"), agentidemeino.Name("payOrder")),
	"tag":    agentidemeino.Write(agentidemeino.IdentityFunc(func(a map[string]any) any { return strings.ToUpper(a["t"].(string)) })),
	"secret": agentidemeino.Write(agentidemeino.Identity("card"), agentidemeino.Redact("card")),
}

// invoke runs one call through the middleware's invokable hook inside a
// traced run.
func invoke(t *testing.T, name, args string, tool compose.InvokableToolEndpoint) (*runtime.Trace, *compose.ToolOutput, error) {
	t.Helper()
	ep := agentidemeino.Middleware(specs).Invokable(tool)
	var out *compose.ToolOutput
	var err error
	tr, _ := runtime.RunTraced(context.Background(), "t", func(ctx context.Context) error {
		out, err = ep(ctx, &compose.ToolInput{Name: name, Arguments: args, CallID: "c1"})
		return nil
	})
	return tr, out, err
}

func answer(s string) compose.InvokableToolEndpoint {
	return func(context.Context, *compose.ToolInput) (*compose.ToolOutput, error) {
		return &compose.ToolOutput{Result: s}, nil
	}
}

func TestMiddlewareRecordsSpecs(t *testing.T) {
	tr, out, err := invoke(t, "pay", `{"order":"o-7","card":"4242"}`, answer(`{"paid":true}`))
	if err != nil || out.Result != `{"paid":true}` {
		t.Fatalf("out %+v err %v", out, err)
	}
	o := tr.Ops[0]
	b, _ := json.Marshal(o.Args)
	if o.Name != "payOrder" || o.Kind != runtime.KindWrite || o.Identity != `"o-7"` || string(b) != `{"arguments":{"card":"[redacted]","order":"o-7"}}` {
		t.Errorf("op %s kind %s identity %s args %s", o.Name, o.Kind, o.Identity, b)
	}
	if r, _ := json.Marshal(o.Result); string(r) != `{"paid":true}` {
		t.Errorf("JSON result recorded as %s", r)
	}

	tr, _, _ = invoke(t, "lookup", `{"user":"ann"}`, answer("plain text"))
	if o := tr.Ops[0]; o.Kind != runtime.KindRead || o.Entity != `"ann"` || o.Result != "plain text" {
		t.Errorf("read: kind %s entity %s result %v", o.Kind, o.Entity, o.Result)
	}
	tr, _, _ = invoke(t, "tag", `{"t":"urgent"}`, answer("ok"))
	if o := tr.Ops[0]; o.Identity != `"URGENT"` {
		t.Errorf("IdentityFunc identity %s", o.Identity)
	}
	tr, _, _ = invoke(t, "secret", `{"card":"4242"}`, answer("ok"))
	if o := tr.Ops[0]; !strings.HasPrefix(o.Identity, "hmac-sha256:") {
		t.Errorf("identity over a redacted argument %q, want a digest", o.Identity)
	}
}

func TestMiddlewareToolErrorAndPanic(t *testing.T) {
	boom := errors.New("card declined")
	tr, _, err := invoke(t, "pay", `{"order":"o-7"}`, func(context.Context, *compose.ToolInput) (*compose.ToolOutput, error) {
		return nil, boom
	})
	if !errors.Is(err, boom) || tr.Ops[0].Status != runtime.StatusFailed || tr.Ops[0].Effective() {
		t.Errorf("err %v status %s", err, tr.Ops[0].Status)
	}
	tr, _, err = invoke(t, "pay", `{"order":"o-7"}`, func(context.Context, *compose.ToolInput) (*compose.ToolOutput, error) {
		panic("kaboom")
	})
	if !errors.Is(err, runtime.ErrPanicked) || len(tr.Panics) != 1 {
		t.Errorf("err %v panics %v", err, tr.Panics)
	}
}

func TestMiddlewarePassesThrough(t *testing.T) {
	tr, out, err := invoke(t, "unlisted", `{}`, answer("x"))
	if err != nil || out.Result != "x" || len(tr.Ops) != 0 {
		t.Errorf("unlisted tool: %v %v, %d ops", out, err, len(tr.Ops))
	}
	out, err = agentidemeino.Middleware(specs).Invokable(answer("y"))(context.Background(), &compose.ToolInput{Name: "pay", Arguments: `{}`})
	if err != nil || out.Result != "y" {
		t.Errorf("inactive: %v %v", out, err)
	}
}

func TestMiddlewareEnhanced(t *testing.T) {
	ep := agentidemeino.Middleware(specs).EnhancedInvokable(func(context.Context, *compose.ToolInput) (*compose.EnhancedInvokableToolOutput, error) {
		return &compose.EnhancedInvokableToolOutput{Result: &schema.ToolResult{}}, nil
	})
	tr, _ := runtime.RunTraced(context.Background(), "t", func(ctx context.Context) error {
		_, err := ep(ctx, &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-1"}`})
		return err
	})
	if len(tr.Ops) != 1 || tr.Ops[0].Name != "payOrder" || tr.Ops[0].Status != runtime.StatusSuccess {
		t.Errorf("enhanced call traced as %+v", tr.Ops)
	}
}

func TestZeroSpecPanics(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "Read or Write") {
			t.Errorf("recover() = %v", v)
		}
	}()
	agentidemeino.Middleware(agentidemeino.Tools{"x": {}})
}

// BenchmarkInvokable compares a tool endpoint called directly, through the
// middleware with no run active (production), and inside a traced run.
func BenchmarkInvokable(b *testing.B) {
	tool := answer(`{"ok":true}`)
	in := &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-7","card":"4242"}`}
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			_, _ = tool(ctx, in)
		}
	})
	ep := agentidemeino.Middleware(specs).Invokable(tool)
	b.Run("inactive", func(b *testing.B) {
		for b.Loop() {
			_, _ = ep(ctx, in)
		}
	})
	b.Run("active", func(b *testing.B) {
		_, _ = runtime.RunTraced(ctx, "bench", func(ctx context.Context) error {
			for b.Loop() {
				_, _ = ep(ctx, in)
			}
			return nil
		})
	})
}

func TestMiddlewareStreamable(t *testing.T) {
	ep := agentidemeino.Middleware(specs).Streamable(func(context.Context, *compose.ToolInput) (*compose.StreamToolOutput, error) {
		return &compose.StreamToolOutput{Result: schema.StreamReaderFromArray([]string{"a", "b"})}, nil
	})
	var got string
	tr, _ := runtime.RunTraced(context.Background(), "t", func(ctx context.Context) error {
		out, err := ep(ctx, &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-1"}`})
		if err != nil {
			return err
		}
		defer out.Result.Close()
		for {
			chunk, err := out.Result.Recv()
			if err != nil {
				break
			}
			got += chunk
		}
		return nil
	})
	if len(tr.Ops) != 1 || tr.Ops[0].Name != "payOrder" || tr.Ops[0].Status != runtime.StatusSuccess || got != "ab" {
		t.Errorf("stream call traced as %+v, streamed %q", tr.Ops, got)
	}
}

// A lost acknowledgement of a streaming call comes after the tool's
// stream ended, its work with it: the agent reads the chunks, then the
// injected error in place of the stream's end.
func TestMiddlewareStreamableLostAck(t *testing.T) {
	var paid atomic.Int32
	ep := agentidemeino.Middleware(specs).Streamable(func(context.Context, *compose.ToolInput) (*compose.StreamToolOutput, error) {
		sr, sw := schema.Pipe[string](0)
		go func() {
			defer sw.Close()
			if sw.Send("paying...", nil) {
				return
			}
			paid.Add(1) // the effect, while the stream is produced
			sw.Send("paid", nil)
		}()
		return &compose.StreamToolOutput{Result: sr}, nil
	})
	var (
		mu    sync.Mutex
		seen  []error
		paids []int32
	)
	rep, err := runtime.Run(context.Background(), "stream", func(ctx context.Context) error {
		out, err := ep(ctx, &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-1"}`})
		if err != nil {
			return err
		}
		defer out.Result.Close()
		for {
			_, err = out.Result.Recv()
			if err != nil {
				break
			}
		}
		mu.Lock()
		seen = append(seen, err)
		paids = append(paids, paid.Swap(0))
		mu.Unlock()
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}, runtime.OnlyScenario("lost_acknowledgement/payOrder#1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 1 || !rep.Results[0].FaultFired {
		t.Fatalf("lost acknowledgement did not fire: %+v", rep.Results)
	}
	last := seen[len(seen)-1]
	if !errors.Is(last, runtime.ErrInjected) {
		t.Errorf("agent saw %v at the stream's end, want the injected timeout", last)
	}
	if p := paids[len(paids)-1]; p != 1 {
		t.Errorf("the tool paid %d times before its acknowledgement was lost, want 1: the fault came before its work", p)
	}
}

// An agent that closes a tool's stream before its end closes the tool's
// stream too, as in production; the tool may not have done its work, so
// no lost acknowledgement is judged on it. The baseline records the call
// as failed (closed early): the plan then leaves lost_acknowledgement and
// crash_restart out for it, and the report's notes say why (they follow a
// success, and could not fire). Where the middleware saw the close only
// after the run ended (an agent that returns at once), the call was still
// running in the baseline: the scenario is planned, and its fault did not
// fire, inconclusive.
func TestMiddlewareStreamableClosedEarly(t *testing.T) {
	var opened, closed atomic.Int32
	ep := agentidemeino.Middleware(specs).Streamable(func(context.Context, *compose.ToolInput) (*compose.StreamToolOutput, error) {
		sr, sw := schema.Pipe[string](0)
		opened.Add(1)
		go func() {
			defer sw.Close()
			for {
				if sw.Send("chunk", nil) { // true: the reader closed the stream
					closed.Add(1)
					return
				}
			}
		}()
		return &compose.StreamToolOutput{Result: sr}, nil
	})
	rep, err := runtime.Run(context.Background(), "stream", func(ctx context.Context) error {
		out, err := ep(ctx, &compose.ToolInput{Name: "pay", Arguments: `{"order":"o-1"}`})
		if err != nil {
			return err
		}
		_, _ = out.Result.Recv()
		out.Result.Close()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	const lost = "lost_acknowledgement/payOrder#1"
	var res *runtime.Result
	for _, r := range rep.Results {
		if r.Scenario == lost {
			res = r
		}
	}
	switch {
	case res == nil:
		notes := strings.Join(rep.Notes, "\n")
		if !strings.Contains(notes, "not planned on payOrder#1") || !strings.Contains(notes, "closed the tool's stream before its end") {
			t.Errorf("%s not planned, and the report's notes do not say why: %q", lost, rep.Notes)
		}
	case res.FaultFired || !res.Inconclusive:
		t.Errorf("%s: fired %v, inconclusive %v: want the lost acknowledgement not fired, inconclusive", lost, res.FaultFired, res.Inconclusive)
	}
	for _, r := range rep.Results {
		for _, o := range r.Trace.Ops {
			if o.Repeat == runtime.RepeatAbsorbed {
				t.Errorf("%s: %s absorbed, where the tool may not have done its work", r.Scenario, o.ID)
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for closed.Load() != opened.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if o, c := opened.Load(), closed.Load(); o != c {
		t.Errorf("%d streams opened, %d closed: a tool's stream leaked", o, c)
	}
}
