package runtime

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helpdesk is PostgreSQL's tickets(id UUID DEFAULT gen_random_uuid(),
// ext_key UNIQUE, status, comment_count), comments(id BIGSERIAL, ticket_id,
// ckey, body, UNIQUE(ticket_id, ckey)) and a trigger's audit(id BIGSERIAL,
// ticket_id, what) as State reads them: the sink names each ticket at
// random, and the agent passes the name on.
type helpdesk struct {
	mu       sync.Mutex
	tickets  []map[string]any
	comments []map[string]any
	audit    []map[string]any
	// plain makes comment insert a row each time (no key): a second
	// delivery comments twice. twice makes open_ticket insert a ticket
	// each time, under a new id.
	plain, twice bool
	// ref is the comments' column that holds the ticket ("ticket_id",
	// or "ticket": no key that reads as a reference). task makes the agent
	// open a task under the ticket (open_task, given the ticket's name,
	// the sink naming the task at random too), and comment on the task.
	// titled makes set_status quote the ticket's name in its title.
	ref          string
	task, titled bool
	// created makes open_ticket answer {"id", "created"}, as a
	// get-or-create does: true for the delivery that made it. url makes
	// the open write the ticket's url, which quotes its id, in its row.
	created, url bool
	// two makes the agent handle two mails, one after the other: two
	// tickets the sink names at random, in a list the State reads by id.
	two   bool
	tasks []map[string]any
	meet  *rendezvous // holds each call until the other delivery's is in flight
}

func (h *helpdesk) reset() {
	h.mu.Lock()
	h.tickets, h.comments, h.audit, h.tasks = nil, nil, nil, nil
	h.mu.Unlock()
}

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return "t-" + hex.EncodeToString(b[:])
}

func (h *helpdesk) open(ext string) (id string, created bool) {
	h.meet.wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.twice {
		for _, t := range h.tickets {
			if t["ext_key"] == ext {
				return t["id"].(string), false
			}
		}
	}
	id = randomID()
	t := map[string]any{"id": id, "ext_key": ext, "status": "open", "comment_count": 0}
	if h.url {
		t["url"] = "/tickets/" + id
	}
	h.tickets = append(h.tickets, t)
	return id, true
}

// openTask opens the task of a ticket once (an upsert on parent and
// title), named at random.
func (h *helpdesk) openTask(parent string) string {
	h.meet.wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.tasks {
		if t["parent"] == parent {
			return t["id"].(string)
		}
	}
	id := randomID()
	h.tasks = append(h.tasks, map[string]any{"id": id, "parent": parent, "title": "investigate"})
	return id
}

func (h *helpdesk) comment(ticket, key, body string) {
	h.meet.wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	ref := cmp.Or(h.ref, "ticket_id")
	if !h.plain && slices.ContainsFunc(h.comments, func(c map[string]any) bool { return c[ref] == ticket && c["ckey"] == key }) {
		return
	}
	h.comments = append(h.comments, map[string]any{"id": len(h.comments) + 1, ref: ticket, "ckey": key, "body": body})
	for _, t := range h.tickets {
		if t["id"] == ticket {
			t["comment_count"] = t["comment_count"].(int) + 1
		}
	}
}

func (h *helpdesk) setStatus(ticket, status string) {
	h.meet.wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.tickets {
		if t["id"] == ticket && t["status"] != status {
			h.audit = append(h.audit, map[string]any{"id": len(h.audit) + 1, "ticket_id": ticket, "what": t["status"].(string) + " -> " + status})
			t["status"] = status
			if h.titled {
				t["title"] = "[" + ticket + "] Mail 4711"
			}
		}
	}
}

func (h *helpdesk) state() any {
	h.mu.Lock()
	defer h.mu.Unlock()
	clone := func(rows []map[string]any) []any {
		out := make([]any, len(rows))
		for i, r := range rows {
			c := map[string]any{}
			for k, v := range r {
				c[k] = v
			}
			out[i] = c
		}
		return out
	}
	return map[string]any{"tickets": clone(h.tickets), "comments": clone(h.comments), "audit": clone(h.audit), "tasks": clone(h.tasks)}
}

