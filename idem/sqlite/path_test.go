package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/idem/sqlite"
)

// TestOpenPathIsThePath: Open opens the file named by path, whatever
// characters it holds; none is read as URI syntax (issue 12.13: "a?b.db"
// opened "a", "c#d.db" opened "c", "e%41f.db" opened "eAf.db").
func TestOpenPathIsThePath(t *testing.T) {
	for _, name := range []string{"a?b.db", "c#d.db", "e%41f.db", "sp ace.db", "ü&x=y.db", "mode=ro?mode=memory", "semi;colon.db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			b := open(t, path)
			ctx := context.Background()
			if _, _, err := idem.Do(ctx, idem.New(b), "k", "p", func(context.Context) (string, error) { return "v", nil }); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			sort.Strings(names)
			for _, n := range names {
				if n != name && n != name+"-wal" && n != name+"-shm" {
					t.Fatalf("Open(%q) wrote %q (files: %s); want only %q", name, n, strings.Join(names, ", "), name)
				}
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("Open(%q) did not create that file: %v", name, err)
			}
			// Opening it again finds the stored key.
			r, replayed, err := idem.Do(ctx, idem.New(open(t, path)), "k", "p", func(context.Context) (string, error) { return "again", nil })
			if err != nil || !replayed || r != "v" {
				t.Fatalf("reopened %q: %q, replayed=%v, %v; want the stored v", name, r, replayed, err)
			}
		})
	}
}

// TestOpenMemoryIsOneDatabase: ":memory:" is one database for every call,
// not one per pooled connection (issue 12.13: 17 of 20 concurrent calls got
// "no such table"), and two backends opened on it do not share it.
func TestOpenMemoryIsOneDatabase(t *testing.T) {
	b := open(t, ":memory:")
	store := idem.New(b)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	runs := 0
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := idem.Do(ctx, store, "one", "p", func(context.Context) (int, error) {
				mu.Lock()
				runs++
				mu.Unlock()
				return 1, nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	var failed []error
	for err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d of 20 calls failed: %v", len(failed), errors.Join(failed...))
	}
	if runs != 1 {
		t.Fatalf("the work ran %d times under one key; want 1", runs)
	}
	other := open(t, ":memory:")
	var n int
	if err := other.DB().QueryRow(`SELECT count(*) FROM idem_keys`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a second :memory: backend sees %d keys of the first one (%v); want its own empty database", n, err)
	}
}

// TestOpenEmptyPath is refused with a message that says what to pass.
func TestOpenEmptyPath(t *testing.T) {
	_, err := sqlite.Open("")
	if err == nil || !strings.Contains(err.Error(), `":memory:"`) {
		t.Fatalf("Open(\"\") = %v; want an error naming the alternatives", err)
	}
}
