package testkit_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// tenantWorld is a world whose Setup names it afresh for each scenario (a
// new tenant, as integration tests sharing one database isolate their
// scenarios), and whose tools' identities hold the tenant. The statuses,
// which State returns, leave the tenant out.
type tenantWorld struct {
	mu     sync.Mutex
	n      int
	tenant string
	status map[string]string
	mails  []string
}

var (
	tenantStatusOp = &runtime.Op{Name: "set_status", Kind: runtime.KindWrite, Params: []string{"tenant", "doc", "status"}}
	tenantMailOp   = &runtime.Op{Name: "send_mail", Kind: runtime.KindWrite, Params: []string{"tenant", "key", "text"}}
)

func (w *tenantWorld) reset(context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	w.tenant = fmt.Sprintf("t-%d", w.n)
	w.status, w.mails = map[string]string{}, nil
	return nil
}

func (w *tenantWorld) state() any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return map[string]any{"status": maps.Clone(w.status), "mails": append([]string(nil), w.mails...)}
}

func (w *tenantWorld) name() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tenant
}

// setStatus sets a document's status: a repeat changes nothing.
func (w *tenantWorld) setStatus(ctx context.Context, tenant, doc, status string) error {
	return tracedCall(ctx, tenantStatusOp, []any{tenant, doc, status}, []any{tenant, doc}, nil, func(context.Context) error {
		time.Sleep(time.Millisecond) // the round trip to the service: two deliveries at once overlap
		w.mu.Lock()
		defer w.mu.Unlock()
		w.status[doc] = status
		return nil
	})
}

// sendMail sends a mail, every time it is called: its identity is key.
func (w *tenantWorld) sendMail(ctx context.Context, tenant, key, text string) error {
	return tracedCall(ctx, tenantMailOp, []any{tenant, key, text}, []any{tenant, key}, nil, func(context.Context) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.mails = append(w.mails, text)
		return nil
	})
}

func runFresh(t *testing.T, agent func(context.Context, *tenantWorld) error, opts ...testkit.Option) *runtime.Report {
	t.Helper()
	w := &tenantWorld{}
	opts = append(opts, testkit.NoSummary(), testkit.Setup(w.reset), testkit.State(w.state))
	return testkit.Run(t, func(ctx context.Context) error { return agent(ctx, w) }, opts...)
}

