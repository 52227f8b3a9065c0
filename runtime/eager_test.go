package runtime

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
)

// readyDesk is an order service in memory: create_order opens an order,
// attach_item (after=create_order) adds an item to one, and, as a lax API
// does, files the item as a dangling link when the order does not exist
// yet; get_setting reads a setting, put_setting sets one.
type readyDesk struct {
	mu       sync.Mutex
	orders   map[string][]string
	dangling []string
	settings map[string]string
}

var (
	readyCreate = &Op{Name: "create_order", Kind: KindWrite, Params: []string{"order"}}
	readyAttach = &Op{Name: "attach_item", Kind: KindWrite, Params: []string{"order", "item"}, After: []string{"create_order"}}
	readyGet    = &Op{Name: "get_setting", Kind: KindRead, Params: []string{"key"}}
	readyPut    = &Op{Name: "put_setting", Kind: KindWrite, Params: []string{"key", "value"}, Idempotent: true}
)

func newReadyDesk() *readyDesk {
	return &readyDesk{orders: map[string][]string{}, settings: map[string]string{}}
}

// state is the desk's snapshot (State).
func (d *readyDesk) state() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	orders := map[string][]string{}
	for k, v := range d.orders {
		orders[k] = slices.Sorted(slices.Values(v))
	}
	return map[string]any{"orders": orders, "dangling": slices.Sorted(slices.Values(d.dangling)), "settings": maps.Clone(d.settings)}
}

// reset empties the desk (Setup).
func (d *readyDesk) reset(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.orders, d.dangling, d.settings = map[string][]string{}, nil, map[string]string{}
	return nil
}

// call is one traced tool call of op with args; identity and entity are
// args[:nid] and args[:1].
func (d *readyDesk) call(ctx context.Context, op *Op, args []any, nid int, body func()) error {
	c, _ := Begin(ctx, op, args, args[:nid], args[:1])
	if err := c.Start(); err != nil {
		return err
	}
	d.mu.Lock()
	body()
	d.mu.Unlock()
	return c.Finish(nil)
}

func (d *readyDesk) create(ctx context.Context, order string) error {
	return d.call(ctx, readyCreate, []any{order}, 1, func() {
		if _, ok := d.orders[order]; !ok {
			d.orders[order] = []string{}
		}
	})
}

func (d *readyDesk) attach(ctx context.Context, order, item string) error {
	return d.call(ctx, readyAttach, []any{order, item}, 2, func() {
		items, ok := d.orders[order]
		if !ok {
			d.dangling = append(d.dangling, order+"/"+item)
			return
		}
		if !slices.Contains(items, item) {
			d.orders[order] = append(items, item)
		}
	})
}

func (d *readyDesk) get(ctx context.Context, key string) error {
	return d.call(ctx, readyGet, []any{key}, 1, func() { _ = d.settings[key] })
}

func (d *readyDesk) put(ctx context.Context, key, value string) error {
	return d.call(ctx, readyPut, []any{key, value}, 1, func() { d.settings[key] = value })
}

