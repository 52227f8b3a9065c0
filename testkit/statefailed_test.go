package testkit_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentidem/agentidem-go/testkit"
	"github.com/agentidem/agentidem-go/testkit/internal/realworld"
)

// A newcomer's State indexes tickets by order and panics on a duplicate:
// it works in the baseline and fails only in the world the bug makes. The
// unkeyed agent's redeliveries open a second ticket; with that State its
// duplicate_write became three inconclusive scenarios and the test
// passed, where the same agent with no State failed (red team rtV #1). A
// State failure after the baseline now fails the test, naming State's
// error and the scenarios; the keyed twin, whose world never holds two
// tickets, passes with the same State; with no State the buggy agent
// fails on its duplicate_write, as before.
func TestAStateThatFailsInTheBuggyWorldFailsTheTest(t *testing.T) {
	for _, tc := range []struct {
		name         string
		keyed, state bool
		fails        bool
	}{
		{"buggy, panicky State", false, true, true},
		{"buggy, no State", false, false, true},
		{"keyed, panicky State", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var desk *orderDesk
			var srv *httptest.Server
			t.Cleanup(func() { srv.Close() })
			opts := []testkit.Option{testkit.NoSummary(), testkit.Setup(func(context.Context) error {
				if srv != nil {
					srv.Close()
				}
				desk = &orderDesk{tickets: map[string]int{}, keyed: tc.keyed}
				srv = httptest.NewServer(desk)
				return nil
			})}
			if tc.state {
				opts = append(opts, testkit.State(func() any {
					if n := desk.count("o-42"); n > 1 {
						panic("two tickets for order o-42")
					}
					return desk.count("o-42")
				}))
			}
			ft := &fakeT{name: "TestDesk"}
			rep := testkit.TestAgent(ft, func(ctx context.Context) error {
				return realworld.RequestTicketTraced(ctx, srv.URL, "o-42")
			}, opts...)
			joined := strings.Join(ft.errors, "\n")
			require.Equal(t, tc.fails, ft.failed(), "%s", joined)
			if !tc.fails {
				assert.Zero(t, rep.InconclusiveCount)
				return
			}
			if !tc.state {
				assert.Contains(t, joined, "[duplicate_write] requestTicket executed 2 times")
				return
			}
			assert.Contains(t, joined, "testkit: State worked in the baseline but failed later: State panicked: two tickets for order o-42 (at statefailed_test.go:")
			assert.Contains(t, joined, "in crash_restart/requestTicket#1, duplicate_delivery/sequential, duplicate_delivery/concurrent")
			assert.NotContains(t, joined, "[duplicate_write]", "the finding is State's failure, not a duplicate no window showed")
			assert.Contains(t, strings.Join(rep.Notes, "\n"), "State worked in the baseline but failed later", "the report says so too")
		})
	}
}
