package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// A server in the process (an MCP server the test connected, serving every
// delivery over one session) handles each call of the agent on a goroutine
// of its own, started by a short-lived goroutine that has exited by the
// time the handler calls (go-sdk's jsonrpc2 dispatch): the handler's links
// end at an exited goroutine, which invocation.owns takes for the
// invocation's. When the invocation crashed, its next call, made by such a
// handler, ended the server's goroutine: the request was never answered,
// and closing the session hung. With the context a server serves the call
// with marked Served, the call is refused instead, and the handler
// answers.
func TestCrashRefusesACallAServerServesAndItsHandlerAnswers(t *testing.T) {
	bump := &Op{Name: "bump", Kind: KindWrite, Params: []string{"k"}}
	// The tool does nothing: what is judged is which calls ran and which
	// the crash refused.
	call := func(ctx context.Context, k string) error {
		c, _ := Begin(ctx, bump, []any{k}, []any{k}, nil)
		if err := c.Start(); err != nil {
			return err
		}
		return c.Finish(nil)
	}
	type request struct {
		ctx   context.Context
		k     string
		after <-chan struct{} // the handler calls once it is closed
		done  chan<- struct{} // closed when the handler's call returned
		reply chan error
	}
	// The server: a dispatcher started before the suite, and per request
	// a spawner that starts the handler and exits.
	requests := make(chan request)
	var answered sync.WaitGroup
	var refused []error
	var refusedMu sync.Mutex
	go func() {
		for req := range requests {
			go func() { // the spawner
				spawner := goroutineID()
				answered.Add(1)
				go func() { // the handler
					defer answered.Done()
					goroutineGone(spawner)
					if req.after != nil {
						<-req.after
					}
					err := call(Served(req.ctx), req.k)
					if req.done != nil {
						close(req.done)
					}
					if errors.Is(err, errCrashedCall) && errors.Is(err, context.Canceled) {
						refusedMu.Lock()
						refused = append(refused, err)
						refusedMu.Unlock()
					}
					req.reply <- err
				}()
			}()
		}
	}()
	defer close(requests)
	// The agent asks for a and b at once, as one model turn's parallel
	// calls; b runs once a's call returned.
	agent := func(ctx context.Context) error {
		aDone := make(chan struct{})
		ra, rb := make(chan error, 1), make(chan error, 1)
		requests <- request{ctx: ctx, k: "a", done: aDone, reply: ra}
		requests <- request{ctx: ctx, k: "b", after: aDone, reply: rb}
		return errors.Join(<-ra, <-rb)
	}
	rep, err := Run(context.Background(), t.Name(), agent, OnlyScenario(ScenarioCrashRestart+"/bump#1"))
	if err != nil {
		t.Fatal(err)
	}
	answered.Wait() // every handler answered: none was ended
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want the crash scenario", len(rep.Results))
	}
	res := rep.Results[0]
	notes := strings.Join(res.Trace.Notes, "\n")
	if !res.FaultFired {
		t.Fatalf("the crash did not fire (notes %q)", notes)
	}
	if !strings.Contains(notes, "of a server in the process serving the agent's call") {
		t.Errorf("notes %q do not say the server's call was refused", notes)
	}
	refusedMu.Lock()
	defer refusedMu.Unlock()
	if len(refused) != 1 {
		t.Errorf("%d calls refused (not executed, an error matching context.Canceled), want the crashed invocation's call of b", len(refused))
	}
}

func TestServedMarksOnce(t *testing.T) {
	ctx := Served(context.Background())
	if !isServed(ctx) || Served(ctx) != ctx || isServed(context.Background()) || Served(nil) != nil {
		t.Fatal("Served does not mark a context once")
	}
}
