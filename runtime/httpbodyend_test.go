package runtime

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"testing"
	"time"
)

// A goroutine that read an HTTP/1 response body to its end waits on a channel (chan receive, in net/http's bodyEOFSignal)
// for the transport's read loop to take the connection back, which it
// does by itself. Taken for blocked, it was quiet: on a loaded machine,
// where the read loop runs late, TestCheckThenBookOverHTTPStillCaught's
// first delivery went on alone while the other was in that wait after
// its find ("delivery 2 is blocked on a channel receive at
// lockservice_test.go:143", 1 run of 30 under -race beside CPU burners),
// booked before the other read, and the check-then-book was missed. The
// read loop is held here with the client trace's PutIdleConn, which it
// calls before it lets the reader go. (One that closes the body early
// waits in the same place for the read loop to end, which holds no hook.)
func TestReaderAtAnHTTPBodysEndIsBusy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "true") }))
	defer srv.Close()
	{
		hold, held := make(chan struct{}), make(chan struct{})
		trace := &httptrace.ClientTrace{PutIdleConn: func(error) { close(held); <-hold }}
		done := make(chan error, 1)
		id := make(chan uint64, 1)
		go func() {
			id <- goroutineID()
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, srv.URL, nil)
			resp, err := srv.Client().Do(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		gid := <-id
		<-held
		var g *gInfo
		// The reader reaches its wait a moment after the read loop
		// reached PutIdleConn.
		for deadline := time.Now().Add(10 * time.Second); g == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			for _, x := range snapshotGoroutines() {
				if x.id == gid && x.state == "chan receive" && slices.ContainsFunc(x.funcs, func(f string) bool { return strings.HasPrefix(f, "net/http.(*bodyEOFSignal).") }) {
					g = &x
				}
			}
		}
		if g == nil {
			close(hold)
			t.Fatalf("the reader never waited for the read loop")
		}
		if busy, why := g.busy(time.Time{}); !busy {
			t.Errorf("the reader at its body's end is quiet: %s %q", g.state, g.funcs)
		} else if why != httpBodyEnd {
			t.Errorf("busy for %q", why)
		}
		close(hold)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
