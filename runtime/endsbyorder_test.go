package runtime

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A turn of two parallel create_ticket calls, then a comment on each
// ticket. The loop that pairs the answers with the calls in the order
// they arrive comments on the wrong ticket in one schedule: the
// schedules end in two worlds, which with State alone passed, the report
// saying nothing (red team rS #2c). The report now says so, naming two
// schedules to replay; the loop that pairs by the answer's own title ends
// in one world and has no such note. Outcome, where given, compares them
// as before (order_variant_outcome).
func TestSchedulesThatEndInOtherWorldsAreNoted(t *testing.T) {
	create := &Op{Name: "create_ticket", Kind: KindWrite, Params: []string{"title"}}
	comment := &Op{Name: "add_comment", Kind: KindWrite, Params: []string{"ticket", "text"}}
	for _, byArrival := range []bool{true, false} {
		var mu sync.Mutex
		var tickets map[string]string // id -> title, then title+comment
		agent := func(ctx context.Context) error {
			titles := []string{"printer", "vpn"}
			type answer struct{ id, title string }
			got := make(chan answer, 2)
			for _, title := range titles {
				go func() {
					var id string
					defer func() { got <- answer{id, title} }() // a crash ends it at its call
					traced(ctx, create, []any{title}, []any{title}, func(context.Context) error {
						mu.Lock()
						defer mu.Unlock()
						id = fmt.Sprintf("T-%s", title)
						tickets[id] = title
						return nil
					})
				}()
			}
			ids := map[string]string{}
			for i := range titles {
				a := <-got
				if byArrival {
					ids[titles[i]] = a.id // the i-th answer for the i-th call
				} else {
					ids[a.title] = a.id
				}
			}
			for _, title := range titles {
				id := ids[title]
				if err := traced(ctx, comment, []any{id, "about " + title}, []any{id}, func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					tickets[id] += " / about " + title
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		}
		rep, err := Run(context.Background(), t.Name(), agent,
			Setup(func(context.Context) error { mu.Lock(); tickets = map[string]string{}; mu.Unlock(); return nil }),
			State(func() any { mu.Lock(); defer mu.Unlock(); return maps.Clone(tickets) }))
		require.NoError(t, err)
		notes := strings.Join(rep.Notes, "\n")
		if byArrival {
			assert.Contains(t, notes, "schedules of the parallel calls ended in another state than", "%q", rep.Notes)
			assert.Contains(t, notes, "AGENTIDEM_SCENARIO='interleaving/")
			continue
		}
		assert.NotContains(t, notes, "schedules of the parallel calls ended in another state", "%q", rep.Notes)
	}
}