// eagerAgents are the agents of the eager schedules' tests, by name: each
// shape whose second call the agent makes once a sibling's call returned
// (a worker freed, a branch's next call), buggy and correct.
func eagerAgents(d *readyDesk) map[string]func(context.Context) error {
	return map[string]func(context.Context) error{
		// A pool of two workers drains [create O1, create O2, attach O1,
		// attach O2]: when create O2 answers first, its worker takes
		// attach O1 while create O1 is still in flight.
		"pool bug": func(ctx context.Context) error {
			jobs := make(chan func() error)
			errc := make(chan error, 4)
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					for j := range jobs {
						errc <- j()
					}
				})
			}
			for _, j := range []func() error{
				func() error { return d.create(ctx, "O1") },
				func() error { return d.create(ctx, "O2") },
				func() error { return d.attach(ctx, "O1", "i") },
				func() error { return d.attach(ctx, "O2", "i") },
			} {
				jobs <- j
			}
			close(jobs)
			wg.Wait()
			close(errc)
			var errs []error
			for err := range errc {
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		},
		// Each worker chains the create and the attach of one order.
		"pool ok": func(ctx context.Context) error {
			var o1, o2 error
			var wg sync.WaitGroup
			for _, p := range []struct {
				order string
				err   *error
			}{{"O1", &o1}, {"O2", &o2}} {
				wg.Go(func() {
					if *p.err = d.create(ctx, p.order); *p.err == nil {
						*p.err = d.attach(ctx, p.order, "i")
					}
				})
			}
			wg.Wait()
			return errors.Join(o1, o2)
		},
		// Branch 1 creates O1; branch 2 reads a setting, then attaches
		// to O1 without waiting for branch 1.
		"branch bug": func(ctx context.Context) error {
			return turn(ctx,
				func(ctx context.Context) error { return d.create(ctx, "O1") },
				func(ctx context.Context) error {
					if err := d.get(ctx, "config"); err != nil {
						return err
					}
					return d.attach(ctx, "O1", "i")
				})
		},
		// Branch 2 waits for branch 1's answer before it attaches.
		"branch ok": func(ctx context.Context) error {
			created := make(chan error, 1)
			return turn(ctx,
				func(ctx context.Context) error { err := d.create(ctx, "O1"); created <- err; return err },
				func(ctx context.Context) error {
					if err := d.get(ctx, "config"); err != nil {
						return err
					}
					if err := <-created; err != nil {
						return nil
					}
					return d.attach(ctx, "O1", "i")
				})
		},
		// Branch 1 sets k to a; branch 2 reads x, then sets k to b: which
		// lands last is a race in production.
		"last writer bug": func(ctx context.Context) error {
			return turn(ctx,
				func(ctx context.Context) error { return d.put(ctx, "k", "a") },
				func(ctx context.Context) error {
					if err := d.get(ctx, "x"); err != nil {
						return err
					}
					return d.put(ctx, "k", "b")
				})
		},
		// Branch 2 sets k only once branch 1's write returned.
		"last writer ok": func(ctx context.Context) error {
			wrote := make(chan error, 1)
			return turn(ctx,
				func(ctx context.Context) error { err := d.put(ctx, "k", "a"); wrote <- err; return err },
				func(ctx context.Context) error {
					if err := d.get(ctx, "x"); err != nil {
						return err
					}
					if err := <-wrote; err != nil {
						return err
					}
					return d.put(ctx, "k", "b")
				})
		},
	}
}

