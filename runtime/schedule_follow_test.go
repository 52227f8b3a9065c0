package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// In one turn the agent charges a card and reserves a seat in parallel,
// and the reservation waits for the charge to be done. An interleaving
// that finishes the reservation before the charge starts cannot be
// followed: the run says so in a note, with the step that came later than
// its schedule says, and no other interleaving gets that note.
func TestScheduleThatCannotBeFollowedIsNoted(t *testing.T) {
	charge := &Op{Name: "charge_card", Kind: KindWrite, Params: []string{"order"}}
	reserve := &Op{Name: "reserve_seat", Kind: KindWrite, Params: []string{"order"}}
	var charged chan struct{}
	agent := func(ctx context.Context) error {
		var wg sync.WaitGroup
		wg.Go(func() {
			traced(ctx, charge, []any{"o1"}, []any{"o1"}, func(context.Context) error { close(charged); return nil })
		})
		wg.Go(func() {
			traced(ctx, reserve, []any{"o1"}, []any{"o1"}, func(ctx context.Context) error {
				select {
				case <-charged:
				case <-ctx.Done():
				}
				return nil
			})
		})
		wg.Wait()
		return nil
	}
	rep, err := Run(context.Background(), t.Name(), agent,
		Setup(func(context.Context) error { charged = make(chan struct{}); return nil }),
		StallTimeout(300*time.Millisecond)) // a charge that fails leaves the reservation waiting: those scenarios stall
	if err != nil {
		t.Fatal(err)
	}
	noted := 0
	for _, r := range rep.Results {
		if r.Schedule == "" {
			continue
		}
		var note string
		for _, n := range r.Trace.Notes {
			if strings.Contains(n, "could not be followed") {
				note = n
			}
		}
		// The legend numbers the calls by label: charge_card is s0.
		cannot := strings.Index(r.Schedule, "f1") < strings.Index(r.Schedule, "s0")
		if cannot != (note != "") {
			t.Errorf("%s: note %q", r.Schedule, note)
		}
		if note != "" {
			noted++
			if !strings.Contains(note, "f1 (reserve_seat)") {
				t.Errorf("%s: the note does not name the step: %s", r.Schedule, note)
			}
		}
	}
	if noted == 0 {
		t.Fatal("no interleaving finished the reservation before the charge started")
	}
}
