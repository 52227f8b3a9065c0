// Package idem makes a write happen once per piece of work, at the sink:
// the fix that agentidem's fault suite points to when it finds a duplicate
// write.
//
// An agent's tool call can be retried after a lost acknowledgement,
// delivered twice, or run twice in parallel. Checking "was this done?" and
// then doing it leaves a gap between the check and the write in which a
// second call slips through. idem closes the gap the only atomic way: a
// record per idempotency key under a unique constraint, claimed before the
// work and holding the stored result after it, in the style of Stripe's
// idempotency keys (a key table with UNIQUE, the stored response, an
// in-progress lock, params mismatch as a conflict, recovery of keys whose
// holder died).
//
// # Keys
//
// The key is the identity of the work, derived with Key from what makes a
// retry the same work (session, scenario, intent, entity), never a random
// UUID per attempt, which would defeat the point:
//
//	key := idem.Key("refund", orderID)
//
// Key hashes the same canonical JSON the runtime uses for the identity of a
// traced write (runtime.Canonical), so a key and an //agentidem:write
// identity=... annotation agree.
//
// # Using it from a tool
//
//	func refund(ctx context.Context, orderID string, cents int) (Receipt, error) {
//		r, _, err := idem.Do(ctx, store, idem.Key("refund", orderID), cents,
//			func(ctx context.Context) (Receipt, error) {
//				return payments.Refund(ctx, orderID, cents) // the real effect
//			})
//		return r, err
//	}
//
// The first call runs the function and stores its result (as JSON); every
// later call with the key gets the stored result back, replayed, without
// running it. The same key with other params (cents here) is ErrKeyConflict.
// A call that arrives while the first is running waits for it (bounded by its
// context), or fails with ErrInProgress under OnInProgress(Fail). An error
// releases the key so the retry can run, unless it is marked Permanent (a
// declined card), which is stored and replayed. Completed keys expire after
// WithTTL (24h by default); Store.Purge deletes expired ones.
//
// Inside an agentidem run (testkit.TestAgent, runtime.RunTraced), a replay
// calls runtime.MarkReplayed with the call's context: the trace records the
// call as replayed, and the fault suite does not count it as a duplicate.
//
// # Crashes
//
// While the function runs, its holder renews a lease on the key (WithLease,
// 30s by default). When the holder's process dies, the key is abandoned once
// the lease runs out, and the next call takes it over. Whether to run the
// function again then depends on whether the dead holder's effect happened:
// WithRecover asks the sink (for example, "is there a refund for this
// order?") and stores what it finds; without it the function runs again.
//
// Under agentidem's fault suite, the crash_restart scenario's crash is not
// the death of a process: the crashed delivery's code runs on until its
// next traced call, deferred functions too. A key that such a delivery
// holds (runtime.Crashed) is left as a dead holder leaves it, neither
// released nor completed, whatever the function returned: pending, with
// its lease ended, so that the restart takes it over at once as abandoned
// and WithRecover is tested as after a real crash. Setup must reset the
// store with the rest of the world: a key completed by an earlier run or
// test is replayed without the function running, and the suite reports the
// run inconclusive, having tested nothing of that write.
//
// # Backends
//
// A Store runs on a Backend:
//
//   - NewMemoryBackend (and NewMemory): in this process, for tests and
//     single-process agents.
//   - github.com/agentidem/agentidem-go/idem/sqlite: an embedded SQLite file
//     through the pure-Go modernc.org/sqlite driver; WAL, a busy timeout,
//     INSERT ... ON CONFLICT.
//   - github.com/agentidem/agentidem-go/idem/postgres: PostgreSQL through
//     pgx; a UNIQUE key, SELECT ... FOR UPDATE takeover of dead holders,
//     leases on the database's clock.
//
// The database backends are nested modules, so this module does not depend
// on their drivers. Their schema migrations are embedded and applied by an
// explicit Migrate. Package idemtest holds the contract suite that every
// backend passes.
package idem
