// Package idemtest is the contract test suite that every idem.Backend
// passes, plus the load and crash helpers the backends' own tests share,
// and Suite, the verdicts of agentidem's fault suite on agents that use a
// Store on the backend.
//
// A backend's test runs the suite in one line:
//
//	func TestContract(t *testing.T) {
//		idemtest.Run(t, func(t *testing.T) idem.Backend { return openBackend(t) })
//	}
//
// Every subtest uses keys of its own, so open may return one shared
// database for all of them.
package idemtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem"
)

// Run runs the contract suite against the backends that open returns; open
// is called once per subtest.
func Run(t *testing.T, open func(t *testing.T) idem.Backend) {
	t.Helper()
	// The load test runs alone first, so that the timing of the lease tests
	// (which run in parallel after it) is not at the mercy of 64 goroutines.
	t.Run("Concurrent64x50", func(t *testing.T) { testConcurrent64x50(t, open(t)) })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open(t))
		})
	}
}

var cases = []struct {
	name string
	run  func(t *testing.T, b idem.Backend)
}{
	{"FirstRunsThenReplays", testFirstRunsThenReplays},
	{"TypedResult", testTypedResult},
	{"KeysAreIndependent", testKeysAreIndependent},
	{"ParamsMismatchConflicts", testParamsMismatchConflicts},
	{"InProgressFails", testInProgressFails},
	{"InProgressWaits", testInProgressWaits},
	{"WaitBoundedByContext", testWaitBoundedByContext},
	{"FailureReleasesKey", testFailureReleasesKey},
	{"PermanentFailureStored", testPermanentFailureStored},
	{"PanicReleasesKey", testPanicReleasesKey},
	{"CompletedKeyExpires", testCompletedKeyExpires},
	{"PurgeDeletesExpired", testPurgeDeletesExpired},
	{"AbandonedKeyRerunsWithoutRecover", testAbandonedRerun},
	{"AbandonedKeyRecoveredFromSink", testAbandonedRecovered},
	{"AbandonedKeyNotFoundInSinkRuns", testAbandonedNotFound},
	{"AbandonedKeyRecoveredAfterAFailedLookup", testAbandonedRecoveredAfterAFailedLookup},
	{"HeartbeatKeepsLiveHolder", testHeartbeatKeepsHolder},
	{"StaleHolderLosesLease", testStaleHolderLosesLease},
	{"ReleaseByNonHolderIgnored", testReleaseByNonHolder},
	{"ClaimRaceHasOneWinner", testClaimRace},
}

// NewKey returns a key no other test uses, named after the test for
// readable database rows.
func NewKey(t testing.TB) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return t.Name() + "/" + hex.EncodeToString(b[:])
}

// tctx bounds every call of a test, so a backend that never lets a waiter
// through fails the test instead of hanging it.
func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func counter(res string, n *atomic.Int64) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		n.Add(1)
		return []byte(res), nil
	}
}

func testFirstRunsThenReplays(t *testing.T, b idem.Backend) {
	s, key, ctx := idem.New(b), NewKey(t), tctx(t)
	var n atomic.Int64
	r1, rep1, err := s.Do(ctx, key, "p", counter(`"one"`, &n))
	if err != nil || rep1 || string(r1) != `"one"` {
		t.Fatalf("first Do = %q, replayed %v, %v; want \"one\", false, nil", r1, rep1, err)
	}
	r2, rep2, err := s.Do(ctx, key, "p", counter(`"two"`, &n))
	if err != nil || !rep2 || string(r2) != `"one"` {
		t.Fatalf("second Do = %q, replayed %v, %v; want the stored \"one\", true, nil", r2, rep2, err)
	}
	if got := n.Load(); got != 1 {
		t.Fatalf("fn ran %d times, want 1", got)
	}
}

type receipt struct {
	ID     string `json:"id"`
	Amount int    `json:"amount"`
}

func testTypedResult(t *testing.T, b idem.Backend) {
	s, key, ctx := idem.New(b), NewKey(t), tctx(t)
	runs := 0
	fn := func(context.Context) (receipt, error) {
		runs++
		return receipt{ID: fmt.Sprint("r", runs), Amount: 500}, nil
	}
	r1, rep1, err := idem.Do(ctx, s, key, map[string]int{"amount": 500}, fn)
	if err != nil || rep1 {
		t.Fatalf("first Do: replayed %v, %v", rep1, err)
	}
	r2, rep2, err := idem.Do(ctx, s, key, map[string]int{"amount": 500}, fn)
	if err != nil || !rep2 || r2 != r1 || r1 != (receipt{"r1", 500}) {
		t.Fatalf("replay = %+v, %v, %v; want %+v, true, nil", r2, rep2, err, r1)
	}
	if runs != 1 {
		t.Fatalf("fn ran %d times, want 1", runs)
	}
}

