package idem

import (
	"context"
	"sync"
	"time"
)

// MemoryBackend is a Backend in the process's memory: one map under a
// mutex, so a claim is atomic by construction. Keys do not survive the
// process. The zero value is not usable; call NewMemoryBackend.
type MemoryBackend struct {
	mu      sync.Mutex
	recs    map[string]*memRecord
	waiters map[string]map[chan struct{}]struct{} // closed at the next Complete or Release of the key
	now     func() time.Time
}

var _ Watcher = (*MemoryBackend)(nil)

// Watch implements Watcher.
func (m *MemoryBackend) Watch(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	m.mu.Lock()
	defer m.mu.Unlock()
	set, ok := m.waiters[key]
	if !ok {
		set = make(map[chan struct{}]struct{})
		m.waiters[key] = set
	}
	set[ch] = struct{}{}
	return ch, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if set, ok := m.waiters[key]; ok {
			delete(set, ch)
			if len(set) == 0 {
				delete(m.waiters, key)
			}
		}
	}
}

// notifyLocked wakes the watchers of key.
func (m *MemoryBackend) notifyLocked(key string) {
	for ch := range m.waiters[key] {
		close(ch)
	}
	delete(m.waiters, key)
}

type memRecord struct {
	state  State
	params string
	token  string
	until  time.Time // lease end when Pending, expiry when Done
	result []byte
	failed bool
}

// NewMemoryBackend returns an empty in-memory backend.
func NewMemoryBackend() *MemoryBackend {
	return &MemoryBackend{recs: make(map[string]*memRecord), waiters: make(map[string]map[chan struct{}]struct{}), now: time.Now}
}

// Claim implements Backend.
func (m *MemoryBackend) Claim(ctx context.Context, key string, c Claim) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	r, ok := m.recs[key]
	switch {
	case !ok || (r.state == Done && !now.Before(r.until)):
		m.recs[key] = &memRecord{state: Pending, params: c.Params, token: c.Token, until: now.Add(c.Lease)}
		return Record{State: Pending, Params: c.Params, Owned: true}, nil
	case r.state == Pending && !now.Before(r.until) && r.params == c.Params:
		r.token, r.until = c.Token, now.Add(c.Lease)
		return Record{State: Pending, Params: c.Params, Owned: true, Abandoned: true}, nil
	}
	return Record{State: r.state, Params: r.params, Result: r.result, Failed: r.failed}, nil
}

// Extend implements Backend.
func (m *MemoryBackend) Extend(ctx context.Context, key, token string, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || r.state != Pending || r.token != token {
		return ErrLeaseLost
	}
	r.until = m.now().Add(lease)
	return nil
}

// Complete implements Backend.
func (m *MemoryBackend) Complete(ctx context.Context, key, token string, out Outcome, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || r.state != Pending || r.token != token {
		return ErrLeaseLost
	}
	r.state, r.token, r.until = Done, "", m.now().Add(ttl)
	r.result, r.failed = append([]byte(nil), out.Result...), out.Failed
	m.notifyLocked(key)
	return nil
}

// Release implements Backend.
func (m *MemoryBackend) Release(ctx context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[key]; ok && r.state == Pending && r.token == token {
		delete(m.recs, key)
		m.notifyLocked(key)
	}
	return nil
}

// Purge implements Backend.
func (m *MemoryBackend) Purge(ctx context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var n int64
	for k, r := range m.recs {
		if r.state == Done && !now.Before(r.until) {
			delete(m.recs, k)
			n++
		}
	}
	return n, nil
}

// Len returns the number of records, live or expired, that m holds.
func (m *MemoryBackend) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.recs)
}
