package runtime

import (
	"sync"
	"testing"
)

// goroutineID reads the id off g where it found its offset; the traceback
// header is the reference. They must agree in every goroutine, including
// ones created after the offset was found and ones deep in calls.
func TestGoroutineIDAgreesWithTheTraceback(t *testing.T) {
	if haveGoidAt && goroutineID() != 0 && goidOffset == 0 {
		t.Logf("no offset found for the goroutine id: goroutineID reads tracebacks")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	var deep func(n int) uint64
	deep = func(n int) uint64 {
		if n == 0 {
			return goroutineID()
		}
		return deep(n - 1)
	}
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := stackGoroutineID()
			if got := goroutineID(); got != want {
				errs <- "shallow"
			}
			if got := deep(i % 50); got != want {
				errs <- "deep"
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("goroutineID disagrees with the traceback (%s)", e)
	}
	if haveGoidAt && goidOffset == 0 {
		t.Errorf("the goroutine id was not found in g on this architecture")
	}
}

func BenchmarkGoroutineID(b *testing.B) {
	b.Run("g", func(b *testing.B) {
		for b.Loop() {
			goroutineID()
		}
	})
	b.Run("traceback", func(b *testing.B) {
		for b.Loop() {
			stackGoroutineID()
		}
	})
}
