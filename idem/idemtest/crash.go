package idemtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentidem/agentidem-go/idem"
)

// Sink is where the effect of the crash test's work lands: a table in the
// backend's own database, shared by the parent and the child process. It
// has no unique constraint, so an effect done twice is two rows.
type Sink interface {
	// Apply performs the effect for key, with result as its outcome.
	Apply(ctx context.Context, key string, result []byte) error
	// Find returns the outcome of the effect for key, if it was performed.
	Find(ctx context.Context, key string) ([]byte, bool, error)
	// Count returns how many times the effect for key was performed.
	Count(ctx context.Context, key string) (int, error)
}

// Crash describes the SIGKILL test of a backend whose data outlives a
// process.
type Crash struct {
	// Test is the name of the top-level test function that calls
	// CrashRecovery; the child process re-runs it with -test.run.
	Test string
	// Open opens the shared backend and sink, in the parent and the child.
	Open func(t *testing.T) (idem.Backend, Sink)
	// Lease is the holder's lease; the parent recovers the key once it has
	// run out after the kill. Default 500ms.
	Lease time.Duration
}

const (
	crashPhaseEnv = "IDEMTEST_CRASH_PHASE"
	crashKeyEnv   = "IDEMTEST_CRASH_KEY"
	inFlight      = "IDEMTEST_FN_IN_FLIGHT"
)

// CrashRecovery kills (SIGKILL) a child process while its fn is in flight,
// once before fn's effect and once after it, and checks that after the
// restart the key is recovered and the effect is done exactly once: the
// recovery finds an effect that happened and completes the key with it, and
// runs fn when the effect did not happen. A control run without WithRecover
// shows the effect done twice, which is why the recovery is needed.
func CrashRecovery(t *testing.T, c Crash) {
	if c.Lease == 0 {
		c.Lease = 500 * time.Millisecond
	}
	if phase := os.Getenv(crashPhaseEnv); phase != "" {
		crashChild(t, c, phase, os.Getenv(crashKeyEnv))
		return
	}
	b, sink := c.Open(t)
	for _, tc := range []struct {
		name        string
		phase       string
		recover     bool
		wantRuns    int64
		wantEffects int
	}{
		{"KilledBeforeEffect", "before", true, 1, 1},
		{"KilledAfterEffect", "after", true, 0, 1},
		{"ControlWithoutRecoverDuplicates", "after", false, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := NewKey(t)
			pid := runAndKill(t, c.Test, tc.phase, key)
			ctx := context.Background()
			opts := []idem.Option{idem.WithLease(c.Lease), idem.WithPollInterval(10 * time.Millisecond)}
			if tc.recover {
				opts = append(opts, idem.WithRecover(func(ctx context.Context, key string) ([]byte, bool, error) {
					return sink.Find(ctx, key)
				}))
			}
			s := idem.New(b, opts...)
			var runs atomic.Int64
			t0 := time.Now()
			r, replayed, err := s.Do(ctx, key, "p", func(ctx context.Context) ([]byte, error) {
				runs.Add(1)
				res := []byte(`"effect by the restarted process"`)
				return res, sink.Apply(ctx, key, res)
			})
			waited := time.Since(t0)
			if err != nil {
				t.Fatalf("Do after restart: %v", err)
			}
			effects, err := sink.Count(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			// A later call replays whatever the recovery stored.
			r2, replayed2, err := s.Do(ctx, key, "p", func(context.Context) ([]byte, error) {
				runs.Add(1)
				return nil, errors.New("fn ran after the key was recovered")
			})
			t.Logf("child pid %d killed (SIGKILL) with fn in flight, %s its effect; after restart (waited %v for the lease): fn runs=%d replayed=%v effects in sink=%d; next call replayed=%v",
				pid, tc.phase, waited.Round(time.Millisecond), runs.Load(), replayed, effects, replayed2)
			if err != nil || !replayed2 || string(r2) != string(r) {
				t.Fatalf("call after recovery = %q, replayed %v, %v; want %q replayed", r2, replayed2, err, r)
			}
			if runs.Load() != tc.wantRuns || effects != tc.wantEffects {
				t.Fatalf("fn runs=%d effects=%d, want runs=%d effects=%d", runs.Load(), effects, tc.wantRuns, tc.wantEffects)
			}
		})
	}
}

// runAndKill starts the child, waits until its fn is in flight, kills it
// with SIGKILL and reaps it.
func runAndKill(t *testing.T, test, phase, key string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), crashPhaseEnv+"="+phase, crashKeyEnv+"="+key)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting child: %v", err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), inFlight) {
				ready <- true
				break
			}
		}
		ready <- false
		for sc.Scan() { // drain
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			_ = cmd.Wait()
			t.Fatal("child exited before its fn was in flight")
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("child's fn never got in flight")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want killed by SIGKILL", err)
	}
	return cmd.Process.Pid
}

// crashChild holds key with fn in flight and never returns: the parent kills
// it.
func crashChild(t *testing.T, c Crash, phase, key string) {
	b, sink := c.Open(t)
	s := idem.New(b, idem.WithLease(c.Lease))
	_, _, err := s.Do(context.Background(), key, "p", func(ctx context.Context) ([]byte, error) {
		if phase == "after" {
			if err := sink.Apply(ctx, key, []byte(`"effect by the killed process"`)); err != nil {
				return nil, err
			}
		}
		fmt.Println(inFlight)
		select {} // in flight until SIGKILL
	})
	t.Fatalf("child's Do returned: %v", err)
}
