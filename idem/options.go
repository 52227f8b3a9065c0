package idem

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// InProgressPolicy says what Do does when another call holds the key.
type InProgressPolicy uint8

const (
	// Wait polls until the holder completes or releases the key, or the
	// caller's context ends. It is the default.
	Wait InProgressPolicy = iota
	// Fail returns ErrInProgress at once.
	Fail
)

// RecoverFunc looks at the sink for the effect of an abandoned call: the
// holder of key died (its lease ran out) while its fn was running. When the
// effect is there it returns the result to store (found true) and Do
// completes the key with it without running fn; when it is not, Do runs fn.
type RecoverFunc func(ctx context.Context, key string) (result []byte, found bool, err error)

// Option configures a Store (in New) or one call (in Do, Store.Do), where it
// overrides the Store's setting.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	inProgress InProgressPolicy
	lease      time.Duration
	ttl        time.Duration
	poll       time.Duration
	storeError func(error) bool
	recover    RecoverFunc
}

func defaultConfig() config {
	return config{
		inProgress: Wait,
		lease:      30 * time.Second,
		ttl:        24 * time.Hour,
		poll:       50 * time.Millisecond,
		storeError: func(err error) bool { return errorsIsPermanent(err) },
	}
}

// OnInProgress sets what Do does when another call holds the key: Wait (the
// default) or Fail.
func OnInProgress(p InProgressPolicy) Option {
	return optionFunc(func(c *config) { c.inProgress = p })
}

// WithLease sets how long a holder owns a key without renewing it (default
// 30s). While fn runs, Do renews the lease every third of it; when the
// holder's process dies, the key is abandoned once the lease runs out and
// the next call recovers it. It panics if d is not positive.
func WithLease(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("idem: WithLease(%v): lease must be positive", d))
	}
	return optionFunc(func(c *config) { c.lease = d })
}

// WithTTL sets how long a completed key is kept (default 24h). Past it the
// key is free again and Purge deletes it. It panics if d is not positive.
func WithTTL(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("idem: WithTTL(%v): ttl must be positive", d))
	}
	return optionFunc(func(c *config) { c.ttl = d })
}

// WithPollInterval sets the longest pause between two looks at a key that
// another call holds (default 50ms; the first looks come sooner). It panics
// if d is not positive.
func WithPollInterval(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("idem: WithPollInterval(%v): interval must be positive", d))
	}
	return optionFunc(func(c *config) { c.poll = d })
}

// StoreErrorsIf sets which errors of fn are stored as the key's outcome and
// replayed to later calls; the others release the key so a retry can run.
// The default stores the errors marked with Permanent.
func StoreErrorsIf(permanent func(error) bool) Option {
	if permanent == nil {
		panic("idem: StoreErrorsIf(nil)")
	}
	return optionFunc(func(c *config) { c.storeError = permanent })
}

// WithRecover sets how Do recovers a key whose holder died while its fn was
// running. Without it, Do runs fn again: right when fn's effect is atomic
// with something Do can see, wrong when the dead holder may have produced
// the effect. With it, Do asks the sink first (see RecoverFunc).
func WithRecover(f RecoverFunc) Option {
	return optionFunc(func(c *config) { c.recover = f })
}

// RecoverJSON adapts a typed recovery function for WithRecover: the value it
// finds is stored as JSON, the encoding Do uses for results.
func RecoverJSON[T any](f func(ctx context.Context, key string) (T, bool, error)) RecoverFunc {
	return func(ctx context.Context, key string) ([]byte, bool, error) {
		v, found, err := f(ctx, key)
		if err != nil || !found {
			return nil, found, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false, fmt.Errorf("encoding recovered result: %w", err)
		}
		return b, true, nil
	}
}
