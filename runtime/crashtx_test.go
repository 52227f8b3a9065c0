package runtime

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A red team's correct agent (rW #7) runs a keyed tool inside a
// transaction of its own, begun with db.Begin() and rolled back only on
// its error path, no defer, on SQLite. The crash scenario ends the crashed
// delivery's goroutine with runtime.Goexit, which leaves the transaction
// open and SQLite's write lock held; the restart waited for the lock, and
// the scenario was a `stalled` error that said to raise the StallTimeout;
// every later scenario whose Setup wrote to the database failed with
// "database is locked". A real crash ends the process and the transaction
// with it. The restart is inconclusive now, saying why and what to do;
// later scenarios name the crash; a transaction begun on the delivery's
// context is rolled back by the crash's cancellation, and the agent
// passes; a stall and a duplicate of the agent's own stay errors.

// lockDB is a database/sql driver that models SQLite's write lock: a
// transaction takes the database's one write lock at its first write and
// holds it until it commits or rolls back; a write elsewhere waits for
// the lock as SQLite's busy handler does, polling on a timer up to the
// busy timeout, then fails with SQLite's "database is locked". A
// statement's context ends its wait. Writes in a transaction land at its
// commit.
type lockDB struct {
	busy    time.Duration
	mu      sync.Mutex
	owner   any // who holds the write lock
	keys    map[string]bool
	balance int
}

var (
	registerLockDB sync.Once
	lockDBs        sync.Map // DSN -> *lockDB
	lockDBSeq      atomic.Int64
)

// openLockDB opens a new database of the driver whose busy timeout is busy.
func openLockDB(t *testing.T, busy time.Duration) (*sql.DB, *lockDB) {
	registerLockDB.Do(func() { sql.Register("agentidem-lockdb", lockDriver{}) })
	dsn := fmt.Sprintf("lockdb-%d", lockDBSeq.Add(1))
	l := &lockDB{busy: busy, keys: map[string]bool{}}
	lockDBs.Store(dsn, l)
	db, err := sql.Open("agentidem-lockdb", dsn)
	require.NoError(t, err)
	return db, l
}

var errLocked = errors.New("database is locked (5) (SQLITE_BUSY)")

