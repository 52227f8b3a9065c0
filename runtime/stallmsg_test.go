package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A real deadlock through the test's HTTP server: the agent holds a lock
// across its HTTP calls, and the handler needs it, for sixteen requests at
// once. The stall is reported in bounded time, and its message tells each
// kind of wait once, counted: before, it named every goroutine (about 6 KB
// here, idle connections and transport loops included), and the handler
// blocked on the lock was one line among forty.
func TestStallMessageTellsEachKindOfWaitOnce(t *testing.T) {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
	}))
	defer func() { srv.CloseClientConnections(); srv.Close() }()
	post := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		if resp, err := srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}
	agent := func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() { post(ctx) })
		}
		err := tracedPut(ctx, func(string) {}, "k")
		wg.Wait()
		return err
	}
	s := NewSuite("stall", agent, OnlyScenario(ScenarioBaseline), StallTimeout(300*time.Millisecond))
	endSuite(t, s)
	msg := baselineStall(t, s)
	for _, want := range []string{
		"delivery 1 (16 goroutines: ",
		"are waiting for an HTTP response at stallmsg_test.go:",
		"are blocked on a sync.Mutex at stallmsg_test.go:",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if len(msg) > 700 || strings.Contains(msg, "netpoll.go") {
		t.Errorf("a %d-byte message, or one naming idle connections:\n%s", len(msg), msg)
	}
}

// baselineStall runs s's baseline and returns its stall message, failing
// t when the baseline did not stall.
func baselineStall(t *testing.T, s *Suite) string {
	t.Helper()
	res, _ := s.Baseline(context.Background())
	for _, f := range res.Findings {
		if f.Code == CodeStalled {
			return f.Message
		}
	}
	t.Fatalf("no stall: %v", res.Findings)
	return ""
}
