package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
)

// Transport returns an http.RoundTripper that sends each request through
// base (http.DefaultTransport when nil) and, while a run is active, tells
// the run which traced call sent it. Wrap the HTTP client of each tool that
// writes through HTTP with it:
//
//	client := &http.Client{Transport: runtime.Transport(nil)}
//
// An SDK that takes an *http.Client (aws-sdk-go-v2's HTTPClient option,
// openai-go's option.WithHTTPClient, stripe-go's backend config, a
// go-retryablehttp Client's HTTPClient) takes one made so.
//
// Why: a client that retries by itself (go-retryablehttp, the AWS SDK's
// retryer, openai-go, stripe-go, a loop of the tool's own that sends the
// request again after a timeout or a reset connection) sends a POST again
// when the answer to the first was lost in transit, and a service that
// does not deduplicate it applies it twice. That retry is inside the tool
// call, below the boundary where the suite injects its faults, and no
// other scenario meets it (red teams rtR #1, rtS #2: both SAFE where every
// lost answer doubled a credit or a refund). Through Transport the suite
// sees the requests each call sends (the trace's http_requests), and
// plans for each write whose baseline call sent a POST or a PATCH (or a
// request marked with WriteRequest) a lost_response scenario
// (FaultLostResponse) for each such request it sent there: that request
// (recorder.lostRequest: the first, the second, ...) reaches the service, whose answer is read and dropped, and the client gets a
// read timeout instead (lostResponseError), an error the retrying clients
// above retry on.
// With State, a call that then changed the world more than the baseline's
// same call did (two refunds for one) is a duplicate_write; a retry the
// service deduplicated (an Idempotency-Key it honors, a conditional write)
// changes nothing more, and is safe. Without State the suite cannot see
// what the service did, and the scenario is inconclusive.
//
// The call is found through the request's context (the tool's ctx, or
// one made from it: http.NewRequestWithContext(ctx, ...)), else through
// the goroutine that sends it: the call's own, or one the tool started
// while the call runs. A request no traced call sent goes to base
// untouched, as does every request while no run is active: then the cost
// is one atomic load over base's.
func Transport(base http.RoundTripper) http.RoundTripper {
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

// RoundTrip sends req through base, recording it on the traced call that
// sent it and losing its response where the run's fault says so.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if !Enabled() || inHook() {
		// No run; or State, Settle, Setup or Teardown reading or
		// seeding the world through the agent's client: the harness's
		// request, none of a call's.
		return base.RoundTrip(req)
	}
	c := sendingCall(req.Context(), writeRequest(req))
	if c == nil {
		if writeRequest(req) {
			noteUntied(req) // untied.go
		}
		return base.RoundTrip(req)
	}
	sent := sentRequest{Method: req.Method, Host: req.URL.Host, Path: req.URL.Path, Write: writeRequest(req)}
	if sent.Write {
		// A retry sends the same body; another request to the same
		// path (DynamoDB's operations are all POST /) sends another.
		sent.body, sent.shape, req = bodyDigest(req)
	}
	lose := false
	c.mu.Lock()
	x := c.rare()
	if sent.Write && c.rec.planned && c.inv.rec.fault.Kind == FaultLostResponse && !x.lostResponse && x.writes+1 >= int(c.inv.rec.lostRequest) {
		x.lostResponse, lose, sent.Lost = true, true, true
	}
	if sent.Write {
		x.writes++
	}
	sent.late = c.rec.ended
	i := len(x.sent)
	x.sent = append(x.sent, sent)
	c.mu.Unlock()
	resp, err := base.RoundTrip(req)
	if !lose || err != nil {
		c.mu.Lock()
		if resp != nil {
			x.sent[i].Status = resp.StatusCode
		}
		if lose {
			// The request did not get through: nothing was lost.
			x.lostResponse = false
			x.sent[i].Lost = false
		}
		c.mu.Unlock()
		return resp, err
	}
	// The service answered: its answer is read whole, so that what it
	// did is done, and dropped, as a read that times out after the request
	// reached the service drops it.
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	c.mu.Lock()
	x.sent[i].dropped = resp.StatusCode
	c.rec.faulted = true
	k := int(c.rec.Occurrence)
	c.mu.Unlock()
	c.inv.rec.markFired()
	lost := &InjectedError{
		Fault: Fault{Kind: FaultLostResponse, Op: c.op.Name, Occurrence: k},
		Err:   lostResponseError(req.URL.Host),
	}
	// The error FaultError gives for it, where it gives one, as for
	// the faults at the tool's boundary (Call.injected): it was the
	// timeout's whatever FaultError said.
	if fn := c.inv.rec.faultErr; fn != nil {
		if err := fn(c.op.Name, FaultLostResponse); err != nil {
			lost.Err = err
		}
	}
	return nil, lost
}