// lock waits for the write lock for who, as SQLite's busy handler does.
func (l *lockDB) lock(ctx context.Context, who any) error {
	deadline := time.Now().Add(l.busy)
	for {
		l.mu.Lock()
		if l.owner == nil || l.owner == who {
			l.owner = who
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		if time.Now().After(deadline) {
			return errLocked
		}
		t := time.NewTimer(2 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (l *lockDB) unlock(who any) {
	l.mu.Lock()
	if l.owner == who {
		l.owner = nil
	}
	l.mu.Unlock()
}

// state is what State reads: the committed keys and balance.
func (l *lockDB) state() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.keys))
	for k := range l.keys {
		keys = append(keys, k)
	}
	return map[string]any{"keys": keys, "balance": l.balance}
}

type lockDriver struct{}

func (lockDriver) Open(dsn string) (driver.Conn, error) {
	l, ok := lockDBs.Load(dsn)
	if !ok {
		return nil, fmt.Errorf("lockdb: no database %q", dsn)
	}
	return &lockConn{db: l.(*lockDB)}, nil
}

type lockConn struct {
	db *lockDB
	tx *lockTx
}

type lockTx struct {
	c       *lockConn
	keys    []string
	balance int
}

func (c *lockConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("lockdb: no prepare") }
func (c *lockConn) Close() error                        { return nil }
func (c *lockConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *lockConn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error) {
	c.tx = &lockTx{c: c}
	return c.tx, nil
}

func (t *lockTx) Commit() error {
	l := t.c.db
	l.mu.Lock()
	for _, k := range t.keys {
		l.keys[k] = true
	}
	l.balance += t.balance
	l.mu.Unlock()
	l.unlock(t)
	t.c.tx = nil
	return nil
}

func (t *lockTx) Rollback() error {
	t.c.db.unlock(t)
	t.c.tx = nil
	return nil
}

// ExecContext runs "reset", "deposit" (key, amount: credits once per key)
// and "charge" (amount: credits on every call), in the connection's
// transaction if it has one.
func (c *lockConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	l := c.db
	var who any = c.tx
	if c.tx == nil {
		who = new(int) // a statement of its own
		defer l.unlock(who)
	}
	if err := l.lock(ctx, who); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch query {
	case "reset":
		l.keys, l.balance = map[string]bool{}, 0
	case "deposit":
		key, amt := args[0].Value.(string), int(args[1].Value.(int64))
		if c.tx == nil {
			if !l.keys[key] {
				l.keys[key], l.balance = true, l.balance+amt
			}
			break
		}
		if !l.keys[key] && !strings.Contains(" "+strings.Join(c.tx.keys, " ")+" ", " "+key+" ") {
			c.tx.keys, c.tx.balance = append(c.tx.keys, key), c.tx.balance+amt
		}
	case "charge":
		amt := int(args[0].Value.(int64))
		if c.tx == nil {
			l.balance += amt
		} else {
			c.tx.balance += amt
		}
	default:
		return nil, fmt.Errorf("lockdb: unknown statement %q", query)
	}
	return driver.RowsAffected(1), nil
}

var (
	opTxDeposit = &Op{Name: "deposit", Kind: KindWrite, Params: []string{"key"}, Pos: "crashtx_test.go:1"}
	opTxCharge  = &Op{Name: "charge", Kind: KindWrite, Params: []string{"key"}, Pos: "crashtx_test.go:2"}
)

// txAgent is the red team's agent: a unit of work in a transaction of its
// own, the keyed deposit (or the naive charge) made in it and retried
// once, the transaction rolled back on the error path only (or in a
// defer: deferred), begun with db.Begin() (or on the delivery's context:
// withCtx).
type txAgent struct {
	db                       *sql.DB
	naive, deferred, withCtx bool
	mu                       sync.Mutex
	txs                      []*sql.Tx // every transaction begun, rolled back at the test's end (goleak)
}

func (a *txAgent) run(ctx context.Context) error {
	var tx *sql.Tx
	var err error
	if a.withCtx {
		tx, err = a.db.BeginTx(ctx, nil)
	} else {
		tx, err = a.db.Begin()
	}
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.txs = append(a.txs, tx)
	a.mu.Unlock()
	if a.deferred {
		defer tx.Rollback()
	}
	write := func() error {
		if a.naive {
			return traced(ctx, opTxCharge, []any{"ord-5"}, []any{"ord-5"}, func(ctx context.Context) error {
				_, err := tx.ExecContext(ctx, "charge", 30)
				return err
			})
		}
		return traced(ctx, opTxDeposit, []any{"ord-5"}, []any{"ord-5"}, func(ctx context.Context) error {
			_, err := tx.ExecContext(ctx, "deposit", "ord-5", 30)
			return err
		})
	}
	if err := write(); err != nil {
		if err = write(); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// endTxs rolls back what the agent left open, so that no goroutine of
// database/sql outlives the test.
func (a *txAgent) endTxs() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tx := range a.txs {
		tx.Rollback()
	}
}

// runTxAgent runs the suite of a (its Setup writes to the database when
// sqlSetup, else resets it in memory) and returns its report.
func runTxAgent(t *testing.T, a *txAgent, l *lockDB, sqlSetup bool, opts ...Option) *Report {
	t.Helper()
	t.Cleanup(func() { a.endTxs(); a.db.Close() })
	setup := func(ctx context.Context) error {
		if sqlSetup {
			_, err := a.db.ExecContext(ctx, "reset")
			return err
		}
		l.mu.Lock()
		l.keys, l.balance = map[string]bool{}, 0
		l.mu.Unlock()
		return nil
	}
	opts = append([]Option{Setup(setup), State(l.state), StallTimeout(500 * time.Millisecond)}, opts...)
	rep, err := Run(context.Background(), t.Name(), a.run, opts...)
	if !sqlSetup {
		require.NoError(t, err)
	}
	require.NotNil(t, rep)
	require.True(t, rep.BaselineSucceeded, "baseline: %s", rep.BaselineFailure)
	return rep
}

// The red team's agent, with a busy timeout longer than the stall bound:
// the restart waits for the lock the crashed delivery's transaction holds
// until the stall bound. Inconclusive, saying why, not a stalled error;
// the duplicate deliveries after it, whose writes wait for the same lock,
// are inconclusive too and name the crash; no scenario fails.
func TestCrashLeavesATransactionOpenInconclusive(t *testing.T) {
	db, l := openLockDB(t, time.Minute)
	a := &txAgent{db: db}
	rep := runTxAgent(t, a, l, false)
	r := resultOf(t, rep, "crash_restart/deposit#1")
	assert.True(t, r.Inconclusive, "the restart could not be tested")
	assert.Empty(t, resultCodes(r), "no stalled error: the suite left the transaction open")
	notes := strings.Join(r.Trace.Notes, "\n")
	assert.Contains(t, notes, "the restart could not be tested: delivery 2 (goroutine ")
	assert.Contains(t, notes, "is waiting inside its SQL client at ")
	assert.Contains(t, notes, "a database/sql transaction that the crash of delivery 1 left open was still open")
	assert.Contains(t, notes, "which the suite ended (runtime.Goexit) at its call of deposit at crashtx_test.go:")
	assert.Contains(t, notes, "a real crash ends the process, and the database ends the transaction with its connection")
	assert.Contains(t, notes, "defer tx.Rollback()")
	assert.Contains(t, notes, "BeginTx on the delivery's context, which the crash cancels")
	for _, o := range rep.Results {
		assert.Empty(t, resultCodes(o), "%s: %v", o.Scenario, o.Findings)
		if o.Kind == ScenarioDuplicateSeq || o.Kind == ScenarioDuplicateConcurrent {
			assert.True(t, o.Inconclusive, o.Scenario)
			assert.Contains(t, strings.Join(o.Trace.Notes, "\n"), "the scenario could not be tested: ", o.Scenario)
			assert.Contains(t, strings.Join(o.Trace.Notes, "\n"), "the crash of delivery 1 in scenario crash_restart/deposit#1 of suite "+t.Name()+" left open was still open", o.Scenario)
		}
	}
	assert.True(t, rep.Safe, "no error finding")
	assert.Equal(t, 3, rep.InconclusiveCount)
}

// With a busy timeout shorter than the stall bound, the restart does not
// stall: it gives up on the lock with "database is locked", and the crash
// scenario read as ok, having tested nothing. Inconclusive now, saying
// why; and the later scenarios' Setups, which fail on the same lock, name
// the crash that left the transaction open.
func TestRestartThatFailsOnALeftTransactionsLock(t *testing.T) {
	db, l := openLockDB(t, 50*time.Millisecond)
	a := &txAgent{db: db}
	rep := runTxAgent(t, a, l, true)
	r := resultOf(t, rep, "crash_restart/deposit#1")
	assert.True(t, r.Inconclusive, "the restart could not be tested")
	assert.Empty(t, resultCodes(r))
	notes := strings.Join(r.Trace.Notes, "\n")
	assert.Contains(t, notes, "the restart could not be tested: it returned an error that reads as a database's lock (database is locked (5) (SQLITE_BUSY))")
	assert.Contains(t, notes, "a database/sql transaction that the crash of delivery 1 left open was still open")
	assert.Contains(t, notes, "defer tx.Rollback()")
	later := 0
	for _, o := range rep.Results {
		if o.Kind == ScenarioDuplicateSeq || o.Kind == ScenarioDuplicateConcurrent {
			later++
			assert.True(t, o.Inconclusive, o.Scenario)
			assert.Contains(t, o.Error, "setup: database is locked (5) (SQLITE_BUSY); a database/sql transaction that the crash of delivery 1 in scenario crash_restart/deposit#1 of suite "+t.Name()+" left open was still open", o.Scenario)
		}
	}
	assert.Equal(t, 2, later)
	assert.Equal(t, 3, rep.InconclusiveCount)
}

// Where the transaction is rolled back in a defer, or begun on the
// delivery's context (which the crash cancels, and database/sql then
// rolls the transaction back), the crash leaves nothing held: the agent
// passes, as the note tells.
func TestCrashWithTheTransactionEndedPasses(t *testing.T) {
	for _, c := range []struct {
		name              string
		deferred, withCtx bool
	}{
		{"deferred rollback", true, false},
		{"begun on the delivery's context", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, l := openLockDB(t, time.Minute)
			a := &txAgent{db: db, deferred: c.deferred, withCtx: c.withCtx}
			rep := runTxAgent(t, a, l, true)
			for _, r := range rep.Results {
				assert.True(t, r.Safe, "%s: %v %v", r.Scenario, r.Findings, r.Trace.Notes)
			}
			assert.True(t, rep.Safe)
		})
	}
}

// A buggy agent that charges on every call, in the same transaction left
// open: its duplicate is still found, and the suite fails.
func TestNaiveChargeInALeftTransactionStillFails(t *testing.T) {
	db, l := openLockDB(t, time.Minute)
	a := &txAgent{db: db, naive: true}
	rep := runTxAgent(t, a, l, false)
	assert.False(t, rep.Safe)
	r := resultOf(t, rep, "lost_acknowledgement/charge#1")
	assert.Contains(t, resultCodes(r), CodeDuplicateWrite, "%v", r.Findings)
}

// A true stall: after the crash left the transaction open, the restart
// waits for good on a channel of the agent's own, not in the database. It
// stays a stalled error.
func TestOwnStallBesideALeftTransactionStaysAnError(t *testing.T) {
	db, l := openLockDB(t, time.Minute)
	a := &txAgent{db: db}
	never := make(chan struct{})
	defer close(never)
	var deliveries atomic.Int32
	stuck := func(ctx context.Context) error {
		if deliveries.Add(1) == 3 { // the crash scenario's restart (the baseline is 1, the crashed delivery 2)
			select {
			case <-never:
			case <-ctx.Done():
			}
			return ctx.Err()
		}
		return a.run(ctx)
	}
	t.Cleanup(func() { a.endTxs(); db.Close() })
	rep, err := Run(context.Background(), t.Name(), stuck,
		Setup(func(context.Context) error {
			l.mu.Lock()
			l.keys, l.balance = map[string]bool{}, 0
			l.mu.Unlock()
			return nil
		}), State(l.state), StallTimeout(500*time.Millisecond), OnlyScenario("crash_restart/deposit#1"))
	require.NoError(t, err)
	r := resultOf(t, rep, "crash_restart/deposit#1")
	require.Equal(t, []string{CodeStalled}, resultCodes(r), "%v", r.Trace.Notes)
	assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "could not be tested")
	assert.False(t, rep.Safe)
}

