package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingObserver keeps every call it is told about.
type recordingObserver struct {
	mu      sync.Mutex
	started []ObservedCall
	ended   []ObservedCall
	ctxs    []context.Context
}

type obsKey struct{}

func (o *recordingObserver) StartCall(ctx context.Context, c *ObservedCall) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started = append(o.started, *c)
	if ctx == nil {
		return nil
	}
	return context.WithValue(ctx, obsKey{}, c.Op.Name)
}

func (o *recordingObserver) EndCall(ctx context.Context, c *ObservedCall) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, *c)
	o.ctxs = append(o.ctxs, ctx)
}

var opPay = &Op{Name: "pay", Kind: KindWrite, Params: []string{"key", "amount"}, Idempotent: true}

// payTraced is a write whose sink says "replayed" when asked to.
func payTraced(ctx context.Context, key string, amount int, replay bool) (aiErr error) {
	if !Enabled() {
		return nil
	}
	aiCall, aiCtx := Begin(ctx, opPay, []any{key, amount}, []any{key}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	if aiCtx.Value(obsKey{}) != "pay" {
		return errors.New("the tool did not get the observer's context")
	}
	if replay {
		MarkReplayed(aiCtx)
	}
	if aiLost := aiCall.Finish(nil); aiLost != nil {
		return aiLost
	}
	return
}

func TestObserverSeesCallsOutsideRuns(t *testing.T) {
	require.False(t, Enabled())
	o := &recordingObserver{}
	remove := SetObserver(o, []byte("k1"))
	require.True(t, Enabled(), "an observer makes wrappers take the traced path")

	s := newStore()
	require.NoError(t, s.putTraced(context.Background(), "a", 1))
	_, err := s.getTraced(context.Background(), "missing")
	require.Error(t, err)
	require.NoError(t, payTraced(context.Background(), "k", 5, true))
	require.NoError(t, loginTraced(context.Background(), "ann", "hunter2"))
	notifyTraced("hi")

	// Calls inside a run belong to the run, not to the observer.
	tr, err := RunTraced(context.Background(), "run", func(ctx context.Context) error { return s.putTraced(ctx, "b", 2) })
	require.NoError(t, err)
	require.Len(t, tr.Ops, 1)

	remove()
	remove() // twice is harmless
	assert.False(t, Enabled(), "removing the observer restores the inactive path")
	require.NoError(t, s.putTraced(context.Background(), "c", 3))

	require.Len(t, o.ended, 5, "one end per observed call: %+v", o.ended)
	require.Len(t, o.started, 5)
	put, get, pay, login, note := o.ended[0], o.ended[1], o.ended[2], o.ended[3], o.ended[4]

	assert.Equal(t, "put", put.Op.Name)
	assert.Equal(t, StatusSuccess, put.Status)
	assert.True(t, strings.HasPrefix(put.Identity, "hmac-sha256:"), put.Identity)
	assert.Len(t, put.Identity, len("hmac-sha256:")+64)
	assert.Equal(t, put.Identity, put.Entity, "a write's entity defaults to its identity")
	assert.Contains(t, put.Site, "observer_test.go:", "the site is the agent's call, not the wrapper")
	assert.Empty(t, put.Args, "no entity= and not idempotent: no argument digest")
	assert.False(t, put.Replayed)

	assert.Equal(t, StatusFailed, get.Status)
	assert.EqualError(t, get.Err, "no row missing")
	assert.Empty(t, get.Identity, "reads have no identity")
	assert.NotEmpty(t, get.Entity, "the read's entity= is digested")

	assert.True(t, pay.Replayed, "MarkReplayed reaches the observed call")
	assert.Equal(t, StatusSuccess, pay.Status)

	for _, c := range append(o.started, o.ended...) {
		for _, s := range []string{c.Identity, c.Entity, c.Args, c.Site} {
			assert.NotContains(t, s, "hunter2", "a redacted value never reaches the observer")
		}
	}
	assert.NotEqual(t, "", login.Identity)

	assert.Equal(t, "notify", note.Op.Name)
	assert.Nil(t, o.ctxs[4], "a tool without a context gets none")
	assert.Equal(t, "put", o.ctxs[0].Value(obsKey{}), "EndCall gets the context StartCall returned")
}

func TestObserverDigestsAreKeyed(t *testing.T) {
	digest := func(key []byte, id string, amount int) ObservedCall {
		o := &recordingObserver{}
		remove := SetObserver(o, key)
		defer remove()
		require.NoError(t, payTraced(context.Background(), id, amount, false))
		require.Len(t, o.ended, 1)
		return o.ended[0]
	}
	a1, a2 := digest([]byte("shared secret"), "k", 5), digest([]byte("shared secret"), "k", 5)
	assert.Equal(t, a1.Identity, a2.Identity, "one key: equal identities have equal digests (across processes)")
	assert.Equal(t, a1.Args, a2.Args)
	assert.Equal(t, a1.KeyID, a2.KeyID)
	assert.Len(t, a1.KeyID, 16)
	assert.NotEqual(t, a1.KeyID, digest([]byte("another secret"), "k", 5).KeyID)
	assert.NotEqual(t, a1.Identity, digest([]byte("shared secret"), "other", 5).Identity)
	assert.NotEqual(t, a1.Identity, digest([]byte("another secret"), "k", 5).Identity, "the digest depends on the key")
	assert.NotEqual(t, digest(nil, "k", 5).Identity, digest(nil, "k", 5).Identity, "no key: a fresh random key each time")

	// The args digest leaves out the identity: a new key for the same work
	// keeps it, new work changes it.
	assert.Equal(t, a1.Args, digest([]byte("shared secret"), "k2", 5).Args)
	assert.NotEqual(t, a1.Args, digest([]byte("shared secret"), "k", 6).Args)
}

func TestObserverSeesPanics(t *testing.T) {
	o := &recordingObserver{}
	remove := SetObserver(o, nil)
	defer remove()
	func() {
		defer func() { assert.Equal(t, "notify exploded", recover(), "the panic goes on as without observer") }()
		notifyTraced("boom")
	}()
	require.Len(t, o.ended, 1)
	assert.Equal(t, StatusFailed, o.ended[0].Status)
	var pe *PanicError
	assert.ErrorAs(t, o.ended[0].Err, &pe)
}

func TestRestArgs(t *testing.T) {
	assert.Equal(t, `[5]`, restArgs([]any{"k", 5}, []any{"k"}))
	assert.Equal(t, `["k",5]`, restArgs([]any{"k", 5}, []any{"other"}))
	assert.Equal(t, `["a"]`, restArgs([]any{"a", "a"}, []any{"a"}), "one identity value removes one argument")
	assert.Equal(t, `["[redacted]"]`, restArgs([]any{"u", Redacted}, []any{"u", "secret"}))
}

func TestObservedCall(t *testing.T) {
	c, _ := Begin(context.Background(), opGet, []any{"x"}, nil, []any{"x"})
	assert.False(t, c.Observed(), "no observer: the call passes through")
	o := &recordingObserver{}
	remove := SetObserver(o, nil)
	c, _ = Begin(context.Background(), opGet, []any{"x"}, nil, []any{"x"})
	assert.True(t, c.Observed())
	assert.False(t, c.Active(), "an observed call belongs to no run")
	require.NoError(t, c.Start())
	require.NoError(t, c.Finish(nil, 1))
	require.NoError(t, c.Finish(nil, 1))
	remove()
	assert.Len(t, o.ended, 1, "a second Finish reports nothing more")
}

func TestObserverUnencodableIdentityHasNoDigest(t *testing.T) {
	o := &recordingObserver{}
	remove := SetObserver(o, nil)
	defer remove()
	op := &Op{Name: "send", Kind: KindWrite, Params: []string{"f"}}
	for range 2 {
		c, _ := Begin(context.Background(), op, []any{"x"}, []any{func() {}}, nil)
		require.NoError(t, c.Finish(nil))
	}
	require.Len(t, o.ended, 2)
	for _, c := range o.ended {
		assert.Empty(t, c.Identity, "no digest that would make every such call one identity")
		assert.Empty(t, c.Entity)
		assert.Contains(t, c.IdentityError, "cannot be canonicalized")
	}
}
