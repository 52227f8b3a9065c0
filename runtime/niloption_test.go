package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
)

// TestNilOptionStopsTheSuite: an option given a nil func where nil would
// silently mean something else (State(nil) leaving the suite without the
// State its findings then ask for; an invariant that panics in every
// scenario) is a *ConfigError before the baseline, which names the option.
func TestNilOptionStopsTheSuite(t *testing.T) {
	agent := func(ctx context.Context) error { return nil }
	for _, tc := range []struct {
		opt  runtime.Option
		want string
	}{
		{runtime.State(nil), "State(nil): want a func that returns what the world holds now"},
		{runtime.Settle(nil), "Settle(nil): want a func that returns once the world went quiet"},
		{runtime.Invariant("one refund", nil), `Invariant("one refund", nil): want a func that checks`},
	} {
		s := runtime.NewSuite("nil", agent, tc.opt)
		res, err := s.Baseline(context.Background())
		var cfg *runtime.ConfigError
		if !errors.As(err, &cfg) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Baseline error %v, want a *ConfigError containing %q", err, tc.want)
			continue
		}
		if !res.Inconclusive || !strings.Contains(res.Error, "not run") {
			t.Errorf("baseline result %+v: want inconclusive, not run", res)
		}
	}
	// Setup and Teardown given nil still do nothing, as documented.
	s := runtime.NewSuite("nil setup", agent, runtime.Setup(nil), runtime.Teardown(nil))
	if _, err := s.Baseline(context.Background()); err != nil {
		t.Errorf("Setup(nil), Teardown(nil): %v, want no error", err)
	}
}