// An agent that returns on its write's error without ending its
// transaction leaves it open by itself, on any error, in production too:
// the crash did not end the goroutine that began it (the delivery
// returned the crash's error), and the restart's stall on its lock stays
// a stalled error, as a mutex leaked on an error path does.
func TestErrorPathLeakedTransactionStallStaysAnError(t *testing.T) {
	db, l := openLockDB(t, time.Minute)
	a := &txAgent{db: db}
	leaky := func(ctx context.Context) error {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.txs = append(a.txs, tx)
		a.mu.Unlock()
		if err := traced(ctx, opTxDeposit, []any{"ord-5"}, []any{"ord-5"}, func(ctx context.Context) error {
			_, err := tx.ExecContext(ctx, "deposit", "ord-5", 30)
			return err
		}); err != nil {
			return err // the transaction left open
		}
		return tx.Commit()
	}
	t.Cleanup(func() { a.endTxs(); db.Close() })
	rep, err := Run(context.Background(), t.Name(), leaky,
		Setup(func(context.Context) error {
			l.mu.Lock()
			l.keys, l.balance = map[string]bool{}, 0
			l.mu.Unlock()
			return nil
		}), State(l.state), StallTimeout(500*time.Millisecond), OnlyScenario("crash_restart/deposit#1"))
	require.NoError(t, err)
	r := resultOf(t, rep, "crash_restart/deposit#1")
	require.Equal(t, []string{CodeStalled}, resultCodes(r), "%v", r.Trace.Notes)
	assert.Contains(t, r.Findings[0].Message, "delivery 2 (goroutine ", "the restart waits for the lock")
	// The restart's lock poll wakes every 2 ms: under -race and load
	// (CI238) the last look caught it awake, "running at" its select.
	msg := r.Findings[0].Message
	assert.True(t, strings.Contains(msg, "is blocked in a select at crashtx_test.go:") || strings.Contains(msg, "is running at crashtx_test.go:"), msg)
	assert.NotContains(t, strings.Join(r.Trace.Notes, "\n"), "could not be tested")
	assert.False(t, rep.Safe)
}