// codesIn returns the error findings of a report, one "scenario code" per
// line, that have one of the codes given.
func codesIn(rep *runtime.Report, codes ...string) string {
	var out []string
	for _, l := range strings.Split(verdictOf(rep), "\n") {
		for _, c := range codes {
			if strings.HasSuffix(l, " "+c) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

// A world named afresh for each scenario (a tenant per Setup) gives the
// scenario identities the baseline never had. ExactlyOnce looked the
// baseline's writes up by identity and found each of them dropped: a
// correct agent got missing_write in every redelivery scenario, 20 of 20
// runs (red-team). The baseline is now read in the scenario's names, learned
// from the calls made before the fault (runtime/rename.go); an agent that
// does drop the write is still caught.
func TestExactlyOnceInAWorldNamedAfreshPerScenario(t *testing.T) {
	approve := func(ctx context.Context, w *tenantWorld) error {
		return w.setStatus(ctx, w.name(), "doc-1", "approved")
	}
	if v := codesIn(runFresh(t, approve, testkit.ExactlyOnce()), runtime.CodeMissingWrite, runtime.CodeIdentityUnstable); v != "" {
		t.Errorf("a correct agent, its world named afresh per scenario:\n%s", v)
	}
	dropping := func(ctx context.Context, w *tenantWorld) error {
		_ = w.setStatus(ctx, w.name(), "doc-1", "approved") // the error is swallowed
		return nil
	}
	got := codesIn(runFresh(t, dropping, testkit.ExactlyOnce()), runtime.CodeMissingWrite)
	for _, sc := range []string{"before_operation_failure/set_status#1", "lost_request/set_status#1"} {
		if !strings.Contains(got, sc+" "+runtime.CodeMissingWrite) {
			t.Errorf("the agent that swallows the error: no missing_write in %s; got:\n%s", sc, got)
		}
	}
}

// A best-effort sweep over three documents, in a world named afresh per
// scenario, was a retry with a fresh key to identity_unstable (the next
// document's identity was not the baseline's): 8 scenarios, 20 of 20 runs.
// A sweep that does retry with a fresh key per attempt is still caught.
func TestSweepInAWorldNamedAfreshPerScenario(t *testing.T) {
	sweep := func(ctx context.Context, w *tenantWorld) error {
		tenant := w.name()
		for _, d := range []string{"doc-1", "doc-2", "doc-3"} {
			_ = w.setStatus(ctx, tenant, d, "archived") // skipped on error, picked up next time
		}
		return nil
	}
	if v := codesIn(runFresh(t, sweep), runtime.CodeIdentityUnstable, runtime.CodeDuplicateWrite); v != "" {
		t.Errorf("a correct sweep, its world named afresh per scenario:\n%s", v)
	}
	var attempts atomic.Int32 // two deliveries at once share it
	freshKey := func(ctx context.Context, w *tenantWorld) error {
		tenant := w.name()
		var err error
		for range 3 {
			// A key per attempt: the sink sends each as new.
			if err = w.sendMail(ctx, tenant, fmt.Sprintf("k-%d", attempts.Add(1)), "your order shipped"); err == nil {
				return nil
			}
		}
		return err
	}
	got := codesIn(runFresh(t, freshKey), runtime.CodeIdentityUnstable)
	if !strings.Contains(got, "lost_acknowledgement/send_mail#1 "+runtime.CodeIdentityUnstable) {
		t.Errorf("a retry with a fresh key per attempt, in a world named afresh: no identity_unstable in lost_acknowledgement; got:\n%s", got)
	}
}

// A correct "set" delivered twice at once, in a world named afresh per
// scenario: where the two calls overlapped, the suite looked the change
// one execution makes up in the baseline by identity, found none, and
// counted both (duplicate_write on 7 of 60 runs). Ten runs, none may find
// one; a mail sent on each delivery is still caught on every run.
func TestConcurrentDeliveryInAWorldNamedAfreshPerScenario(t *testing.T) {
	set := func(ctx context.Context, w *tenantWorld) error {
		return w.setStatus(ctx, w.name(), "doc-1", "approved")
	}
	mail := func(ctx context.Context, w *tenantWorld) error {
		return w.sendMail(ctx, w.name(), "shipped-doc-1", "your order shipped")
	}
	for i := range 10 {
		if v := verdictOf(runFresh(t, set)); v != "" {
			t.Errorf("run %d, a correct set delivered twice:\n%s", i+1, v)
		}
		got := codesIn(runFresh(t, mail), runtime.CodeDuplicateWrite)
		if !strings.Contains(got, "duplicate_delivery/concurrent "+runtime.CodeDuplicateWrite) {
			t.Errorf("run %d, a mail sent on each delivery: no duplicate_write in duplicate_delivery/concurrent; got:\n%s", i+1, got)
		}
	}
}

var tenantNotifyOp = &runtime.Op{Name: "notify", Kind: runtime.KindWrite, Params: []string{"tenant", "key", "text"}}

// notify sends a notification once per key: the sink deduplicates.
func (w *tenantWorld) notify(ctx context.Context, tenant, key, text string) error {
	return tracedCall(ctx, tenantNotifyOp, []any{tenant, key, text}, []any{tenant, key}, nil, func(context.Context) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, m := range w.mails {
			if strings.HasPrefix(m, key+": ") {
				return nil
			}
		}
		w.mails = append(w.mails, key+": "+text)
		return nil
	})
}

// An agent that makes its idempotency key once per invocation (a uuid
// where the message is handled) and reuses it for its retries: the sink
// deduplicates the retries, but a redelivered message gets a new key and a
// second notification. Each delivery's calls had one identity each, so no
// repeat was seen and the suite passed, 20 of 20 runs (red-team). The key
// derived from the message passes.
func TestKeyMadeAfreshPerDeliveryIsCaught(t *testing.T) {
	var made int
	var mu sync.Mutex
	perDelivery := func(ctx context.Context, w *tenantWorld) error {
		mu.Lock()
		made++
		key := fmt.Sprintf("req-%d", made) // uuid.NewString() in real life
		mu.Unlock()
		var err error
		for range 3 {
			if err = w.notify(ctx, w.name(), key, "your refund is on its way"); err == nil {
				return nil
			}
		}
		return err
	}
	got := codesIn(runFresh(t, perDelivery), runtime.CodeIdentityUnstable, runtime.CodeDuplicateWrite)
	for _, sc := range []string{"crash_restart/notify#1", "duplicate_delivery/sequential", "duplicate_delivery/concurrent"} {
		if !strings.Contains(got, sc+" "+runtime.CodeIdentityUnstable) {
			t.Errorf("a key made afresh per delivery: no identity_unstable in %s; got:\n%s", sc, got)
		}
	}
	fromMessage := func(ctx context.Context, w *tenantWorld) error {
		var err error
		for range 3 {
			if err = w.notify(ctx, w.name(), "msg-42", "your refund is on its way"); err == nil {
				return nil
			}
		}
		return err
	}
	if v := verdictOf(runFresh(t, fromMessage)); v != "" {
		t.Errorf("the key derived from the message:\n%s", v)
	}
}

var orderStatusOp = &runtime.Op{Name: "set_order_status", Kind: runtime.KindWrite, Params: []string{"order", "status"}}

// Two writes of one op under one declared identity are one effect done
// twice, whatever else they carry: setting an order's status to
// "processing", then "shipped", with identity=order, is a duplicate_write
// by the declaration. The finding says which arguments differ, and what
// the identity must then say (red-team: the message read as if the agent
// had repeated itself).
func TestDuplicateOfDifferentArgumentsSaysHowToDeclare(t *testing.T) {
	status := map[string]string{}
	var mu sync.Mutex
	set := func(ctx context.Context, order, s string) error {
		return tracedCall(ctx, orderStatusOp, []any{order, s}, []any{order}, nil, func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			status[order] = s
			return nil
		})
	}
	rep := testkit.Run(t, func(ctx context.Context) error {
		if err := set(ctx, "o-1", "processing"); err != nil {
			return err
		}
		return set(ctx, "o-1", "shipped")
	}, testkit.NoSummary(),
		testkit.Setup(func(context.Context) error { mu.Lock(); clear(status); mu.Unlock(); return nil }),
		testkit.State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(status) }))
	found := false
	for _, f := range rep.Baseline.Findings {
		if f.Code == runtime.CodeDuplicateWrite {
			found = true
			if want := `the calls' arguments differ (status: "processing", "shipped")`; !strings.Contains(f.Message, want) {
				t.Errorf("the duplicate does not say %q: %s", want, f.Message)
			}
			if !strings.Contains(f.Message, "add what tells them apart to the op's identity= (status)") {
				t.Errorf("the duplicate does not say what to declare: %s", f.Message)
			}
		}
	}
	if !found {
		t.Fatalf("no duplicate_write in the baseline; findings: %v", rep.Baseline.Findings)
	}
}

