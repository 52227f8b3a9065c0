package runtime

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// A crash ends the crashed delivery's goroutines with runtime.Goexit,
// which runs their deferred calls and nothing else: a database/sql
// transaction the delivery began and ends only on its normal or error
// path (tx, err := db.Begin(); ...; tx.Commit(), with tx.Rollback() on
// the error path and no defer) stays open, and so does what it holds (its
// connection of the pool, SQLite's write lock, PostgreSQL's row locks). A
// real crash ends the process, the database ends the transaction with its
// connection, and the restart finds nothing held. Under the suite, the
// restart waited for that lock until the stall bound, and a correct
// agent's crash_restart was a `stalled` error that said to raise the
// StallTimeout; every later scenario whose Setup writes to that database
// then failed with "database is locked" (red team rW #7: modernc SQLite,
// a keyed tool inside the agent's transaction).
//
// database/sql shows such a transaction in a stack dump: BeginTx starts a
// goroutine of its own, (*Tx).awaitDone, which ends once the transaction
// is committed or rolled back (or the context it was begun with ends),
// and the dump names the goroutine that started it, the one that called
// BeginTx. One such goroutine still there, started by a goroutine the
// crash ended, is a transaction the crashed delivery left open: the
// evidence txLeftByCrash and leftTxNote read. A transaction begun with
// BeginTx on the delivery's context is not left so: the crash cancels
// that context, and database/sql rolls the transaction back.
//
// The suite cannot end such a transaction: it holds no handle on it, and
// database/sql has no way to end one from outside (rolling back needs the
// *sql.Tx the agent's variable holds). A transaction of a client that does
// not go through database/sql (pgx's own pgx.Tx, a pgxpool) starts no such
// goroutine and is not seen; nor is a *sql.Conn or *sql.Rows left open,
// which hold a connection of the pool with no goroutine of their own.

// crashOrigin is a goroutine that a crash ended (endedByCrash), kept for
// the process: where a transaction it began outlives its scenario, a later
// scenario (a Setup that fails on the lock, a stall) names the crash.
type crashOrigin struct {
	end   crashEnd
	suite string
	fault Fault // the crash's: its scenario's name, told only where a note needs it
}

// crashOrigins are the goroutines the process's crashes ended, newest
// last, the most recent maxCrashOrigins at least: a transaction left open
// is usually met by the next scenario, and a process may run thousands of
// crashes.
var crashOrigins struct {
	mu   sync.Mutex
	ends []crashOrigin
}

const maxCrashOrigins = 1024

// keepCrashOrigin records e, which the crash of a run of suite ended; f
// is the crash. Full, the list drops its older half at once, so that a
// crash costs no copy of it.
func keepCrashOrigin(e crashEnd, suite string, f Fault) {
	crashOrigins.mu.Lock()
	if len(crashOrigins.ends) >= 2*maxCrashOrigins {
		crashOrigins.ends = append(crashOrigins.ends[:0], crashOrigins.ends[maxCrashOrigins:]...)
	}
	crashOrigins.ends = append(crashOrigins.ends, crashOrigin{end: e, suite: suite, fault: f})
	crashOrigins.mu.Unlock()
}

// leftTx is a database/sql transaction a crash left open: the goroutine
// database/sql runs for it (awaitDone) and the crashed goroutine that
// began it.
type leftTx struct {
	g      gInfo
	origin crashOrigin
}

// openTxAwait reports whether g is database/sql's goroutine of an open
// transaction, which ends when the transaction does.
func (g *gInfo) openTxAwait() bool {
	return g.has("database/sql.(*Tx).awaitDone")
}

// sqlDrivers are the frames of SQL clients beside database/sql that a
// stalled statement may wait in (inDatabaseDriver has the network ones):
// SQLite's drivers wait for the database's lock in their busy handler.
var sqlDrivers = []string{"modernc.org/sqlite", "github.com/mattn/go-sqlite3", "github.com/ncruces/go-sqlite3", "github.com/glebarez/go-sqlite"}

// inSQLClient reports whether g is inside a SQL client: database/sql, a
// driver, pgx.
func (g *gInfo) inSQLClient() bool {
	return g.inDatabaseDriver() || slices.ContainsFunc(g.funcs, func(f string) bool {
		return slices.ContainsFunc(sqlDrivers, func(p string) bool { return strings.HasPrefix(f, p) })
	})
}