// helpdeskAgent opens the ticket of a mail, comments on it and moves it to
// in_progress, retrying each call, as the red team's PostgreSQL agent did.
func helpdeskAgent(h *helpdesk) func(context.Context) error {
	open := &Op{Name: "open_ticket", Kind: KindWrite, Params: []string{"ext_key"}}
	comment := &Op{Name: "comment", Kind: KindWrite, Params: []string{"ticket_id", "key", "body"}}
	status := &Op{Name: "set_status", Kind: KindWrite, Params: []string{"ticket_id", "status"}}
	task := &Op{Name: "open_task", Kind: KindWrite, Params: []string{"parent"}}
	retry := func(ctx context.Context, f func() error) error {
		var err error
		for range 3 {
			if err = f(); err == nil || errors.Is(err, context.Canceled) {
				return err
			}
		}
		return err
	}
	one := func(ctx context.Context, mail string) error {
		var id string
		if err := retry(ctx, func() error {
			c, _ := Begin(ctx, open, []any{mail}, []any{mail}, nil)
			if err := c.Start(); err != nil {
				return err
			}
			var created bool
			id, created = h.open(mail)
			if h.created {
				return c.Finish(nil, map[string]any{"id": id, "created": created})
			}
			return c.Finish(nil, id)
		}); err != nil {
			return err
		}
		on := id
		if h.task {
			if err := retry(ctx, func() error {
				c, _ := Begin(ctx, task, []any{id}, []any{id}, nil)
				if err := c.Start(); err != nil {
					return err
				}
				on = h.openTask(id)
				return c.Finish(nil, on)
			}); err != nil {
				return err
			}
		}
		if err := retry(ctx, func() error {
			return traced(ctx, comment, []any{on, "triage", "Looking into it"}, []any{on, "triage"}, func(context.Context) error {
				h.comment(on, "triage", "Looking into it")
				return nil
			})
		}); err != nil {
			return err
		}
		return retry(ctx, func() error {
			return traced(ctx, status, []any{id, "in_progress"}, []any{id}, func(context.Context) error {
				h.setStatus(id, "in_progress")
				return nil
			})
		})
	}
	return func(ctx context.Context) error {
		mails := []string{"mail-4711"}
		if h.two {
			mails = append(mails, "mail-4712")
		}
		for _, m := range mails {
			if err := one(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
}

// A ticket the sink names at random (a UUID a column's DEFAULT gives), that
// the agent passes on to later calls, which then change it (a comment
// counted on it, its status moved on). Two deliveries at once open one
// ticket (an upsert on the mail's key), under another random name than the
// baseline's, and comment on it and move it on, each pair of calls in
// flight together. Each pair did one execution's change once the name the
// sink gave this run (which open_ticket answered) is the baseline's
// (sinkRenaming); and the run ends as the baseline did up to that name,
// wherever it is held (madeIDs). On the red team's PostgreSQL probe p9,
// open_ticket was a duplicate_write on every run; here, comment and
// set_status were. A comment without a key, made twice, and a ticket
// opened twice are still caught.
func TestATicketNamedAtRandomAndChangedSinceIsOneExecutionsUnderAnotherName(t *testing.T) {
	for _, c := range []struct {
		name                                          string
		plain, twice, task, titled, created, url, two bool
		ref                                           string
	}{
		{name: "upserts"},
		// Where no key reads as a reference to tickets (the red team's
		// second round, /tmp/rt27 p1: a duplicate_write on every run).
		{name: "upserts, the comment's ticket under ticket", ref: "ticket"},
		{name: "upserts, a task under the ticket, the comment on it", task: true},
		{name: "upserts, the title quoting the ticket's name", titled: true},
		// A get-or-create that says whether it made the ticket: the two
		// deliveries' answers differ by that flag, the name is one
		// (red team, /tmp/rt28pg p2: a duplicate_write on every run).
		{name: "get-or-create answering created, the comment under ticket", created: true, ref: "ticket"},
		{name: "get-or-create answering created, a task under the ticket", created: true, task: true},
		{name: "ticket opened twice, answering created", twice: true, created: true, ref: "ticket"},
		// The open writes a url that quotes the id in the row it makes
		// (red team, /tmp/rt29 hs: a duplicate_write on every run).
		{name: "upserts, the ticket's url quoting its id", url: true},
		{name: "ticket opened twice, its url quoting its id", twice: true, url: true},
		// Two tickets: the calls on the second are keyed by its name,
		// which the baseline's calls were given otherwise, and its rows
		// come in another order (red team, /tmp/rt29 s1 TestServerIDSeq:
		// a duplicate_write on every run).
		{name: "upserts, two mails", two: true},
		{name: "comment without a key, two mails", plain: true, two: true},
		{name: "comment without a key", plain: true},
		{name: "comment without a key, under ticket", plain: true, ref: "ticket"},
		{name: "ticket opened twice", twice: true},
		{name: "ticket opened twice, a task under each", twice: true, task: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 2 {
				h := &helpdesk{plain: c.plain, twice: c.twice, ref: c.ref, task: c.task, titled: c.titled, created: c.created, url: c.url, two: c.two, meet: &rendezvous{timeout: 5 * time.Millisecond}}
				rep, err := Run(context.Background(), t.Name(), helpdeskAgent(h),
					Setup(func(context.Context) error { h.reset(); return nil }), State(h.state))
				require.NoError(t, err)
				dups := findings(rep, ScenarioDuplicateConcurrent)
				if c.plain || c.twice {
					assert.NotEmpty(t, dups, "a second comment or ticket stayed")
					continue
				}
				if c.two {
					// The calls on the second ticket, from the same
					// lines with another ticket's random name, are
					// still taken for retries with an unstable
					// identity (identity_unstable, a known limit): no
					// duplicate, though.
					for _, f := range rep.Findings {
						assert.NotEqual(t, CodeDuplicateWrite, f.Code, "%s: %s", f.Scenario, f.Message)
					}
					continue
				}
				assert.Empty(t, findings(rep, ""), "one ticket under another random name")
				assert.Zero(t, rep.InconclusiveCount)
			}
		})
	}
}
