package runtime

import (
	"context"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
)

// nextLine returns the file:line of the line after its caller's.
func nextLine() string {
	_, file, line, _ := goruntime.Caller(1)
	return file + ":" + strconv.Itoa(line+1)
}

// beginInline calls Begin from a function small enough to be inlined into
// its caller, unlike a generated wrapper: the frame pointers then point one
// frame too far, and the call site must come from unwinding.
func beginInline(ctx context.Context) *Call {
	c, _ := Begin(ctx, opGet, nil, nil, nil)
	return c
}

// TestCallSite checks the recorded call site against the line of the call,
// for a wrapper of the generated shape (frame pointers) and for a Begin
// inlined into the agent (unwinding), several times each: the first call
// through a site decides, the later ones use the decision.
func TestCallSite(t *testing.T) {
	s := newStore()
	var want []string
	tr, err := RunTraced(context.Background(), "sites", func(ctx context.Context) error {
		for i := range 3 {
			want = append(want, nextLine())
			if err := s.putTraced(ctx, "k"+strconv.Itoa(i), i); err != nil {
				return err
			}
			want = append(want, nextLine())
			_ = beginInline(ctx).Finish(nil)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != len(want) {
		t.Fatalf("recorded %d calls, want %d", len(tr.Ops), len(want))
	}
	for i, op := range tr.Ops {
		if op.Site != want[i] {
			t.Errorf("call %d (%s): site %s, want %s", i, op.Name, op.Site, want[i])
		}
	}
	if goruntime.GOARCH == "amd64" {
		fast, slow := 0, 0
		fastSites.Range(func(_, ok any) bool {
			if ok.(bool) {
				fast++
			} else {
				slow++
			}
			return true
		})
		if fast == 0 || slow == 0 {
			t.Errorf("%d call sites took the frame-pointer path and %d unwound, want some of each on amd64", fast, slow)
		}
	}
}

// TestCallSiteOfWrapperLine checks the site of a generated-shape wrapper
// names this file (not the wrapper's).
func TestCallSiteOfWrapperLine(t *testing.T) {
	s := newStore()
	tr, err := RunTraced(context.Background(), "site", func(ctx context.Context) error {
		return s.putTraced(ctx, "a", 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Ops) != 1 || !strings.Contains(tr.Ops[0].Site, "callsite_test.go:") {
		t.Fatalf("site = %+v, want callsite_test.go", tr.Ops)
	}
}
