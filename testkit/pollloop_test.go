package testkit_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realworld"
)

// A consumer that Setup starts polls its stream for as long as the agent
// runs: a blocking read of its connection (XREADGROUP BLOCK 50 ms on
// Redis), then, between two reads, a wait on a channel of its client's (a
// circuit breaker's select), which counts as quiet. Each look that found it
// between reads started its read's grace afresh, so on a loaded machine,
// where it spends longer between reads, the grace never lapsed: the
// baseline's calls waited at their start gates for the world to go quiet
// until the stall bound, and the correct agent's baseline failed as
// stalled (red team rtT's Redis stream shipper, 2 runs of 45 with three
// test binaries at once). Here it spends half its time between reads, so
// that every look in a second finds it there at least once: a read at the
// same place that follows the one before within readGap keeps its grace.
func TestAPollingConsumerBetweenReadsIsNotBusyForEver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	// The stream: a byte every 20 ms on each connection. Its goroutines
	// and the ticker's start before the suite, outside every scenario.
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					time.Sleep(20 * time.Millisecond)
					if _, err := c.Write([]byte{1}); err != nil {
						return
					}
				}
			}()
		}
	}()
	breaker := make(chan struct{}) // the client's: ready again 20 ms after each read
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			time.Sleep(20 * time.Millisecond)
			select {
			case breaker <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	w := &deskWorld{}
	agent := func(ctx context.Context) error {
		var g errgroup.Group
		g.Go(func() error { _, err := w.desk.FindTraced(ctx, "D-1"); return err })
		g.Go(func() error { _, err := w.desk.FindTraced(ctx, "D-2"); return err })
		return g.Wait()
	}
	rep := testkit.TestAgent(t, agent, w.options(
		testkit.StallTimeout(3*time.Second),
		testkit.NoSummary(),
		testkit.Setup(func(context.Context) error {
			w.desk = realworld.NewDesk()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				return err
			}
			conns = append(conns, c)
			go func() { // the consumer's poll loop
				buf := make([]byte, 1)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					select {
					case <-breaker:
					case <-stop:
						return
					}
				}
			}()
			return nil
		}))...)
	noStall(t, rep)
	assert.True(t, rep.BaselineSucceeded)
	assert.True(t, rep.Safe)
}