// lostResponseError is the error the client of a request whose response
// was lost gets: a read on the connection that timed out after the request
// was written ("read tcp HOST: i/o timeout"), a *net.OpError whose Timeout
// and Temporary report true. Retrying clients retry on it: aws-sdk-go-v2's
// retryer (a temporary *net.OpError, and a timeout), go-retryablehttp,
// openai-go and stripe-go (any error of the round trip), and helpers of a
// tool's own that retry only timeouts or only net.Errors. A connection
// reset (ECONNRESET) is no timeout, and a helper that retries timeouts
// (red team rtS #2's) passed it on to the tool.
func lostResponseError(host string) error {
	return &net.OpError{Op: "read", Net: "tcp", Addr: hostAddr(host), Err: os.ErrDeadlineExceeded}
}

// hostAddr is a request's host as the address of a connection.
type hostAddr string

func (a hostAddr) Network() string { return "tcp" }
func (a hostAddr) String() string  { return string(a) }

// sentRequest is one HTTP request a traced call sent through Transport.
type sentRequest struct {
	Method string `json:"method"`
	Host   string `json:"host"`
	Path   string `json:"path"`
	// Write says the request is not idempotent: a POST, a PATCH, or one
	// marked with WriteRequest.
	Write bool `json:"write,omitempty"`
	// Status is the status code of the answer the client got, 0 for
	// none (an error, a lost response).
	Status int `json:"status,omitempty"`
	// Lost says the lost_response fault dropped its answer.
	Lost bool `json:"lost,omitempty"`
	// dropped is the status code of the answer the lost_response fault
	// dropped (Lost), which the client never saw.
	dropped int
	// late says the call had returned when the request was sent: a
	// goroutine the call left running sent it (leftSending), and the
	// call's window does not hold what it did (resentInside).
	late bool
	// body is a digest of the request's body (bodyDigest): the requests
	// a client sent again are those of the same method, host, path and
	// body.
	body uint64
	// shape is a digest of the body's form without what a client makes
	// anew for each attempt (bodyShape): a JSON object's keys without
	// their values, a multipart body without its boundary; 0 for any
	// other body. A client that puts a token or a time made per attempt
	// in the body sends a request of another body and the same shape.
	shape uint64
}

// bodyDigest returns a digest of req's body, the digest of its shape
// (bodyShape), and the request to send: req itself when its body can be
// read again (GetBody, or none), else a copy of req whose body is what
// was read.
func bodyDigest(req *http.Request) (uint64, uint64, *http.Request) {
	h := fnv.New64a()
	var shape uint64
	// digest reads body into h, and the shape of its first maxShaped
	// bytes where that is all of it.
	digest := func(b io.Reader) {
		head, _ := io.ReadAll(io.LimitReader(b, maxShaped+1))
		h.Write(head)
		if len(head) <= maxShaped {
			shape = bodyShape(req.Header.Get("Content-Type"), head)
			return
		}
		_, _ = io.Copy(h, b)
	}
	switch {
	case req.Body == nil || req.Body == http.NoBody:
	case req.GetBody != nil:
		if b, err := req.GetBody(); err == nil {
			digest(b)
			_ = b.Close()
		}
	default:
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		digest(bytes.NewReader(b))
		cp := req.Clone(req.Context())
		cp.Body = &readBody{Reader: bytes.NewReader(b), err: err}
		cp.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		req = cp
	}
	return h.Sum64(), shape, req
}

// maxShaped is the largest body whose shape bodyDigest takes: an API
// request's, not an upload's.
const maxShaped = 1 << 20

