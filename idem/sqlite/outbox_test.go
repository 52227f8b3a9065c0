package sqlite_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem/sqlite/internal/stock"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// outboxWorld runs a worker per scenario (Setup starts it, Teardown stops
// it) that polls the outbox every 2 ms and ships what is queued.
type outboxWorld struct {
	w    *stock.Warehouse
	stop chan struct{}
	done chan struct{}
}

func (o *outboxWorld) options() []testkit.Option {
	return []testkit.Option{
		testkit.NoSummary(),
		testkit.StallTimeout(5 * time.Second),
		testkit.Setup(func(ctx context.Context) error {
			if err := o.w.Reset(ctx, 10, "a", "b"); err != nil {
				return err
			}
			o.stop, o.done = make(chan struct{}), make(chan struct{})
			go func(stop, done chan struct{}) {
				defer close(done)
				tick := time.NewTicker(2 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						o.w.Drain(context.Background())
					}
				}
			}(o.stop, o.done)
			return nil
		}),
		testkit.Teardown(func(context.Context) error { close(o.stop); <-o.done; return nil }),
		testkit.State(o.w.Stock),
		// The judge waits until the outbox is drained, not for the
		// events to go quiet: a worker that the machine's load starves
		// for longer than a quiet time would ship inside the next
		// repeat's window (a false duplicate_write in CI).
		testkit.SettleUntil(o.w.Drained, 5*time.Second),
	}
}

// The agent queues two shipments of one turn, retrying each once; the
// worker ships them later. The keyed outbox passes, the naive one is
// caught, on every run.
func TestOutboxShipmentVerdicts(t *testing.T) {
	for _, c := range []struct {
		name  string
		keyed bool
		want  string
	}{{"keyed", true, ""}, {"naive", false, runtime.CodeDuplicateWrite}} {
		t.Run(c.name, func(t *testing.T) {
			o := &outboxWorld{w: openStock(t)}
			agent := func(ctx context.Context) error {
				ship := o.w.ShipNaiveTraced
				if c.keyed {
					ship = o.w.ShipTraced
				}
				for i, sku := range []string{"a", "b"} {
					ref := []string{"o1", "o2"}[i]
					if err := ship(ctx, ref, sku); err != nil {
						if err := ship(ctx, ref, sku); err != nil {
							return err
						}
					}
				}
				return nil
			}
			stockVerdicts(t, 3, agent, o.options(), c.want)
		})
	}
}
