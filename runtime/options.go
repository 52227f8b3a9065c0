package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Option configures a suite run by Run (and by testkit.TestAgent, which
// takes the same options).
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type invariant struct {
	name string
	fn   func(*Trace) error
}

type config struct {
	setups      []func(context.Context) error // Setup's, in the order given
	setupCode   []string                      // where each Setup's code is, "" where unknown (scenariocode.go)
	teardowns   []teardownHook                // Teardown's, in the order given
	invariants  []invariant
	exactlyOnce bool
	only        string
	onlyFrom    string // what set only: "AGENTIDEM_SCENARIO" or "OnlyScenario"
	replay      func(scenario string) string
	seed        int64
	seedSet     bool
	seedEnv     bool    // the seed came from AGENTIDEM_SEED (seedEnv)
	envErr      error   // AGENTIDEM_* variables that do not parse (readEnv)
	optErrs     []error // options given nil where nil means nothing (nilOption)

	bubble         Bubble
	stall          time.Duration
	stallEnv       time.Duration // AGENTIDEM_STALL_TIMEOUT, read once (readEnv)
	budget         int
	depth          int
	replaySchedule string
	outcome        func() any

	shard    *Shard // ShardOf, AGENTIDEM_SHARD, Bazel's shard variables (shard.go)
	shardErr error

	state func() any // State: the world's snapshot
	// stateCtx is StateContext's fn (state then calls it with a
	// context no one cancels, for what reads State outside a run).
	stateCtx func(context.Context) any
	guard    func(call func()) error     // StateGuard: how the judge calls state
	settle   func(context.Context) error // Settle: wait for late effects

	faultErr func(op string, kind FaultKind) error // FaultError's, asked in the order given

	stateClock *stateClock // State's calls and time, when State is given (stateguard.go)
}

func newConfig(opts []Option) config {
	c := config{only: os.Getenv("AGENTIDEM_SCENARIO"), onlyFrom: "AGENTIDEM_SCENARIO"}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.replay == nil {
		c.replay = func(s string) string { return "AGENTIDEM_SCENARIO='" + s + "'" }
	}
	c.readEnv()
	if c.state != nil {
		c.stateClock = new(stateClock)
	}
	return c
}

// Setup gives every scenario a fresh world: fn runs before the baseline and
// before each scenario. A failing Setup stops that scenario and is reported.
//
// fn runs in a goroutine of its own, which the harness waits for; t.Fatal
// and t.Skip in it end the test as they would in the test's goroutine. An
// fn that has not returned after six times the stall bound (StallTimeout)
// is left running: its scenario fails naming where it waits, and the
// suite's later scenarios fail at once with the same error. The
// tools fn calls, and those the goroutines it starts call before it
// returns (seeding in parallel), are not the agent's: they run as in
// production, in no run's trace, even while another test's suite runs.
// A goroutine fn starts and leaves running may serve an agent (a server
// the agent calls, started once for the package's tests) or not (a token
// refresher), and nothing tells: a tool it calls during a scenario,
// without the agent's ctx, is told as any call without it (the one
// invocation running, refused when several are). A goroutine that does
// not serve the agent should not call its traced tools.
//
// Setup may be given more than once (a database reset and a worker's
// start, from two helpers): the functions run in the order given, in one
// hook, and the first error stops the rest. The Teardowns given before the
// Setup that failed then still run (see Teardown).
func Setup(fn func(ctx context.Context) error) Option {
	return setupOf(fn, fn)
}

// Teardown runs after the baseline and after each scenario, after the
// invariants, in a goroutine of its own as Setup does, and its calls are
// the harness's as Setup's are. Given more than once, the functions all
// run, in the reverse order (as deferred calls do: a worker stopped before
// its database is closed), a panic in one stopping none of the others,
// and their errors are joined.
//
// As a deferred call undoes what came before it, a Teardown belongs to the
// Setups given before it: when a Setup fails (or ends its goroutine, with
// t.FailNow), the Teardowns given before that Setup still run, so that a
// worker or server an earlier Setup started is stopped, and those given
// after it do not (what they undo may not exist). Give each Teardown right
// after its Setup (a helper that returns both) for that to hold; a
// Teardown given after every Setup runs only when they all succeeded.
func Teardown(fn func(ctx context.Context) error) Option {
	return optionFunc(func(c *config) {
		if fn != nil {
			c.teardowns = append(c.teardowns, teardownHook{fn: fn, setups: len(c.setups)})
		}
	})
}

// teardownHook is a Teardown, with the number of Setups given before it.
type teardownHook struct {
	fn     func(context.Context) error
	setups int
}

// setup returns the Setups as one hook, which counts in done those that
// returned nil, or nil when there are none.
func (c *config) setup(done *atomic.Int32) func(context.Context) error {
	if len(c.setups) == 0 {
		return nil
	}
	return func(ctx context.Context) error {
		for _, fn := range c.setups {
			if err := fn(ctx); err != nil {
				return err
			}
			done.Add(1)
		}
		return nil
	}
}

// teardown returns, as one hook, the Teardowns given after no more than
// setups Setups (all of them: setups < 0), which run in the reverse order
// each even if one given after it panics or ends its goroutine; or nil
// when there are none.
func (c *config) teardown(setups int) func(context.Context) error {
	var chain func(context.Context) error
	for _, t := range c.teardowns {
		if setups >= 0 && t.setups > setups {
			continue
		}
		prev, fn := chain, t.fn
		if prev == nil {
			chain = fn
			continue
		}
		chain = func(ctx context.Context) (err error) {
			// prev runs even if fn ends its goroutine (t.FailNow:
			// runtime.Goexit runs deferred calls, recovers nothing).
			var ferr error
			defer func() { err = errors.Join(ferr, unpanicked(prev, ctx)) }()
			ferr = unpanicked(fn, ctx)
			return nil
		}
	}
	return chain
}

// unpanicked runs hook fn, and returns a panic in it as an error, so that
// the Teardowns given after it still run.
func unpanicked(fn func(context.Context) error, ctx context.Context) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("Teardown panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return fn(ctx)
}

// Invariant adds a check that runs after the baseline and after every
// scenario, with the scenario's trace. It usually inspects the world the
// Setup built ("at most one refund per payment"). A returned error or a
// panic is an invariant_failed finding. A nil fn is a *ConfigError that
// stops the suite before its baseline (every scenario would fail by it).
func Invariant(name string, fn func(*Trace) error) Option {
	return optionFunc(func(c *config) {
		if fn == nil {
			c.nilOption(fmt.Sprintf("Invariant(%q)", name), "a func that checks the scenario's world and returns an error where it is wrong")
			return
		}
		c.invariants = append(c.invariants, invariant{name, fn})
	})
}

// nilOption records an option given a nil func where nil would silently
// mean something else than the user wrote (a State left out, an invariant
// that panics in every scenario): a *ConfigError that stops the suite
// before its baseline (readEnv joins it with the environment's).
func (c *config) nilOption(option, want string) {
	c.optErrs = append(c.optErrs, &ConfigError{Setting: option, Value: "nil", Want: "want " + want + "; leave the option out where there is none"})
}

// ExactlyOnce also demands that every write of the baseline took effect in
// each scenario where the agent reported success: a write identity that
// never succeeded there is a missing_write finding. A success its sink
// replayed from a key that no execution of the scenario made (a key Setup
// did not reset) did not take effect there. Without it the suite checks
// at-most-once, but for what State shows: where a scenario refused no
// write (a lost acknowledgement, a crash and restart, a duplicate
// delivery) and its run never called an op of the baseline's writes,
// whose places the run's end holds as they were before that write, the
// work was visibly dropped, and that is a missing_write too (inconclusive
// where the world may still make it). ExactlyOnce demands every write,
// where State cannot see it and where a fault told the agent that a write
// did not happen.
func ExactlyOnce() Option {
	return optionFunc(func(c *config) { c.exactlyOnce = true })
}

// OnlyScenario runs the baseline and the one scenario with this full name
// (as printed in a replay line). The environment variable
// AGENTIDEM_SCENARIO does the same; the option overrides it. The
// interleavings and partial batch failures of an agent with parallel calls
// run whichever scenario it names ("interleaving" names them all,
// "interleaving/<schedule>" one of them, and AGENTIDEM_SCHEDULE runs that
// one alone). A name that is none of the suite's scenarios (a misspelling,
// a write the agent no longer makes) is a *ConfigError, which Baseline
// returns, naming the closest scenarios: the suite runs nothing more, where
// it ran the baseline alone and reported it safe.
func OnlyScenario(name string) Option {
	return optionFunc(func(c *config) { c.only, c.onlyFrom = name, "OnlyScenario" })
}

// DefaultStallTimeout bounds how long a scenario may go without progress
// (no tool call begun or finished, no gate reached, no delivery returned)
// before it is stalled: it then fails alone, naming what is blocked and
// where, and the suite goes on.
const DefaultStallTimeout = 10 * time.Second

// StallTimeout sets the stall bound of every scenario (default
// DefaultStallTimeout). AGENTIDEM_STALL_TIMEOUT (a time.Duration such as
// "30s") does the same, where the option is not given; a value that does
// not parse as a positive duration with its unit ("1", "bogus") is a
// *ConfigError, and the suite does not run. Raise it for agents whose tools
// are slow, not stuck, and above the longest wait a service in the test
// asks of an API client's retry back-off (a 429's Retry-After): a back-off
// makes no progress while it sleeps, and one longer than the bound stalls
// the scenario, whose message then names the back-off; and above the wait
// of a library's long poll that the agent makes (a JetStream Fetch waits
// 30 s by default, answered by the server when its expiry fires), or make
// that poll shorter under test: a stall message names the goroutines of
// the world or of a library blocked in a select, whose timer no stack
// shows. Setup and Teardown may run six times as long.
func StallTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.stall = d })
}

func (c *config) stallTimeout() time.Duration {
	if c.stall > 0 {
		return c.stall
	}
	if c.stallEnv > 0 {
		return c.stallEnv
	}
	return DefaultStallTimeout
}

// ReplayCommand sets how a replay line is printed for a scenario name.
// testkit sets it to the go test -run line of the scenario's subtest.
func ReplayCommand(fn func(scenario string) string) Option {
	return optionFunc(func(c *config) { c.replay = fn })
}
