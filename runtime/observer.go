package runtime

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"sync"
	"sync/atomic"
)

// Observer sees every traced call that no run claims: in production, each
// call of a generated wrapper. Package github.com/agentidem/agentidem-go/otel
// implements it with OpenTelemetry spans; install one with SetObserver.
//
// Calls made inside a run (tests, RunTraced, Run) belong to the run and are
// not observed.
type Observer interface {
	// StartCall is called before the tool runs. It returns the context
	// the tool receives (a span's, for example); ctx is nil for a tool
	// without a context parameter, and StartCall may then return nil.
	StartCall(ctx context.Context, call *ObservedCall) context.Context
	// EndCall is called once when the tool returned or panicked, with the
	// context StartCall returned and the same call, its outcome filled in.
	EndCall(ctx context.Context, call *ObservedCall)
}

// ObservedCall is what an Observer is told about one call. Identity, entity
// and arguments are given only as keyed digests, never as values.
type ObservedCall struct {
	// Op describes the annotated function.
	Op *Op
	// Identity is the keyed digest of the canonical identity of a write
	// ("hmac-sha256:<hex>"), "" for reads and when IdentityError is set. Two calls have equal digests
	// exactly when their identities are equal and their processes used
	// the same key (see SetObserver).
	Identity string
	// IdentityError says why the identity could not be computed.
	IdentityError string
	// Entity is the keyed digest of what the op touches: the identity for
	// writes without entity=, "" for reads without entity=.
	Entity string
	// Args is the keyed digest of the recorded arguments of a write other
	// than those equal to an identity value (redacted ones count as the
	// same placeholder), so that two attempts of one piece of work can be
	// told from two pieces of work. It is computed for writes with an
	// entity= of their own or declared idempotent, "" otherwise.
	Args string
	// Site is the call site, file:line of the code that called the
	// wrapper.
	Site string
	// KeyID names the digest key without revealing it (16 hex digits):
	// digests are comparable exactly when their KeyIDs are equal.
	KeyID string

	// Status is the outcome (StatusSuccess or StatusFailed) at EndCall.
	Status Status
	// Err is the tool's error, or a *PanicError when it panicked.
	Err error
	// Replayed says the tool's sink answered from a stored result
	// (MarkReplayed): not a second effect.
	Replayed bool
	// Redacts says the call has redacted arguments (the wrapper handed
	// their values to Call.Redact): Err may quote them, and its text
	// must not leave the process, whether or not the identity uses them.
	Redacts bool
}

// observerState is the installed observer and its digest key.
type observerState struct {
	obs   Observer
	keyID string
	pool  sync.Pool // of *digester (HMAC-SHA256 under the key)
}

var observer atomic.Pointer[observerState]

// SetObserver installs o for every traced call outside a run and returns a
// function that removes it. While an observer is installed, wrappers take
// their traced path (Enabled is true), so each call costs the observer's
// work plus the digests; without one the inactive path stays one atomic load.
//
// key keys the HMAC-SHA256 digests of identities, entities and arguments.
// Digests are comparable only between processes that used the same key: give
// the same secret to every process whose spans are audited together (and
// across restarts). A nil or empty key means a random key for this process,
// so digests never reveal values but only match within the process.
//
// Installing a second observer replaces the first; the returned function
// removes only its own observer.
func SetObserver(o Observer, key []byte) (remove func()) {
	if o == nil {
		panic("runtime: SetObserver with a nil Observer")
	}
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("runtime: no randomness for the observer key: " + err.Error())
		}
	} else {
		key = append([]byte(nil), key...)
	}
	st := &observerState{obs: o}
	st.pool.New = func() any { return &digester{h: hmac.New(sha256.New, key)} }
	h := hmac.New(sha256.New, key)
	h.Write([]byte("agentidem key id"))
	st.keyID = hex.EncodeToString(h.Sum(nil)[:8])
	if prev := observer.Swap(st); prev == nil {
		activeRuns.Add(1) // wrappers now take the traced path
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if observer.CompareAndSwap(st, nil) {
				activeRuns.Add(-1)
			}
		})
	}
}