// leftTransactions returns the transactions that goroutines ended by a
// crash began and left open: database/sql's goroutine of each (awaitDone)
// is still there, and its creator is a goroutine a crash ended. One
// stack dump, whose goroutines are parsed only where a crash ended their
// creator.
func leftTransactions() []leftTx {
	crashOrigins.mu.Lock()
	if len(crashOrigins.ends) == 0 {
		crashOrigins.mu.Unlock()
		return nil
	}
	byGID := make(map[uint64]crashOrigin, len(crashOrigins.ends))
	for _, o := range crashOrigins.ends {
		byGID[o.end.gid] = o
	}
	crashOrigins.mu.Unlock()
	var out []leftTx
	for _, g := range snapshotSome(func(_, parent uint64) bool { _, ok := byGID[parent]; return ok }) {
		o, ok := byGID[g.parent]
		if ok && len(g.funcs) > 0 && g.openTxAwait() {
			out = append(out, leftTx{g: g, origin: o})
		}
	}
	return out
}

// txLeftByCrash says, when the evidence is there, that the stall of a
// scenario is the suite's own: a goroutine of the scenario (of a delivery
// other than the crashed one: the restart) waits inside a SQL client
// (database/sql, its driver's busy or lock wait, pgx), and a database/sql
// transaction that a goroutine ended by a crash began is still open, in
// this scenario or an earlier one. The transaction most likely holds what
// the restart waits for (a write lock, a row lock, the pool's last
// connection): a Goexit left it open, where a real crash ends it with the
// process. Who holds a database's lock is not in a stack dump, so the
// evidence is the open transaction and the wait in the database, not the
// lock: a restart that waits for a lock some other transaction holds reads
// the same (a known limit). Not this: a stall with no transaction left so,
// one where no goroutine of the scenario waits in a SQL client, or one
// where a goroutine outside a SQL client was running, asleep or waiting
// for the network, which may be what the scenario waits for. gs are the
// scenario's goroutines. It returns "" when the evidence is not there.
func (r *recorder) txLeftByCrash(gs []gInfo) string {
	if r.world == nil {
		return ""
	}
	crashed := map[int]bool{} // this run's crashed deliveries
	r.mu.Lock()
	for _, e := range r.odd().crashEnds {
		crashed[e.delivery] = true
	}
	r.mu.Unlock()
	var waiter *gInfo
	d := 0
	for i := range gs {
		g := &gs[i]
		if g.bystander() || g.openTxAwait() {
			continue
		}
		inSQL := g.inSQLClient()
		if busy, _ := g.busy(time.Time{}); (busy || g.state == "IO wait") && !inSQL {
			return ""
		}
		if waiter != nil || !g.inDatabaseDriver() {
			continue // a driver's own goroutine (a statement's canceller) waits for no lock
		}
		if n := r.world.invocationOf(g.id); !crashed[n] {
			waiter, d = g, n
		}
	}
	if waiter == nil {
		return ""
	}
	txs := leftTransactions()
	if len(txs) == 0 {
		return ""
	}
	tx := &txs[0]
	for i := range txs {
		if r.ownCrashEnd(txs[i].origin.end.gid) {
			tx = &txs[i] // this run's crash before an earlier one's
			break
		}
	}
	who := fmt.Sprintf("goroutine %d", waiter.id)
	if d > 0 {
		who = fmt.Sprintf("delivery %d (goroutine %d)", d, waiter.id)
	}
	crash, tested := fmt.Sprintf("the crash of delivery %d", tx.origin.end.delivery), "the restart"
	if !r.ownCrashEnd(tx.origin.end.gid) {
		crash += " in " + tx.origin.where()
		tested = "this scenario"
	}
	return fmt.Sprintf("%s is waiting inside its SQL client at %s%s, and a database/sql transaction that %s left open was still open: database/sql's goroutine of that transaction (goroutine %d, which ends once it is committed or rolled back) was started by goroutine %d, which began the transaction and which the suite ended (runtime.Goexit) %s, without a commit or a rollback; the transaction most likely holds what the wait is for (a write lock, a row lock, the pool's connection), and nothing releases it (a Goexit runs deferred calls only); a real crash ends the process, and the database ends the transaction with its connection, so the suite could not test %s, and the scenario is inconclusive; %s",
		who, waiter.where(), sqlWaitKind(waiter), crash, tx.g.id, tx.origin.end.gid, tx.origin.end.at(), tested, leftTxAdvice)
}

