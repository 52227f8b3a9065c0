package runtime_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
)

// A loop that reads a connection for as long as it lives, started inside
// the agent's turn: by the agent itself, it is the agent's, waited for a
// grace and noted (TestAGoroutineReadingForeverCostsAGraceNotAStall);
// started through runtime.GoInfrastructure, as idem/postgres starts its
// LISTEN connection on the first idem.Do, it is the process's, and no
// scenario waits for it or notes it; nor for a reader that such a
// goroutine starts in turn (a connection's own reader). Either way the
// two writes of one order in flight together are found, and nothing
// stalls.
func TestAnInfrastructureGoroutineIsNotTheAgents(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(f func())
		loops int // notes of reads taken for loops
	}{
		{"the agent's own goroutine", func(f func()) { go f() }, 1},
		{"runtime.GoInfrastructure", runtime.GoInfrastructure, 0},
		{"a goroutine that runtime.GoInfrastructure's starts", func(f func()) {
			runtime.GoInfrastructure(func() {
				var wg sync.WaitGroup
				wg.Go(f)
				wg.Wait()
			})
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := heldConns(t)
			rep := runOrders(t, func(s func() *orders) func(context.Context) error {
				turn := captureAndCancel(s, func() (string, error) { return "fraud", nil }, false)
				return func(ctx context.Context) error {
					conn, err := net.Dial("tcp", addr)
					if err != nil {
						return err
					}
					done := make(chan struct{})
					c.start(func() {
						defer close(done)
						_, _ = io.Copy(io.Discard, conn) // until the connection closes
					})
					defer func() {
						conn.Close()
						<-done
					}()
					return turn(ctx)
				}
			}, runtime.StallTimeout(3*time.Second))
			if s := stalls(rep); len(s) > 0 {
				t.Errorf("stalled: %s", strings.Join(s, "\n"))
			}
			if !rep.Has(runtime.CodeConcurrentWritesEntity) {
				t.Errorf("capture and cancelOrder of one order, in flight together, were not found: findings %s", findings(rep))
			}
			if n := loopNotes(rep); len(n) != c.loops {
				t.Errorf("%d reads were taken for loops, want %d: %s", len(n), c.loops, strings.Join(n, "\n"))
			}
		})
	}
}
