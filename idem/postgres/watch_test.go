package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/idem/idemtest"
	"github.com/agentidem/agentidem-go/idem/postgres"
)

// closedWithin reports whether ch is closed before d passes.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestWatchWakesOnCompleteAndRelease: the Backend is an idem.Watcher fed by
// LISTEN/NOTIFY (issue 12.14): a waiter's channel is closed when the key's
// holder completes or releases it, from this backend or another pool, and
// not for another key.
func TestWatchWakesOnCompleteAndRelease(t *testing.T) {
	b, other := open(t), open(t)
	var w idem.Watcher = b // compile-time: the backend watches
	ctx := context.Background()
	claim := func(key, token string) {
		t.Helper()
		rec, err := other.Claim(ctx, key, idem.Claim{Token: token, Params: "p", Lease: time.Minute})
		if err != nil || !rec.Owned {
			t.Fatalf("claim %s: %+v, %v", key, rec, err)
		}
	}
	done, released, unrelated := idemtest.NewKey(t)+"/done", idemtest.NewKey(t)+"/released", idemtest.NewKey(t)+"/unrelated"
	for _, k := range []string{done, released, unrelated} {
		claim(k, "t-"+k)
	}
	chUnrelated, stopUnrelated := w.Watch(unrelated)
	defer stopUnrelated()
	chDone, stopDone := w.Watch(done)
	defer stopDone()
	chReleased, stopReleased := w.Watch(released)
	defer stopReleased()

	if err := other.Complete(ctx, done, "t-"+done, idem.Outcome{Result: []byte("r")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(chDone, 10*time.Second) {
		t.Fatal("Complete by another pool did not wake the waiter (no notification in 10s)")
	}
	if err := other.Release(ctx, released, "t-"+released); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(chReleased, 10*time.Second) {
		t.Fatal("Release did not wake the waiter")
	}
	// Notifications arrive in order: both above were handled, the
	// unrelated key's waiter must still wait.
	if isClosed(chUnrelated) {
		t.Fatal("a waiter was woken by another key's change")
	}
	// Extending a lease is no change a waiter waits for.
	if err := other.Extend(ctx, unrelated, "t-"+unrelated, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := other.Release(ctx, unrelated, "t-"+unrelated); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(chUnrelated, 10*time.Second) {
		t.Fatal("Release of the last key did not wake its waiter")
	}
}

// TestWatchSurvivesALostConnection: when the listening connection dies,
// every waiter is woken (it looks again, so nothing sent meanwhile is
// missed), and a Watch after the retry pause listens again.
func TestWatchSurvivesALostConnection(t *testing.T) {
	app := "idemwatch" + strconv.FormatInt(time.Now().UnixNano(), 36)
	sep := "?"
	if strings.Contains(dsn(t), "?") {
		sep = "&"
	}
	b, err := postgres.Open(context.Background(), dsn(t)+sep+"application_name="+app)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	key := idemtest.NewKey(t)
	if rec, err := b.Claim(ctx, key, idem.Claim{Token: "t", Params: "p", Lease: time.Minute}); err != nil || !rec.Owned {
		t.Fatalf("claim: %+v, %v", rec, err)
	}
	ch, stop := b.Watch(key)
	defer stop()
	tag, err := b.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("terminating the listening connection: %v, %d rows", err, tag.RowsAffected())
	}
	if !closedWithin(ch, 10*time.Second) {
		t.Fatal("the waiters of a lost listening connection were not woken")
	}
	time.Sleep(1100 * time.Millisecond) // the retry pause
	ch2, stop2 := b.Watch(key)
	defer stop2()
	if err := b.Complete(ctx, key, "t", idem.Outcome{Result: []byte("r")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(ch2, 10*time.Second) {
		t.Fatal("after the lost connection, Watch did not listen again: Complete did not wake the waiter")
	}
}
