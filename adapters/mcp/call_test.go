package agentidemmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	agentidemmcp "github.com/agentidem/agentidem-go/adapters/mcp"
	"github.com/agentidem/agentidem-go/runtime"
)

var reg = agentidemmcp.New(agentidemmcp.Tools{
	"get_order":   agentidemmcp.Read(agentidemmcp.Entity("order_id")),
	"create_inv":  agentidemmcp.Write(agentidemmcp.Identity("order_id"), agentidemmcp.Name("createInvoice")),
	"attach_inv":  agentidemmcp.Write(agentidemmcp.Identity("order_id"), agentidemmcp.After("createInvoice"), agentidemmcp.Entity("invoice_id")),
	"charge":      agentidemmcp.Write(agentidemmcp.Redact("card")),
	"by_func":     agentidemmcp.Write(agentidemmcp.IdentityFunc(func(a map[string]any) any { return strings.ToLower(a["sku"].(string)) })),
	"secret_read": agentidemmcp.Read(agentidemmcp.Entity("user"), agentidemmcp.Redact("user")),
})

// trace runs one call of tool through Call inside a traced run.
func trace(t *testing.T, tool, args string, next func(context.Context) (string, error), outcome func(string) (any, error)) (*runtime.Trace, string, error) {
	t.Helper()
	var res string
	var callErr error
	tr, _ := runtime.RunTraced(context.Background(), "t", func(ctx context.Context) error {
		res, callErr = agentidemmcp.Call(ctx, reg, tool, json.RawMessage(args), next, outcome)
		return nil
	})
	return tr, res, callErr
}

func ok(context.Context) (string, error) { return "done", nil }

func TestSpecs(t *testing.T) {
	cases := []struct {
		tool, args     string
		name, identity string
		entity         string
		kind           runtime.Kind
		after          []string
		argsJSON       string
	}{
		{tool: "get_order", args: `{"order_id":"o-1"}`, name: "get_order", kind: runtime.KindRead, entity: `"o-1"`, argsJSON: `{"arguments":{"order_id":"o-1"}}`},
		{tool: "create_inv", args: `{"order_id":"o-1","note":"x"}`, name: "createInvoice", kind: runtime.KindWrite, identity: `"o-1"`, entity: `"o-1"`},
		{tool: "attach_inv", args: `{"order_id":"o-1","invoice_id":"i-9"}`, name: "attach_inv", kind: runtime.KindWrite, identity: `"o-1"`, entity: `"i-9"`, after: []string{"createInvoice"}},
		{tool: "by_func", args: `{"sku":"ABC"}`, name: "by_func", kind: runtime.KindWrite, identity: `"abc"`, entity: `"abc"`},
		{tool: "charge", args: `{"card":"4242","amount":3}`, name: "charge", kind: runtime.KindWrite, argsJSON: `{"arguments":{"amount":3,"card":"[redacted]"}}`},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			tr, res, err := trace(t, c.tool, c.args, ok, nil)
			if err != nil || res != "done" {
				t.Fatalf("Call = %q, %v", res, err)
			}
			if len(tr.Ops) != 1 {
				t.Fatalf("%d ops traced, want 1", len(tr.Ops))
			}
			o := tr.Ops[0]
			if o.Name != c.name || o.Kind != c.kind || o.Status != runtime.StatusSuccess {
				t.Errorf("op %s kind %s status %s", o.Name, o.Kind, o.Status)
			}
			if c.identity != "" && o.Identity != c.identity {
				t.Errorf("identity %s, want %s", o.Identity, c.identity)
			}
			if c.entity != "" && o.Entity != c.entity {
				t.Errorf("entity %s, want %s", o.Entity, c.entity)
			}
			if c.argsJSON != "" {
				b, _ := json.Marshal(o.Args)
				if string(b) != c.argsJSON {
					t.Errorf("args %s, want %s", b, c.argsJSON)
				}
			}
			if op := reg.Op(c.tool); strings.Join(op.After, ",") != strings.Join(c.after, ",") {
				t.Errorf("after %v, want %v", op.After, c.after)
			}
		})
	}
}

func TestRedactedIdentityIsADigest(t *testing.T) {
	// The card is not hex: a digest's random hex cannot spell it by chance.
	tr, _, _ := trace(t, "charge", `{"card":"card-4242","amount":3}`, ok, nil)
	if id := tr.Ops[0].Identity; !strings.HasPrefix(id, "hmac-sha256:") || strings.Contains(id, "card-4242") {
		t.Errorf("identity over a redacted argument = %q, want a digest", id)
	}
	tr, _, _ = trace(t, "secret_read", `{"user":"alice"}`, ok, nil)
	if e := tr.Ops[0].Entity; !strings.HasPrefix(e, "hmac-sha256:") {
		t.Errorf("entity over a redacted argument = %q, want a digest", e)
	}
}