// contactTable is a table whose rows the sink numbers with a counter that
// Setup does not reset (SQLite's AUTOINCREMENT, a PostgreSQL sequence
// after DELETE): the baseline's row is 1, a later scenario's 9. State
// returns the rows as Go structs, whose ID encodes as "ID".
type contactTable struct {
	mu     sync.Mutex
	next   int
	rows   []contactRow
	unique bool // the sink has a unique index on the email: saving is an upsert
}

type contactRow struct {
	ID    int
	Email string
	Name  string
}

var saveContactOp = &runtime.Op{Name: "save_contact", Kind: runtime.KindWrite, Params: []string{"email", "name"}}

func (c *contactTable) reset(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows = nil // the counter goes on
	return nil
}

func (c *contactTable) state() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]contactRow(nil), c.rows...)
}

func (c *contactTable) save(ctx context.Context, email, name string) error {
	return tracedCall(ctx, saveContactOp, []any{email, name}, []any{email}, nil, func(context.Context) error {
		time.Sleep(time.Millisecond) // the round trip: two deliveries at once overlap
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.unique {
			for i := range c.rows {
				if c.rows[i].Email == email {
					c.rows[i].Name = name // ON CONFLICT DO UPDATE
					return nil
				}
			}
		}
		c.next++
		c.rows = append(c.rows, contactRow{ID: c.next, Email: email, Name: name})
		return nil
	})
}

// An upsert delivered twice at once leaves the one row one delivery left,
// under the number the sink's counter reached, not the baseline's: a
// correct agent got duplicate_write in duplicate_delivery/concurrent
// ("state[0].ID: 1 → 10"), 10 of 10 runs (red team, SQLite with
// AUTOINCREMENT). Rows scanned into a Go struct name themselves by ID,
// which was not taken for a row's name (only "id" was), and a cluster that
// began where the baseline's call began compared ends without leaving the
// sink's names out. A table with no unique index, where the second
// delivery inserts a second row, is still caught.
func TestUpsertUnderACounterSetupDoesNotReset(t *testing.T) {
	for i := range 10 {
		for _, unique := range []bool{true, false} {
			c := &contactTable{unique: unique}
			rep := testkit.Run(t, func(ctx context.Context) error {
				return c.save(ctx, "ada@example.com", "Ada")
			}, testkit.NoSummary(), testkit.Setup(c.reset), testkit.State(c.state))
			got := verdictOf(rep)
			if unique && got != "" {
				t.Errorf("run %d, an upsert delivered twice:\n%s", i+1, got)
			}
			if !unique && !strings.Contains(codesIn(rep, runtime.CodeDuplicateWrite), "duplicate_delivery/concurrent "+runtime.CodeDuplicateWrite) {
				t.Errorf("run %d, an insert delivered twice at once: no duplicate_write in duplicate_delivery/concurrent; got:\n%s", i+1, got)
			}
		}
	}
}