// leftTxAdvice is what to do about a transaction a crash left open.
const leftTxAdvice = "roll the transaction back in a defer (defer tx.Rollback() right after Begin, which does nothing once Commit succeeded), so that it ends however the function ends, or begin it with BeginTx on the delivery's context, which the crash cancels and database/sql then rolls the transaction back; until then the transaction stays open for the rest of the test binary, which the suite cannot change (it holds no handle on the transaction, and database/sql has no way to end one from outside), and later scenarios that write to that database wait for it or fail on its lock (SQLite's \"database is locked\")"

// sqlWaitKind says what g waits for in its SQL client, where a frame
// tells it.
func sqlWaitKind(g *gInfo) string {
	switch {
	case g.sqlPoolWait():
		return " (for a connection of its database/sql pool)"
	case g.has("modernc.org/sqlite.busyHandler") || g.has("sqlite3.sqliteDefaultBusyCallback") || g.has("modernc.org/sqlite.(*conn).retry"):
		return " (for SQLite's lock, in the driver's busy handler)"
	case g.state == "IO wait":
		return " (for the database's answer to a statement)"
	}
	return ""
}

// ownCrashEnd reports whether goroutine gid is one this run's crash ended.
func (r *recorder) ownCrashEnd(gid uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.odd().crashEnds, func(e crashEnd) bool { return e.gid == gid })
}

// where names the scenario and suite of o's crash.
func (o crashOrigin) where() string {
	return fmt.Sprintf("scenario %s/%s#%d of suite %s", o.fault.Kind, o.fault.Op, o.fault.Occurrence, o.suite)
}

// leftTxNote says, for a Setup that failed, which transactions that
// crashes left open are still open: they may hold what it failed on (a
// SQLite database's write lock: "database is locked"). "" when there are
// none.
func leftTxNote() string {
	txs := leftTransactions()
	if len(txs) == 0 {
		return ""
	}
	t := txs[0]
	more := ""
	if len(txs) > 1 {
		more = fmt.Sprintf(" (and %d more left so)", len(txs)-1)
	}
	return fmt.Sprintf("a database/sql transaction that the crash of delivery %d in %s left open was still open%s: goroutine %d, which began it, was ended by the suite (runtime.Goexit) %s, without a commit or a rollback, and database/sql's goroutine of the transaction (goroutine %d) is still there; it may hold what Setup waited for or failed on (a write lock, a row lock, the pool's connection), where a real crash ends it with the process; %s",
		t.origin.end.delivery, t.origin.where(), more, t.origin.end.gid, t.origin.end.at(), t.g.id, leftTxAdvice)
}

// at says where the crash ended e's goroutine: "at its call of op at
// file:line".
func (e *crashEnd) at() string {
	if e.op == "" {
		return "at its call after the crash"
	}
	return fmt.Sprintf("at its call of %s at %s", e.op, shortSite(siteOf(e.pc)))
}

// restartFailedOnLeftTx says, for a crash scenario whose restart returned
// err, that the error is most likely the suite's own: it reads as a
// database's lock (SQLite's "database is locked", a lock wait timeout)
// and a database/sql transaction that this run's crash left open was
// still open when the restart returned. With a driver that gives up on a
// lock (SQLite's busy_timeout shorter than the stall bound) the restart
// does not stall; it fails, and the scenario read as ok, having tested
// nothing. "" when the evidence is not there.
func (r *recorder) restartFailedOnLeftTx(err error) string {
	if err == nil {
		return ""
	}
	msg := strings.ToLower(err.Error())
	if !strings.Contains(msg, "lock") && !strings.Contains(msg, "busy") {
		return ""
	}
	r.mu.Lock()
	crashed := len(r.odd().crashEnds) > 0
	r.mu.Unlock()
	if !crashed {
		return ""
	}
	for _, t := range leftTransactions() {
		if !r.ownCrashEnd(t.origin.end.gid) {
			continue
		}
		return fmt.Sprintf("the restart could not be tested: it returned an error that reads as a database's lock (%s), and a database/sql transaction that the crash of delivery %d left open was still open: database/sql's goroutine of that transaction (goroutine %d, which ends once it is committed or rolled back) was started by goroutine %d, which began the transaction and which the suite ended (runtime.Goexit) %s, without a commit or a rollback; the transaction most likely holds the lock the restart gave up on, and nothing releases it (a Goexit runs deferred calls only); a real crash ends the process, and the database ends the transaction with its connection, so the scenario is inconclusive; %s",
			errorText(err), t.origin.end.delivery, t.g.id, t.origin.end.gid, t.origin.end.at(), leftTxAdvice)
	}
	return ""
}