func TestOutcomeErrorMakesAFailedCall(t *testing.T) {
	isErr := func(string) (any, error) { return nil, errors.New("tool said no") }
	tr, res, err := trace(t, "create_inv", `{"order_id":"o-1"}`, ok, isErr)
	if err != nil || res != "done" {
		t.Fatalf("the tool's own answer must reach the client unchanged, got %q, %v", res, err)
	}
	o := tr.Ops[0]
	if o.Status != runtime.StatusFailed || o.Error != "tool said no" || o.Effective() {
		t.Errorf("status %s error %q effective %v", o.Status, o.Error, o.Effective())
	}
}

func TestPanicIsRecorded(t *testing.T) {
	boom := func(context.Context) (string, error) { panic("kaboom") }
	tr, _, err := trace(t, "create_inv", `{"order_id":"o-1"}`, boom, nil)
	if !errors.Is(err, runtime.ErrPanicked) {
		t.Fatalf("err = %v, want ErrPanicked", err)
	}
	if len(tr.Panics) != 1 || tr.Ops[0].Status != runtime.StatusFailed {
		t.Errorf("panics %v, status %s", tr.Panics, tr.Ops[0].Status)
	}
}

func TestUnknownToolAndInactiveRunPassThrough(t *testing.T) {
	tr, res, err := trace(t, "not_listed", `{}`, ok, nil)
	if err != nil || res != "done" || len(tr.Ops) != 0 {
		t.Errorf("unknown tool: %q %v, %d ops traced", res, err, len(tr.Ops))
	}
	res, err = agentidemmcp.Call(context.Background(), reg, "create_inv", json.RawMessage(`{}`), ok, nil)
	if err != nil || res != "done" {
		t.Errorf("inactive: %q %v", res, err)
	}
}

func TestZeroSpecPanics(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "Read or Write") {
			t.Errorf("recover() = %v", v)
		}
	}()
	agentidemmcp.New(agentidemmcp.Tools{"x": {}})
}

type key struct{}

func TestTokenResolve(t *testing.T) {
	// Outside a run there is nothing to link.
	if tok := agentidemmcp.Token(context.Background()); tok != "" {
		t.Fatalf("Token outside a run = %q", tok)
	}
	srv := context.Background()
	var tok string
	_, _ = runtime.RunTraced(context.Background(), "t", func(ctx context.Context) error {
		client, cancel := context.WithCancel(context.WithValue(ctx, key{}, "client"))
		tok = agentidemmcp.Token(client)
		if tok == "" {
			t.Fatal("no token inside a run")
		}
		got, stop := agentidemmcp.Resolve(srv, tok)
		defer stop()
		if got.Value(key{}) != "client" {
			t.Error("resolved context lacks the client's values")
		}
		if same, stop2 := agentidemmcp.Resolve(srv, "no-such-token"); same != srv {
			t.Error("unknown token must give the server context back")
		} else {
			stop2()
		}
		// A context the agent derived and cancelled does not end the
		// served call: only the harness's end of the delivery does (a
		// crash, an abandon), as runtime.Resolve says.
		cancel()
		select {
		case <-got.Done():
			t.Error("cancelling the client's context cancelled the served call")
		case <-time.After(10 * time.Millisecond):
		}
		// The token lives as long as the run, its context done or not.
		deadline := time.Now().Add(20 * time.Millisecond)
		for time.Now().Before(deadline) {
			again, stop3 := agentidemmcp.Resolve(srv, tok)
			stop3()
			if again == srv {
				t.Fatal("a token was forgotten while its run was active")
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	})
	// The run has ended: the token is forgotten.
	if again, stop := agentidemmcp.Resolve(srv, tok); again != srv {
		stop()
		t.Error("a token must be forgotten once its run ended")
	}
}

// BenchmarkCall compares a tool called directly, through Call with no run
// active (production), and through Call inside a traced run.
func BenchmarkCall(b *testing.B) {
	args := json.RawMessage(`{"order_id":"o-1","note":"x"}`)
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			_, _ = ok(ctx)
		}
	})
	b.Run("inactive", func(b *testing.B) {
		for b.Loop() {
			_, _ = agentidemmcp.Call(ctx, reg, "create_inv", args, ok, nil)
		}
	})
	b.Run("active", func(b *testing.B) {
		_, _ = runtime.RunTraced(ctx, "bench", func(ctx context.Context) error {
			for b.Loop() {
				_, _ = agentidemmcp.Call(ctx, reg, "create_inv", args, ok, nil)
			}
			return nil
		})
	})
}
