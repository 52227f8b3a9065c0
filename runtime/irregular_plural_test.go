package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A person whose id comes from a counter Setup does not reset, answered by
// create_person and passed to add_phone as person_id, which upserts the
// person's phone. Two deliveries at once make the person as 2 where the
// baseline made it as 1: person_id refers to a row of people, whose
// plural is not the name with an s, and was read as no reference, so the
// phone under person_id 2 was a second effect (red team, /tmp/rt33 C5: a
// duplicate_write on every run). A phone inserted on each delivery is
// still one too many.
func TestAReferenceToATableOfAnIrregularPluralIsRenamed(t *testing.T) {
	createPerson := &Op{Name: "create_person", Kind: KindWrite, Params: []string{"ref"}}
	addPhone := &Op{Name: "add_phone", Kind: KindWrite, Params: []string{"person_id", "number"}}
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("inserted each time=%v", plain), func(t *testing.T) {
			var (
				mu     sync.Mutex
				people []map[string]any
				phones []map[string]any
				next   int // people's counter, which Setup leaves alone
				meet   = &rendezvous{timeout: 5 * time.Millisecond}
			)
			agent := func(ctx context.Context) error {
				var id int
				c, _ := Begin(ctx, createPerson, []any{"ext-1"}, []any{"ext-1"}, nil)
				if err := c.Start(); err != nil {
					return err
				}
				meet.wait()
				mu.Lock()
				for _, p := range people {
					if p["ref"] == "ext-1" {
						id = p["id"].(int)
					}
				}
				if id == 0 {
					next++
					id = next
					people = append(people, map[string]any{"id": id, "ref": "ext-1"})
				}
				mu.Unlock()
				if err := c.Finish(nil, id); err != nil {
					return err
				}
				return traced(ctx, addPhone, []any{id, "555"}, []any{id, "555"}, func(context.Context) error {
					meet.wait()
					mu.Lock()
					defer mu.Unlock()
					for _, p := range phones {
						if !plain && p["person_id"] == id && p["number"] == "555" {
							return nil
						}
					}
					phones = append(phones, map[string]any{"person_id": id, "number": "555"})
					return nil
				})
			}
			rep, err := Run(context.Background(), t.Name(), agent,
				OnlyScenario(ScenarioDuplicateConcurrent),
				Setup(func(context.Context) error {
					mu.Lock()
					defer mu.Unlock()
					people, phones = nil, nil
					return nil
				}),
				State(func() any {
					mu.Lock()
					defer mu.Unlock()
					return map[string]any{"people": people, "phones": phones}
				}))
			require.NoError(t, err)
			require.True(t, rep.BaselineSucceeded)
			got := scenariosOf(rep, CodeDuplicateWrite)
			if plain {
				assert.Contains(t, got, "duplicate_delivery/concurrent", "a phone added twice passed as once")
				return
			}
			assert.Empty(t, got, "a person made as 2 where the baseline made 1, and its phone: %v", rep.Findings)
		})
	}
}

// TestNamesTable: a table's name as the plural of the thing a reference
// names, regular and irregular.
func TestNamesTable(t *testing.T) {
	for _, c := range []struct {
		table, thing string
		want         bool
	}{
		{"orders", "order", true},
		{"order_items", "item", true},
		{"addresses", "address", true},
		{"companies", "company", true},
		{"people", "person", true},
		{"crm_people", "person", true},
		{"children", "child", true},
		{"analyses", "analysis", true},
		{"indices", "index", true},
		{"shelves", "shelf", true},
		{"criteria", "criterion", true},
		{"media", "medium", true},
		{"shipments", "ship", false},
		{"people", "peoples", false},
		{"persons", "person", true},
	} {
		if got := namesTable(c.table, c.thing); got != c.want {
			t.Errorf("namesTable(%q, %q) = %v, want %v", c.table, c.thing, got, c.want)
		}
	}
}

// TestNumbersInBaseKeysTryEachPlaceOfAnAmbiguousNumber: the identity
// [2,"apple",2] of add_line(order_id 2, sku apple, qty 2), the run's order
// 2 being the baseline's 1, reads as [1,"apple",2] or [2,"apple",1]: the
// arguments pass 2 once under an id, so one of the identity's two is the
// order. Where the identity holds it no more often than that, every one
// is renamed, as before.
func TestNumbersInBaseKeysTryEachPlaceOfAnAmbiguousNumber(t *testing.T) {
	rn := numberNames{"2": {to: "1", table: "orders"}}
	args := `{"order_id":2,"qty":2,"sku":"apple"}`
	renamedArgs := `{"order_id":1,"qty":2,"sku":"apple"}`
	got := numbersInBaseKeys("add_line\x00[2,\"apple\",2]\x00"+args, rn)
	assert.Equal(t, []string{
		"add_line\x00[1,\"apple\",2]\x00" + renamedArgs,
		"add_line\x00[2,\"apple\",1]\x00" + renamedArgs,
	}, got)
	got = numbersInBaseKeys("add_line\x00[2,\"apple\"]\x00"+args, rn)
	assert.Equal(t, []string{"add_line\x00[1,\"apple\"]\x00" + renamedArgs}, got)
	got = numbersInBaseKeys("add_line\x00[3,\"apple\"]\x00"+`{"order_id":3,"sku":"apple"}`, rn)
	assert.Equal(t, []string{"add_line\x00[3,\"apple\"]\x00" + `{"order_id":3,"sku":"apple"}`}, got, "nothing to rename")
}
