package runtime

import (
	"context"
	goruntime "runtime"
	"slices"
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

// putPathed is putTraced that returns its call's path, read where Finish
// reads it (the wrapper's callee, two frames under the site).
//
//go:noinline
func (s *store) putPathed(ctx context.Context, key string) (path []uintptr) {
	c, ctx := Begin(ctx, opPut, []any{key, 0}, []any{key}, nil)
	defer c.Finish(nil)
	s.put(ctx, key, 0)
	return c.pathOf()
}

//go:noinline
func (c *Call) pathOf() []uintptr { return c.path() }

// fpChain and fpChainInner compare fpCallers with runtime.Callers over
// frames the compiler cannot inline, where the two must agree.
//
//go:noinline
func fpChain(depth int) (fp, unwound []uintptr) {
	if depth > 0 {
		return fpChain(depth - 1)
	}
	return fpChainInner()
}

//go:noinline
func fpChainInner() (fp, unwound []uintptr) {
	var a, b [6]uintptr
	n := fpCallers(a[:])
	// Callers' first is a pc in this function; fpCallers' first is its
	// return address, Callers' second.
	m := goruntime.Callers(2, b[:])
	return a[:n], b[:m]
}

// TestPathReadOffFramePointers checks the path of a write: its site first
// (the line of the call), the same for two calls from one line, another
// for a call from another line; and, on amd64, that the frame pointers
// give the return addresses runtime.Callers gives where nothing is inlined.
func TestPathReadOffFramePointers(t *testing.T) {
	s := newStore()
	var paths [][]uintptr
	var sites []string
	_, err := RunTraced(context.Background(), "paths", func(ctx context.Context) error {
		for i := range 2 {
			sites = append(sites, nextLine())
			paths = append(paths, s.putPathed(ctx, "k"+strconv.Itoa(i)))
		}
		sites = append(sites, nextLine())
		paths = append(paths, s.putPathed(ctx, "other"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		// The delivery's goroutine starts a few frames above the agent.
		if len(p) < 2 || len(p) > pathFrames {
			t.Fatalf("path %d has %d frames, want the site and up to %d above it", i, len(p), pathFrames-1)
		}
		f, _ := goruntime.CallersFrames(p[:1]).Next()
		if got := f.File + ":" + strconv.Itoa(f.Line); got != sites[i] {
			t.Errorf("path %d starts at %s, want the site %s", i, got, sites[i])
		}
	}
	if !slices.Equal(paths[0], paths[1]) {
		t.Errorf("two calls from one line have paths %x and %x, want the same", paths[0], paths[1])
	}
	if slices.Equal(paths[0], paths[2]) {
		t.Errorf("calls from two lines have the same path %x", paths[0])
	}
	if goruntime.GOARCH != "amd64" {
		return
	}
	fp, unwound := fpChain(3)
	if len(fp) != 6 || !slices.Equal(fp, unwound) {
		t.Errorf("frame pointers read %x, runtime.Callers %x: want the same six", fp, unwound)
	}
}