// A call that becomes ready while its round is played (a worker of a pool
// freed by a sibling's finish, a branch's next call after its first
// returned) waited for the round's end, so it was never in flight with the
// calls of the round still held at their finish gates: a pool of two
// draining [create O1, create O2, attach O1, attach O2], a branch that
// reads and then attaches beside the create, a branch that reads and then
// writes the key the other branch writes, all passed as SAFE (red team
// rX, MISS 2, 5 and 6). The eager twin of a schedule in which such a call
// came starts it at once, before the round's next release: the buggy
// agents fail, with the finding in the eager schedules, and a replay of
// such a schedule alone fails the same; their correct twins pass.
func TestEagerScheduleStartsACallReadyMidRound(t *testing.T) {
	cases := []struct {
		bug, ok string
		code    string
	}{
		{"pool bug", "pool ok", CodeDependentCallsConcurrent},
		{"branch bug", "branch ok", CodeDependentCallsConcurrent},
		{"last writer bug", "last writer ok", CodeConcurrentWritesEntity},
	}
	d := newReadyDesk()
	agents := eagerAgents(d)
	opts := func(more ...Option) []Option {
		return append([]Option{OnlyScenario(ScenarioInterleaving), State(d.state), Setup(d.reset)}, more...)
	}
	for _, tc := range cases {
		t.Run(tc.bug, func(t *testing.T) {
			rep, err := Run(context.Background(), t.Name(), agents[tc.bug], opts()...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Safe || !rep.Has(tc.code) {
				t.Fatalf("safe %v, %s %v; want UNSAFE with it; findings: %v", rep.Safe, tc.code, rep.Has(tc.code), rep.Findings)
			}
			var eager []string
			for _, res := range rep.Results {
				if res.Kind != ScenarioInterleaving {
					continue
				}
				if res.Inconclusive {
					t.Errorf("%s inconclusive: %s", res.Scenario, res.Error)
				}
				isEager := strings.HasPrefix(res.Schedule, eagerPrefix)
				if resultHas(res, tc.code) {
					if !isEager {
						t.Errorf("%s has %s, but it is no eager schedule: the finding was there before them", res.Scenario, tc.code)
					}
					eager = append(eager, res.Schedule)
				}
			}
			if len(eager) == 0 {
				t.Fatalf("no eager schedule has %s", tc.code)
			}
			for _, sched := range eager {
				rep, err := Run(context.Background(), t.Name(), agents[tc.bug], opts(Replay(sched))...)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Safe || !rep.Has(tc.code) {
					t.Errorf("replay of %s: safe %v, %s %v; want UNSAFE with it; findings: %v", sched, rep.Safe, tc.code, rep.Has(tc.code), rep.Findings)
				}
			}
		})
		t.Run(tc.ok, func(t *testing.T) {
			rep, err := Run(context.Background(), t.Name(), agents[tc.ok], opts()...)
			if err != nil {
				t.Fatal(err)
			}
			schedules := 0
			for _, res := range rep.Results {
				if res.Kind == ScenarioInterleaving && !res.Inconclusive {
					schedules++
				}
			}
			if !rep.Safe || schedules < 2 {
				t.Errorf("safe %v after %d schedules, want SAFE after 2 or more; findings: %v", rep.Safe, schedules, rep.Findings)
			}
		})
	}
}

// The shards of an exploration with eager twins run, together, the
// schedules of the unsharded one, each once: a twin runs in the shard of
// the schedule it twins.
func TestEagerTwinsShard(t *testing.T) {
	d := newReadyDesk()
	agent := eagerAgents(d)["pool bug"]
	opts := func(more ...Option) []Option {
		return append([]Option{OnlyScenario(ScenarioInterleaving), State(d.state), Setup(d.reset)}, more...)
	}
	ctx := context.Background()
	whole, err := Run(ctx, t.Name(), agent, opts()...)
	if err != nil {
		t.Fatal(err)
	}
	names := func(rep *Report) []string {
		var out []string
		for _, res := range rep.Results {
			if res.Kind == ScenarioInterleaving {
				out = append(out, res.Schedule)
			}
		}
		return out
	}
	want := names(whole)
	if !slices.ContainsFunc(want, func(s string) bool { return strings.HasPrefix(s, eagerPrefix) }) {
		t.Fatalf("no eager schedule in %v", want)
	}
	union := map[string]int{}
	var reps []*Report
	for i := 1; i <= 2; i++ {
		rep, err := Run(ctx, t.Name(), agent, opts(ShardOf(i, 2))...)
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
		for _, s := range names(rep) {
			union[s]++
		}
	}
	if len(union) != len(want) {
		t.Errorf("shards ran %v, the whole exploration %v", union, want)
	}
	for _, s := range want {
		if union[s] != 1 {
			t.Errorf("schedule %s ran in %d shards, want 1", s, union[s])
		}
	}
	merged, err := MergeShards(reps...)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(merged); !slices.Equal(got, want) {
		t.Errorf("merged shards list %v, want the exploration's order %v", got, want)
	}
}

func TestEagerScheduleString(t *testing.T) {
	for _, str := range []string{"eager.s0s1f1f0", "eager.s0s1f1f0.s1s0f0f1", "s0s1f1f0"} {
		s, err := ParseSchedule(str)
		if err != nil {
			t.Fatal(err)
		}
		if s.String() != str {
			t.Errorf("ParseSchedule(%q) = %+v, which prints %q", str, s, s.String())
		}
	}
	for _, str := range []string{"eager.", "eager.s0", "eagers0s1f0f1"} {
		if _, err := ParseSchedule(str); err == nil {
			t.Errorf("ParseSchedule(%q) took it", str)
		}
	}
}

// An eager schedule replayed where no call becomes ready mid-round (the
// agent changed since it was printed) is no replay of it: the result says
// so and is inconclusive, never a silent pass.
func TestEagerReplayWithoutNewcomer(t *testing.T) {
	d := newReadyDesk()
	rep, err := Run(context.Background(), t.Name(), eagerAgents(d)["branch bug"],
		OnlyScenario(ScenarioInterleaving), State(d.state), Setup(d.reset), Replay("eager.s0s1f0f1"))
	if err == nil || !strings.Contains(err.Error(), "no call became ready") {
		t.Fatalf("err %v, want the schedule not to fit", err)
	}
	for _, res := range rep.Results {
		if res.Kind == ScenarioInterleaving && (!res.Inconclusive || res.Safe) {
			t.Errorf("%s: inconclusive %v, safe %v; want inconclusive", res.Scenario, res.Inconclusive, res.Safe)
		}
	}
}