func testKeysAreIndependent(t *testing.T, b idem.Backend) {
	s, ctx := idem.New(b), tctx(t)
	var n atomic.Int64
	k1, k2 := NewKey(t), NewKey(t)
	if _, rep, err := s.Do(ctx, k1, nil, counter(`1`, &n)); err != nil || rep {
		t.Fatalf("Do k1: replayed %v, %v", rep, err)
	}
	if r, rep, err := s.Do(ctx, k2, nil, counter(`2`, &n)); err != nil || rep || string(r) != "2" {
		t.Fatalf("Do k2 = %q, replayed %v, %v; want a fresh run", r, rep, err)
	}
	if n.Load() != 2 {
		t.Fatalf("fn ran %d times over two keys, want 2", n.Load())
	}
}

func testParamsMismatchConflicts(t *testing.T, b idem.Backend) {
	s, key, ctx := idem.New(b), NewKey(t), tctx(t)
	var n atomic.Int64
	if _, _, err := s.Do(ctx, key, map[string]int{"cents": 500}, counter(`1`, &n)); err != nil {
		t.Fatal(err)
	}
	_, rep, err := s.Do(ctx, key, map[string]int{"cents": 900}, counter(`2`, &n))
	if !errors.Is(err, idem.ErrKeyConflict) || rep {
		t.Fatalf("Do with other params: replayed %v, err %v; want ErrKeyConflict", rep, err)
	}
	if n.Load() != 1 {
		t.Fatalf("fn ran %d times, want 1", n.Load())
	}
}

// hold starts a call on key whose fn blocks until the returned release is
// called; it returns once fn is running.
func hold(t *testing.T, s *idem.Store, key string, res string) (release func(), wait func() ([]byte, error)) {
	t.Helper()
	running, unblock := make(chan struct{}), make(chan struct{})
	type out struct {
		r   []byte
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, _, err := s.Do(tctx(t), key, "p", func(context.Context) ([]byte, error) {
			close(running)
			<-unblock
			return []byte(res), nil
		})
		done <- out{r, err}
	}()
	select {
	case <-running:
	case o := <-done:
		t.Fatalf("holder returned before running fn: %q, %v", o.r, o.err)
	}
	var once sync.Once
	release = func() { once.Do(func() { close(unblock) }) }
	t.Cleanup(release)
	return release, func() ([]byte, error) { o := <-done; return o.r, o.err }
}

func testInProgressFails(t *testing.T, b idem.Backend) {
	s, key := idem.New(b), NewKey(t)
	release, wait := hold(t, s, key, `"held"`)
	var n atomic.Int64
	_, rep, err := s.Do(tctx(t), key, "p", counter(`"other"`, &n), idem.OnInProgress(idem.Fail))
	if !errors.Is(err, idem.ErrInProgress) || errors.Is(err, context.DeadlineExceeded) || rep || n.Load() != 0 {
		t.Fatalf("Do while held: replayed %v, err %v, fn runs %d; want ErrInProgress at once (no wait) and no run", rep, err, n.Load())
	}
	release()
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
}

func testInProgressWaits(t *testing.T, b idem.Backend) {
	s, key := idem.New(b, idem.WithPollInterval(5*time.Millisecond)), NewKey(t)
	release, wait := hold(t, s, key, `"held"`)
	var n atomic.Int64
	type out struct {
		r   []byte
		rep bool
		err error
	}
	got := make(chan out, 1)
	go func() {
		r, rep, err := s.Do(tctx(t), key, "p", counter(`"other"`, &n))
		got <- out{r, rep, err}
	}()
	select {
	case o := <-got:
		t.Fatalf("waiter returned %q, %v, %v while the holder was still running", o.r, o.rep, o.err)
	case <-time.After(30 * time.Millisecond):
	}
	release()
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
	o := <-got
	if o.err != nil || !o.rep || string(o.r) != `"held"` || n.Load() != 0 {
		t.Fatalf("waiter = %q, replayed %v, %v, its fn ran %d times; want the holder's \"held\", replayed, no run", o.r, o.rep, o.err, n.Load())
	}
}

