package postgres

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"sync"
	"time"

	"github.com/agentidem/agentidem-go/idem"
	"github.com/agentidem/agentidem-go/runtime"
	"github.com/jackc/pgx/v5"
)

var _ idem.Watcher = (*Backend)(nil)

// notifyChannel is the channel the idem_keys trigger notifies (migration
// 0002) with md5(idem_key) when a pending key is completed or released.
const notifyChannel = "idem_keys"

// retryListen is how long Watch leaves waiters to polling after the
// listening connection failed, before it tries to connect again.
const retryListen = time.Second

// listener holds one connection of its own (not from the pool) that
// LISTENs on notifyChannel, and wakes the waiters of each notified key.
type listener struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]bool // by md5 hex of the key
	conn     *pgx.Conn
	cancel   context.CancelFunc
	done     chan struct{}
	failedAt time.Time
	closed   bool
}

// Watch implements idem.Watcher with LISTEN/NOTIFY: the channel is closed
// when the key's holder completes or releases it, in this process or any
// other. When no listening connection can be had, the channel is never
// closed and the waiter finds out by polling, as it does anyway for holders
// that die; a connection lost while waiting wakes every waiter, so that
// each looks again and nothing sent meanwhile is missed.
func (b *Backend) Watch(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	l := &b.listen
	if !l.ensure(b) {
		return ch, func() {}
	}
	h := keyHash(key)
	l.mu.Lock()
	if l.subs == nil {
		l.subs = map[string]map[chan struct{}]bool{}
	}
	if l.subs[h] == nil {
		l.subs[h] = map[chan struct{}]bool{}
	}
	l.subs[h][ch] = true
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		if set := l.subs[h]; set[ch] {
			delete(set, ch)
			if len(set) == 0 {
				delete(l.subs, h)
			}
		}
		l.mu.Unlock()
	}
}

func keyHash(key string) string {
	sum := md5.Sum([]byte(key))
	return hex.EncodeToString(sum[:])
}

// ensure starts listening if it is not, and reports whether a listening
// connection is up: LISTEN has returned, so no later notification is
// missed.
func (l *listener) ensure(b *Backend) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return true
	}
	if l.closed || !l.failedAt.IsZero() && time.Since(l.failedAt) < retryListen {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, b.pool.Config().ConnConfig.Copy())
	if err == nil {
		if _, err = conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
			conn.Close(ctx)
		}
	}
	if err != nil {
		l.failedAt = time.Now()
		return false
	}
	lctx, lcancel := context.WithCancel(context.Background())
	l.conn, l.cancel, l.done = conn, lcancel, make(chan struct{})
	// The first Watch may come inside a tool call of a suite's scenario:
	// the loop is the backend's, not the agent's (runtime.GoInfrastructure).
	runtime.GoInfrastructure(func() { l.loop(lctx, conn, l.done) })
	return true
}

// loop wakes the waiters of each notified key until the connection fails
// or the backend closes; then it wakes every waiter.
func (l *listener) loop(ctx context.Context, conn *pgx.Conn, done chan struct{}) {
	defer close(done)
	for {
		n, err := conn.WaitForNotification(ctx)
		l.mu.Lock()
		if err != nil {
			for h, set := range l.subs {
				for ch := range set {
					close(ch)
				}
				delete(l.subs, h)
			}
			l.conn = nil
			l.failedAt = time.Now()
			l.mu.Unlock()
			closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
			conn.Close(closeCtx)
			cancel()
			return
		}
		for ch := range l.subs[n.Payload] {
			close(ch)
		}
		delete(l.subs, n.Payload)
		l.mu.Unlock()
	}
}

// close stops listening for good.
func (l *listener) close() {
	l.mu.Lock()
	l.closed = true
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
