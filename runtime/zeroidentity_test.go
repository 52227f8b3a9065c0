package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A desk whose server assigns ticket ids, annotated identity=t.ID: the
// agent's t.ID is empty when it calls (red team rtV #16).
type zeroTicket struct {
	ID      string `json:"id"`
	OrderID string `json:"order_id"`
}

var zeroTicketOp = Declare(&Op{Name: "zero_ticket", Kind: KindWrite, Params: []string{"t"},
	Directive: "//agentidem:write identity=t.ID name=zero_ticket"})

type zeroDesk struct {
	mu      sync.Mutex
	tickets []zeroTicket
	srv     *httptest.Server
}

func newZeroDesk() *zeroDesk {
	d := &zeroDesk{}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var t zeroTicket
		if err := json.NewDecoder(r.Body).Decode(&t); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		d.mu.Lock()
		t.ID = fmt.Sprintf("T-%d", len(d.tickets)+1)
		d.tickets = append(d.tickets, t)
		d.mu.Unlock()
		json.NewEncoder(w).Encode(t)
	}))
	return d
}

func (d *zeroDesk) snapshot() any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]zeroTicket{}, d.tickets...)
}

func (d *zeroDesk) create(ctx context.Context, t zeroTicket) error {
	return traced(ctx, zeroTicketOp, []any{t}, []any{t.ID}, func(ctx context.Context) error {
		b, _ := json.Marshal(t)
		req, err := http.NewRequestWithContext(ctx, "POST", d.srv.URL, strings.NewReader(string(b)))
		if err != nil {
			return err
		}
		resp, err := d.srv.Client().Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

func runZeroDesk(t *testing.T, withState bool, agent func(ctx context.Context, d *zeroDesk) error) *Report {
	t.Helper()
	var d *zeroDesk
	t.Cleanup(func() {
		if d != nil {
			d.srv.Close()
		}
	})
	opts := []Option{Setup(func(context.Context) error {
		if d != nil {
			d.srv.Close()
		}
		d = newZeroDesk()
		return nil
	})}
	if withState {
		opts = append(opts, State(func() any { return d.snapshot() }))
	}
	rep, err := Run(context.Background(), t.Name(), func(ctx context.Context) error { return agent(ctx, d) }, opts...)
	require.NoError(t, err)
	return rep
}

// Two tickets for two orders, each created once: a correct agent. Its
// identity (t.ID, empty at call time) is "" in both calls, and the
// baseline read "zero_ticket executed 2 times for identity """: a false
// duplicate. Now its calls are told apart by their arguments, and the
// baseline warns that the identity identifies nothing.
func TestZeroIdentityOfTwoOrdersIsNoDuplicate(t *testing.T) {
	two := func(ctx context.Context, d *zeroDesk) error {
		for _, o := range []string{"o-1", "o-2"} {
			if err := d.create(ctx, zeroTicket{OrderID: o}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, withState := range []bool{true, false} {
		t.Run(fmt.Sprint("state=", withState), func(t *testing.T) {
			rep := runZeroDesk(t, withState, two)
			for _, f := range rep.Baseline.Findings {
				t.Logf("baseline %s: %s", f.Code, f.Message)
			}
			assert.Empty(t, zeroCodes(rep.Baseline.Findings, CodeDuplicateWrite), "two calls with other arguments are no duplicate")
			require.Len(t, zeroCodes(rep.Baseline.Findings, CodeIdentityZero), 1)
			w := zeroCodes(rep.Baseline.Findings, CodeIdentityZero)[0]
			assert.Equal(t, SeverityWarning, w.Severity)
			assert.Contains(t, w.Message, `identity t.ID was "" in every call (1:zero_ticket#1, 1:zero_ticket#2), and their arguments differ: a value the sink assigns cannot identify the call; use what the caller knows`)
			assert.True(t, rep.Baseline.Safe, "baseline")
		})
	}
}

// The same agent retrying a failed create: the retry repeats the call
// with the same arguments, and is a duplicate (lost_acknowledgement),
// told by the arguments, its message naming the empty identity.
func TestZeroIdentityStillFindsARetriedCreate(t *testing.T) {
	retry := func(ctx context.Context, d *zeroDesk) error {
		for _, o := range []string{"o-1", "o-2"} {
			t := zeroTicket{OrderID: o}
			if err := d.create(ctx, t); err != nil {
				if err := d.create(ctx, t); err != nil {
					return err
				}
			}
		}
		return nil
	}
	rep := runZeroDesk(t, true, retry)
	assert.Empty(t, zeroCodes(rep.Baseline.Findings, CodeDuplicateWrite))
	var found []Finding
	for _, res := range rep.Results {
		if res.Scenario == "lost_acknowledgement/zero_ticket#1" {
			found = zeroCodes(res.Findings, CodeDuplicateWrite)
		}
	}
	require.Len(t, found, 1, "the retry after a lost acknowledgement is a duplicate")
	assert.Contains(t, found[0].Message, `zero_ticket executed 2 times`)
	assert.Contains(t, found[0].Message, `"order_id":"o-1"`)
	assert.Contains(t, found[0].Message, `identity t.ID was "" in every call: a value the sink assigns cannot identify the call; use what the caller knows`)
	assert.False(t, rep.Safe)
}

func zeroCodes(fs []Finding, code string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

func TestDirectiveIdentity(t *testing.T) {
	assert.Equal(t, "t.ID", directiveIdentity("//agentidem:write identity=t.ID name=x"))
	assert.Equal(t, "to, subject", directiveIdentity(`//agentidem:write identity="to, subject" name=send_email`))
	assert.Equal(t, "", directiveIdentity("//agentidem:read name=x"))
	assert.True(t, zeroJSON(`""`))
	assert.True(t, zeroJSON(`["",0,false,null]`))
	assert.False(t, zeroJSON(`["","o-1"]`))
	assert.False(t, zeroJSON(`"o-1"`))
	assert.False(t, zeroJSON(`1`))
}