// bodyShape returns a digest of body's form without what a client makes
// anew for each attempt of a request: for a JSON object, its keys at
// every depth (a list's objects' keys merged), without the values (a
// request token made per attempt, a sent_at); for a multipart body, the
// body with its boundary (Content-Type's) taken out. 0 for any other
// body: another request to the same path (an RPC API's, as DynamoDB's,
// whose operations are all POST /) is told from a retry by its body, as
// before.
func bodyShape(contentType string, body []byte) uint64 {
	h := fnv.New64a()
	if mt, params, err := mime.ParseMediaType(contentType); err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
		h.Write([]byte("multipart\x00"))
		h.Write(bytes.ReplaceAll(body, []byte(params["boundary"]), nil))
		return h.Sum64() | 1
	}
	var v any
	if json.Unmarshal(body, &v) != nil {
		return 0
	}
	obj, ok := v.(map[string]any)
	if !ok || len(obj) == 0 {
		return 0
	}
	keys := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				keys[prefix+"/"+k] = true
				walk(prefix+"/"+k, e)
			}
		case []any:
			for _, e := range x {
				walk(prefix+"[]", e)
			}
		}
	}
	walk("", obj)
	h.Write([]byte("json\x00"))
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	return h.Sum64() | 1
}

// readBody is a body read ahead of sending: its bytes, then the error the
// read ended with, if any.
type readBody struct {
	*bytes.Reader
	err error
}

func (r *readBody) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF && r.err != nil {
		err = r.err
	}
	return n, err
}

func (r *readBody) Close() error { return nil }

// what names the request: its method, host and path.
func (s sentRequest) what() string { return s.Method + " " + s.Host + s.Path }

type writeRequestKey struct{}

// WriteRequest returns req marked as a request that is not idempotent, for
// Transport: a PUT or a DELETE whose service applies each one it gets (a
// PUT that appends, a DELETE of "the oldest entry"). POST and PATCH
// requests are taken as such without it. A lost_response scenario is
// planned only for writes whose calls sent one.
func WriteRequest(req *http.Request) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), writeRequestKey{}, true))
}

// writeRequest reports whether req is not idempotent (WriteRequest).
func writeRequest(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPatch:
		return true
	}
	marked, _ := req.Context().Value(writeRequestKey{}).(bool)
	return marked
}

// sendingCall returns the traced call of an active run that sends the
// request whose context is ctx, or nil: the call ctx comes from, else the
// call in flight on the calling goroutine, or on the goroutine that
// started it (a tool that sends its request from a goroutine of its own,
// without its ctx); else, for a write request, the write a goroutine the
// call left running sends it for (leftSending).
func sendingCall(ctx context.Context, write bool) *Call {
	if ctx != nil {
		if c, ok := ctx.Value(callKey{}).(*Call); ok && c != nil {
			if c.inv == nil || c.inv.rec.stopped.Load() {
				return nil // no run's call, or an ended run's
			}
			return c
		}
	}
	recs := activeRecorders()
	if len(recs) == 0 {
		return nil
	}
	gid := goroutineID()
	if c := openOnAny(recs, gid); c != nil {
		return c
	}
	// A goroutine the tool started: its parents lead to the call's.
	all := snapshotSome(nil)
	parent := make(map[uint64]uint64, len(all))
	for i := range all {
		parent[all[i].id] = all[i].parent
	}
	for id, i := parent[gid], 0; id != 0 && i < 64; id, i = parent[id], i+1 {
		if c := openOnAny(recs, id); c != nil {
			return c
		}
	}
	if write {
		return leftSending(recs, gid, parent) // untied.go
	}
	return nil
}

// openOnAny returns the innermost call of the runs recs that goroutine gid
// runs now (begun, not ended), or nil.
func openOnAny(recs []*recorder, gid uint64) *Call {
	for _, r := range recs {
		if r.stopped.Load() {
			continue
		}
		r.mu.Lock()
		for i := len(r.calls) - 1; i >= 0; i-- {
			chunk := r.calls[i]
			for j := len(chunk) - 1; j >= 0; j-- {
				c := chunk[j]
				if c.gid != gid {
					continue
				}
				c.mu.Lock()
				ended := c.rec.ended
				c.mu.Unlock()
				if !ended {
					r.mu.Unlock()
					return c
				}
			}
		}
		r.mu.Unlock()
	}
	return nil
}