func testWaitBoundedByContext(t *testing.T, b idem.Backend) {
	s, key := idem.New(b, idem.WithPollInterval(5*time.Millisecond)), NewKey(t)
	release, wait := hold(t, s, key, `"held"`)
	ctx, cancel := context.WithTimeout(tctx(t), 40*time.Millisecond)
	defer cancel()
	var n atomic.Int64
	t0 := time.Now()
	_, _, err := s.Do(ctx, key, "p", counter(`"other"`, &n))
	if !errors.Is(err, idem.ErrInProgress) || !errors.Is(err, context.DeadlineExceeded) || n.Load() != 0 {
		t.Fatalf("Do with a 40ms deadline while held: err %v, fn runs %d; want ErrInProgress and DeadlineExceeded", err, n.Load())
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("wait took %v, not bounded by the context", d)
	}
	release()
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
}

var errFlaky = errors.New("payment gateway timeout")

func testFailureReleasesKey(t *testing.T, b idem.Backend) {
	s, key, ctx := idem.New(b), NewKey(t), tctx(t)
	runs := 0
	fn := func(context.Context) ([]byte, error) {
		runs++
		if runs == 1 {
			return nil, errFlaky
		}
		return []byte(`"ok"`), nil
	}
	if _, rep, err := s.Do(ctx, key, "p", fn); !errors.Is(err, errFlaky) || rep {
		t.Fatalf("failing Do: replayed %v, err %v; want the fn's error", rep, err)
	}
	r, rep, err := s.Do(ctx, key, "p", fn)
	if err != nil || rep || string(r) != `"ok"` || runs != 2 {
		t.Fatalf("retry = %q, replayed %v, %v after %d runs; want a fresh run", r, rep, err, runs)
	}
}

func testPermanentFailureStored(t *testing.T, b idem.Backend) {
	s, key, ctx := idem.New(b), NewKey(t), tctx(t)
	runs := 0
	fn := func(context.Context) ([]byte, error) {
		runs++
		return nil, idem.Permanent(errors.New("card declined"))
	}
	if _, rep, err := s.Do(ctx, key, "p", fn); !errors.Is(err, idem.ErrPermanent) || rep {
		t.Fatalf("first Do: replayed %v, err %v; want the permanent error", rep, err)
	}
	_, rep, err := s.Do(ctx, key, "p", fn)
	var stored *idem.StoredError
	if !errors.As(err, &stored) || stored.Message != "card declined" || !errors.Is(err, idem.ErrPermanent) || !rep {
		t.Fatalf("second Do: replayed %v, err %#v; want the stored \"card declined\" replayed", rep, err)
	}
	if runs != 1 {
		t.Fatalf("fn ran %d times, want 1", runs)
	}
}

func testPanicReleasesKey(t *testing.T, b idem.Backend) {
	s, key, ctx := idem.New(b), NewKey(t), tctx(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic in fn did not reach the caller")
			}
		}()
		_, _, _ = s.Do(ctx, key, "p", func(context.Context) ([]byte, error) { panic("boom") })
	}()
	var n atomic.Int64
	r, rep, err := s.Do(ctx, key, "p", counter(`"ok"`, &n), idem.OnInProgress(idem.Fail))
	if err != nil || rep || string(r) != `"ok"` {
		t.Fatalf("Do after a panic = %q, replayed %v, %v; want a fresh run", r, rep, err)
	}
}

func testCompletedKeyExpires(t *testing.T, b idem.Backend) {
	const ttl = 250 * time.Millisecond
	s, key, ctx := idem.New(b, idem.WithTTL(ttl)), NewKey(t), tctx(t)
	var n atomic.Int64
	if _, _, err := s.Do(ctx, key, "p", counter(`1`, &n)); err != nil {
		t.Fatal(err)
	}
	if _, rep, err := s.Do(ctx, key, "p", counter(`2`, &n)); err != nil || !rep {
		t.Fatalf("Do within the TTL: replayed %v, %v; want a replay", rep, err)
	}
	time.Sleep(ttl + 50*time.Millisecond)
	r, rep, err := s.Do(ctx, key, "other params are fine once expired", counter(`3`, &n))
	if err != nil || rep || string(r) != "3" || n.Load() != 2 {
		t.Fatalf("Do past the TTL = %q, replayed %v, %v, runs %d; want a fresh run", r, rep, err, n.Load())
	}
}

