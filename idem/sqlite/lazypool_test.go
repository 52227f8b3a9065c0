package sqlite_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem/sqlite/internal/stock"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// restocker is an agent of the shape of a long-lived service: its pool of
// workers starts on the first invocation (sync.Once) and serves every
// later one; each job carries the invocation's context.
type restocker struct {
	w    *stock.Warehouse
	set  bool
	once sync.Once
	jobs chan restockJob
	stop chan struct{}
	wg   sync.WaitGroup
}

type restockJob struct {
	ctx  context.Context
	sku  string
	done chan error
}

func (r *restocker) start() {
	r.jobs, r.stop = make(chan restockJob), make(chan struct{})
	for range 2 {
		r.wg.Go(func() {
			for {
				select {
				case <-r.stop:
					return
				case j := <-r.jobs:
					if r.set {
						j.done <- r.w.SetLevelTraced(j.ctx, j.sku, 5)
					} else {
						j.done <- r.w.AdjustTraced(j.ctx, j.sku, 5)
					}
				}
			}
		})
	}
}

func (r *restocker) close() {
	if r.stop != nil {
		close(r.stop)
		r.wg.Wait()
	}
}

func (r *restocker) run(ctx context.Context) error {
	r.once.Do(r.start)
	var dones []chan error
	for _, sku := range []string{"a", "b"} {
		d := make(chan error, 1)
		r.jobs <- restockJob{ctx, sku, d}
		dones = append(dones, d)
	}
	var errs []error
	for i, d := range dones {
		err := <-d
		if err != nil {
			d := make(chan error, 1)
			r.jobs <- restockJob{ctx, []string{"a", "b"}[i], d}
			err = <-d
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func TestStockPoolStartedByTheFirstInvocationVerdicts(t *testing.T) {
	for _, c := range []struct {
		name string
		set  bool
		want string
	}{{"set", true, ""}, {"adjust", false, runtime.CodeDuplicateWrite}} {
		t.Run(c.name, func(t *testing.T) {
			w := openStock(t)
			for range 3 {
				r := &restocker{w: w, set: c.set}
				rep := testkit.Run(t, r.run, stockOptions(w, "a", "b")...)
				r.close()
				if got := errorCodes(rep); got != c.want {
					t.Errorf("error codes %q, want %q:\n%s", got, c.want, errorLines(rep))
				}
				for _, f := range rep.Findings {
					if f.Severity != runtime.SeverityError {
						t.Logf("%s %s: %s", f.Scenario, f.Code, f.Message)
					}
				}
			}
		})
	}
}
