package runtime

import (
	"context"
	"fmt"
	"sync"
)

// The wrappers below have exactly the shape agentidem-gen emits (see
// examples/refund/agentidem_gen.go), so the runtime is tested through the
// contract generated code relies on.

type store struct {
	mu   sync.Mutex
	rows map[string]int
	puts int
}

func newStore() *store { return &store{rows: map[string]int{}} }

var opPut = &Op{Name: "put", Kind: KindWrite, Params: []string{"key", "val"}}

func (s *store) put(ctx context.Context, key string, val int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rows[key] = val
	s.puts++
	return nil
}

func (s *store) putTraced(ctx context.Context, key string, val int) (aiErr error) {
	if !Enabled() {
		return s.put(ctx, key, val)
	}
	aiCall, aiCtx := Begin(ctx, opPut, []any{key, val}, []any{key}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	aiErr = s.put(aiCtx, key, val)
	if aiLost := aiCall.Finish(aiErr); aiLost != nil {
		return aiLost
	}
	return
}

var opGet = &Op{Name: "get", Kind: KindRead, Params: []string{"key"}}

func (s *store) get(ctx context.Context, key string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.rows[key]
	if !ok {
		return 0, fmt.Errorf("no row %s", key)
	}
	return v, nil
}

func (s *store) getTraced(ctx context.Context, key string) (aiR0 int, aiErr error) {
	if !Enabled() {
		return s.get(ctx, key)
	}
	aiCall, aiCtx := Begin(ctx, opGet, []any{key}, nil, []any{key})
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	aiR0, aiErr = s.get(aiCtx, key)
	if aiLost := aiCall.Finish(aiErr, aiR0); aiLost != nil {
		return *new(int), aiLost
	}
	return
}

// login takes a secret that must never reach a trace, and is keyed by it.
var opLogin = &Op{Name: "login", Kind: KindWrite, Params: []string{"user", "password"}, RedactIdentity: true}

func loginTraced(ctx context.Context, user, password string) (aiErr error) {
	if !Enabled() {
		return nil
	}
	aiCall, aiCtx := Begin(ctx, opLogin, []any{user, Redacted}, []any{user, password}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	_ = aiCtx
	if aiLost := aiCall.Finish(nil); aiLost != nil {
		return aiLost
	}
	return
}

// notify has no context and no error result.
var opNotify = &Op{Name: "notify", Kind: KindWrite, Params: []string{"msg"}, NoError: true}

var notified struct {
	sync.Mutex
	msgs []string
}

func notify(msg string) {
	if msg == "boom" {
		panic("notify exploded")
	}
	notified.Lock()
	notified.msgs = append(notified.msgs, msg)
	notified.Unlock()
}

func notifyTraced(msg string) {
	if !Enabled() {
		notify(msg)
		return
	}
	aiCall, _ := Begin(nil, opNotify, []any{msg}, []any{msg}, nil)
	_ = aiCall.Start()
	defer aiCall.Recover(nil)
	notify(msg)
	_ = aiCall.Finish(nil)
}

// explode panics; it has an error result.
var opExplode = &Op{Name: "explode", Kind: KindWrite, Params: []string{"n"}}

func explodeTraced(ctx context.Context, n int) (aiErr error) {
	aiCall, _ := Begin(ctx, opExplode, []any{n}, []any{n}, nil)
	if aiErr = aiCall.Start(); aiErr != nil {
		return
	}
	defer aiCall.Recover(&aiErr)
	panic(fmt.Sprintf("explode %d", n))
}