func testPurgeDeletesExpired(t *testing.T, b idem.Backend) {
	ctx := tctx(t)
	short, long := idem.New(b, idem.WithTTL(30*time.Millisecond)), idem.New(b)
	var n atomic.Int64
	k1, k2, keep := NewKey(t), NewKey(t), NewKey(t)
	for _, k := range []string{k1, k2} {
		if _, _, err := short.Do(ctx, k, nil, counter(`1`, &n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := long.Do(ctx, keep, nil, counter(`1`, &n)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	got, err := long.Purge(ctx)
	if err != nil || got < 2 {
		t.Fatalf("Purge = %d, %v; want at least the 2 expired keys", got, err)
	}
	if _, rep, err := long.Do(ctx, keep, nil, counter(`2`, &n)); err != nil || !rep {
		t.Fatalf("unexpired key after Purge: replayed %v, %v; want it kept", rep, err)
	}
}

// abandon leaves key pending under a holder that will never come back, with
// a lease that runs out after lease.
func abandon(t *testing.T, b idem.Backend, key string, lease time.Duration) {
	t.Helper()
	rec, err := b.Claim(tctx(t), key, idem.Claim{Token: "dead-holder", Params: paramsOf(t, "p"), Lease: lease})
	if err != nil || !rec.Owned {
		t.Fatalf("Claim by the soon-dead holder = %+v, %v", rec, err)
	}
}

func paramsOf(t *testing.T, p any) string {
	fp, err := idem.Fingerprint(p)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func testAbandonedRerun(t *testing.T, b idem.Backend) {
	key := NewKey(t)
	abandon(t, b, key, 300*time.Millisecond)
	s := idem.New(b, idem.WithPollInterval(5*time.Millisecond))
	var n atomic.Int64
	if _, _, err := s.Do(tctx(t), key, "p", counter(`1`, &n), idem.OnInProgress(idem.Fail)); !errors.Is(err, idem.ErrInProgress) {
		t.Fatalf("Do while the dead holder's lease is live: %v; want ErrInProgress", err)
	}
	r, rep, err := s.Do(tctx(t), key, "p", counter(`"rerun"`, &n))
	if err != nil || rep || string(r) != `"rerun"` || n.Load() != 1 {
		t.Fatalf("Do after the lease ran out = %q, replayed %v, %v, runs %d; want the key taken over and fn run", r, rep, err, n.Load())
	}
}

func testAbandonedRecovered(t *testing.T, b idem.Backend) {
	key := NewKey(t)
	abandon(t, b, key, 40*time.Millisecond)
	var asked atomic.Int64
	s := idem.New(b, idem.WithPollInterval(5*time.Millisecond), idem.WithRecover(func(ctx context.Context, k string) ([]byte, bool, error) {
		asked.Add(1)
		if k != key {
			return nil, false, fmt.Errorf("recover asked about %q, want %q", k, key)
		}
		return []byte(`"found in sink"`), true, nil
	}))
	var n atomic.Int64
	r, rep, err := s.Do(tctx(t), key, "p", counter(`"rerun"`, &n))
	if err != nil || !rep || string(r) != `"found in sink"` || n.Load() != 0 || asked.Load() != 1 {
		t.Fatalf("Do on an abandoned key = %q, replayed %v, %v, runs %d, recover asked %d; want the sink's result, replayed, no run", r, rep, err, n.Load(), asked.Load())
	}
	r, rep, err = s.Do(tctx(t), key, "p", counter(`"rerun"`, &n))
	if err != nil || !rep || string(r) != `"found in sink"` || asked.Load() != 1 {
		t.Fatalf("next Do = %q, replayed %v, %v; want the recovered result stored", r, rep, err)
	}
}

func testAbandonedNotFound(t *testing.T, b idem.Backend) {
	key := NewKey(t)
	abandon(t, b, key, 40*time.Millisecond)
	s := idem.New(b, idem.WithPollInterval(5*time.Millisecond), idem.WithRecover(func(context.Context, string) ([]byte, bool, error) {
		return nil, false, nil
	}))
	var n atomic.Int64
	r, rep, err := s.Do(tctx(t), key, "p", counter(`"ran"`, &n))
	if err != nil || rep || string(r) != `"ran"` || n.Load() != 1 {
		t.Fatalf("Do on an abandoned key with no effect in the sink = %q, replayed %v, %v, runs %d; want fn run once", r, rep, err, n.Load())
	}
}

// A recovery that fails (the sink's lookup times out, or panics) leaves
// the key abandoned: the next call asks the sink again. Before, the key
// was released, the next call claimed it afresh and ran fn without asking,
// a second effect where the dead holder's had landed (a red team's).
func testAbandonedRecoveredAfterAFailedLookup(t *testing.T, b idem.Backend) {
	for _, fail := range []string{"error", "panic"} {
		key := NewKey(t)
		abandon(t, b, key, 40*time.Millisecond)
		var asked atomic.Int64
		s := idem.New(b, idem.WithPollInterval(5*time.Millisecond), idem.WithRecover(func(ctx context.Context, k string) ([]byte, bool, error) {
			if asked.Add(1) == 1 {
				if fail == "panic" {
					panic("sink client crashed")
				}
				return nil, false, errors.New("sink lookup timed out")
			}
			return []byte(`"found in sink"`), true, nil
		}))
		var n atomic.Int64
		func() {
			defer func() {
				if v := recover(); v != nil && fail != "panic" {
					panic(v)
				}
			}()
			if _, _, err := s.Do(tctx(t), key, "p", counter(`"rerun"`, &n)); err == nil {
				t.Fatalf("%s: Do whose recovery failed: no error", fail)
			}
		}()
		r, rep, err := s.Do(tctx(t), key, "p", counter(`"rerun"`, &n))
		if err != nil || !rep || string(r) != `"found in sink"` || n.Load() != 0 || asked.Load() != 2 {
			t.Fatalf("%s: Do after a failed recovery = %q, replayed %v, %v, runs %d, recover asked %d; want the sink asked again and its result, no run", fail, r, rep, err, n.Load(), asked.Load())
		}
	}
}

func testHeartbeatKeepsHolder(t *testing.T, b idem.Backend) {
	const lease = 300 * time.Millisecond
	key := NewKey(t)
	s := idem.New(b, idem.WithLease(lease), idem.WithPollInterval(5*time.Millisecond))
	running, finish := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, _, err := s.Do(tctx(t), key, "p", func(ctx context.Context) ([]byte, error) {
			close(running)
			select { // works until told; the heartbeat must keep the key
			case <-finish:
				return []byte(`"slow"`), nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		})
		done <- err
	}()
	select {
	case <-running:
	case err := <-done:
		t.Fatalf("holder returned before running fn: %v", err)
	}
	var n atomic.Int64
	tries := 0
	for deadline := time.Now().Add(4 * lease); time.Now().Before(deadline); tries++ {
		if _, _, err := s.Do(tctx(t), key, "p", counter(`"thief"`, &n), idem.OnInProgress(idem.Fail)); !errors.Is(err, idem.ErrInProgress) {
			close(finish)
			t.Fatalf("Do while a live holder works past its first lease (try %d): %v; want ErrInProgress", tries+1, err)
		}
		time.Sleep(lease / 8)
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatalf("live holder: %v", err)
	}
	if n.Load() != 0 {
		t.Fatalf("the key was taken from a live holder: fn ran %d more times", n.Load())
	}
}

func testStaleHolderLosesLease(t *testing.T, b idem.Backend) {
	ctx, key := tctx(t), NewKey(t)
	p := paramsOf(t, "p")
	if rec, err := b.Claim(ctx, key, idem.Claim{Token: "stale", Params: p, Lease: 30 * time.Millisecond}); err != nil || !rec.Owned {
		t.Fatalf("Claim = %+v, %v", rec, err)
	}
	time.Sleep(50 * time.Millisecond)
	rec, err := b.Claim(ctx, key, idem.Claim{Token: "new", Params: p, Lease: time.Minute})
	if err != nil || !rec.Owned || !rec.Abandoned {
		t.Fatalf("Claim after the lease ran out = %+v, %v; want Owned and Abandoned", rec, err)
	}
	if err := b.Extend(ctx, key, "stale", time.Minute); !errors.Is(err, idem.ErrLeaseLost) {
		t.Fatalf("Extend by the stale holder: %v; want ErrLeaseLost", err)
	}
	if err := b.Complete(ctx, key, "stale", idem.Outcome{Result: []byte(`1`)}, time.Minute); !errors.Is(err, idem.ErrLeaseLost) {
		t.Fatalf("Complete by the stale holder: %v; want ErrLeaseLost", err)
	}
	if err := b.Complete(ctx, key, "new", idem.Outcome{Result: []byte(`2`)}, time.Minute); err != nil {
		t.Fatalf("Complete by the new holder: %v", err)
	}
	rec, err = b.Claim(ctx, key, idem.Claim{Token: "late", Params: p, Lease: time.Minute})
	if err != nil || rec.Owned || rec.State != idem.Done || string(rec.Result) != "2" {
		t.Fatalf("Claim after completion = %+v, %v; want Done with the new holder's result", rec, err)
	}
}

func testReleaseByNonHolder(t *testing.T, b idem.Backend) {
	ctx, key := tctx(t), NewKey(t)
	p := paramsOf(t, "p")
	if rec, err := b.Claim(ctx, key, idem.Claim{Token: "holder", Params: p, Lease: time.Minute}); err != nil || !rec.Owned {
		t.Fatalf("Claim = %+v, %v", rec, err)
	}
	if err := b.Release(ctx, key, "someone-else"); err != nil {
		t.Fatalf("Release by a non-holder: %v", err)
	}
	rec, err := b.Claim(ctx, key, idem.Claim{Token: "other", Params: p, Lease: time.Minute})
	if err != nil || rec.Owned || rec.State != idem.Pending {
		t.Fatalf("Claim after a non-holder's Release = %+v, %v; want still Pending, not Owned", rec, err)
	}
	if err := b.Release(ctx, key, "holder"); err != nil {
		t.Fatal(err)
	}
	if rec, err := b.Claim(ctx, key, idem.Claim{Token: "other", Params: p, Lease: time.Minute}); err != nil || !rec.Owned {
		t.Fatalf("Claim after the holder's Release = %+v, %v; want Owned", rec, err)
	}
}

// testClaimRace races claims of fresh keys (and takeovers of abandoned
// ones) straight at the backend, many rounds, so that every path of Claim,
// not only its fast path, meets a concurrent claimer.
func testClaimRace(t *testing.T, b idem.Backend) {
	const rounds, racers = 100, 8
	p := paramsOf(t, "p")
	ctx := tctx(t)
	lost := 0
	for round := 0; round < rounds; round++ {
		key := NewKey(t)
		if round%2 == 1 { // odd rounds race to take over an abandoned key
			if rec, err := b.Claim(ctx, key, idem.Claim{Token: "dead", Params: p, Lease: time.Millisecond}); err != nil || !rec.Owned {
				t.Fatalf("Claim = %+v, %v", rec, err)
			}
			time.Sleep(3 * time.Millisecond)
		}
		var owned atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				rec, err := b.Claim(ctx, key, idem.Claim{Token: fmt.Sprint("racer", i), Params: p, Lease: time.Minute})
				if err != nil {
					t.Errorf("Claim: %v", err)
				}
				if rec.Owned {
					owned.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		if owned.Load() != 1 {
			lost++
			t.Errorf("round %d: %d racers own the key, want exactly 1", round, owned.Load())
		}
	}
	t.Logf("%d rounds of %d racing claims: %d rounds without exactly one owner", rounds, racers, lost)
}

// Goroutines, Attempts and Work are the load of the concurrency test: 64 ×
// 50 = 3,200 calls on one key, each execution of the work taking 20ms (a
// quick API call), which leaves a check-then-insert's gap open under any
// scheduling.
const (
	Goroutines = 64
	Attempts   = 50
	Work       = 20 * time.Millisecond
)

func testConcurrent64x50(t *testing.T, b idem.Backend) {
	s, key := idem.New(b, idem.WithPollInterval(2*time.Millisecond)), NewKey(t)
	st := Hammer(t, Goroutines, Attempts, Work, func(ctx context.Context, fn func(context.Context) ([]byte, error)) ([]byte, bool, error) {
		return s.Do(ctx, key, "p", fn)
	})
	t.Logf("idem.Do, %d goroutines x %d attempts on one key: %v", Goroutines, Attempts, st)
	CheckExactlyOnce(t, st)
}

// CheckExactlyOnce fails t unless st shows exactly one execution and every
// other call replaying the identical result.
func CheckExactlyOnce(t testing.TB, st Stats) {
	t.Helper()
	if st.Errors != 0 {
		t.Fatalf("%d calls failed, first: %v", st.Errors, st.FirstErr)
	}
	if st.Executions != 1 || st.Replays != st.Calls-1 || st.Identical != st.Calls {
		t.Fatalf("want executions=1 replays=%d identical=%d, got %v", st.Calls-1, st.Calls, st)
	}
}