// observe is Begin for a call that no run claims: it opens an observed call
// when an observer is installed, else passes the call through. site is the
// call site's program counter, as Begin reads it.
func observe(ctx context.Context, op *Op, args, identity, entity []any, site uintptr) (*Call, context.Context) {
	st := observer.Load()
	if st == nil {
		return passThrough, ctx
	}
	// One allocation for the call and what the observer is told.
	a := &struct {
		c  Call
		ob observed
		oc ObservedCall
	}{}
	oc := &a.oc
	oc.Op, oc.KeyID = op, st.keyID
	if site != 0 {
		oc.Site = siteOf(site)
	}
	d := st.pool.Get().(*digester)
	d.digests(oc, args, identity, entity)
	st.pool.Put(d)
	octx := st.obs.StartCall(ctx, oc)
	parent := octx
	if parent == nil {
		parent = context.Background()
	}
	a.ob = observed{call: oc, ctx: octx, o: st.obs}
	c := &a.c
	c.Context, c.op, c.obs = parent, op, &a.ob
	if ctx == nil {
		return c, nil
	}
	return c, c
}

// digester computes keyed digests with reusable buffers.
type digester struct {
	h        hash.Hash
	buf, ids []byte
}

const digestPrefix = "hmac-sha256:"

// sum is the keyed digest of b: "hmac-sha256:<hex>".
func (d *digester) sum(b []byte) string {
	d.h.Reset()
	d.h.Write(b)
	var raw [sha256.Size]byte
	var out [len(digestPrefix) + 2*sha256.Size]byte
	copy(out[:], digestPrefix)
	hex.Encode(out[len(digestPrefix):], d.h.Sum(raw[:0]))
	return string(out[:])
}

// digests fills the keyed digests of identity, entity and arguments.
func (d *digester) digests(oc *ObservedCall, args, identity, entity []any) {
	if oc.Op.Kind == KindWrite {
		var err error
		d.buf, err = appendCanonicalList(d.buf[:0], identity)
		if err != nil {
			// No digest: calls whose identity cannot be encoded must
			// not all look like one identity.
			oc.IdentityError = errorText(err)
			return
		}
		oc.Identity = d.sum(d.buf)
		if entity != nil || oc.Op.Idempotent {
			// Only an explicit entity or the idempotent declaration
			// makes the other arguments tell attempts from work.
			d.buf = d.restArgs(d.buf[:0], args, identity)
			oc.Args = d.sum(d.buf)
		}
	}
	switch {
	case entity != nil:
		var err error
		if d.buf, err = appendCanonicalList(d.buf[:0], entity); err == nil {
			oc.Entity = d.sum(d.buf)
		}
	case oc.Op.Kind == KindWrite:
		oc.Entity = oc.Identity
	}
}

// restArgs appends the canonical list of the arguments that are not equal
// to one of the identity values (each identity value removes one argument;
// the first eight identity values are considered).
func (d *digester) restArgs(b []byte, args, identity []any) []byte {
	var seg [8][2]int
	var used [8]bool
	n := 0
	d.ids = d.ids[:0]
	for _, v := range identity {
		if n == len(seg) {
			break
		}
		start := len(d.ids)
		var err error
		if d.ids, err = appendCanonical(d.ids, v); err != nil {
			d.ids = d.ids[:start]
			continue
		}
		seg[n] = [2]int{start, len(d.ids)}
		n++
	}
	b = append(b, '[')
	kept := 0
next:
	for _, v := range args {
		mark := len(b)
		if kept > 0 {
			b = append(b, ',')
		}
		at := len(b)
		b = appendValue(b, v)
		for i := 0; i < n; i++ {
			if !used[i] && bytes.Equal(b[at:], d.ids[seg[i][0]:seg[i][1]]) {
				used[i] = true
				b = b[:mark]
				continue next
			}
		}
		kept++
	}
	return append(b, ']')
}

// restArgs is digester.restArgs as a string, for tests.
func restArgs(args, identity []any) string {
	var d digester
	return string(d.restArgs(nil, args, identity))
}

// Observed reports whether an Observer sees the call: a call outside any run
// while an observer is installed. Its methods then report to the observer
// and inject nothing.
func (c *Call) Observed() bool { return c.obs != nil }

// observed is the observer's side of a Call outside a run.
type observed struct {
	call *ObservedCall
	ctx  context.Context // what StartCall returned
	o    Observer
	done atomic.Bool
}

// observeEnd reports the outcome of an observed call to its observer, once.
func (c *Call) observeEnd(err error) {
	ob := c.obs
	if ob == nil || !ob.done.CompareAndSwap(false, true) {
		return
	}
	ob.call.Err = err
	ob.call.Status = StatusSuccess
	if err != nil {
		ob.call.Status = StatusFailed
	}
	c.mu.Lock()
	ob.call.Replayed = c.rec.Replayed
	c.mu.Unlock()
	ob.o.EndCall(ob.ctx, ob.call)
}

// observePanic reports a panic of the tool as the call's end.
func (c *Call) observePanic(v any) {
	if c.obs != nil {
		c.observeEnd(&PanicError{Op: c.op.Name, Value: v})
	}
}
