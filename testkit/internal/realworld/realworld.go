// Package realworld holds tools written the way real ones are, for
// testkit's tests of ordinary Go: tools with and without a context, a
// generic tool, tools whose results JSON cannot encode, a tool that blocks.
package realworld

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"strings"
	"sync"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Desk is a help desk: tickets by key.
type Desk struct {
	mu      sync.Mutex
	tickets map[string]int // key -> times opened
	next    int
}

// NewDesk returns an empty desk.
func NewDesk() *Desk { return &Desk{tickets: map[string]int{}} }

// Opened is how many tickets were opened in all.
func (d *Desk) Opened() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.next
}

// Find reports whether a ticket with key is open.
//
//agentidem:read name=findTicket entity=key
func (d *Desk) Find(ctx context.Context, key string) (bool, error) {
	return d.find(key), nil
}

// Open opens a ticket for key, whatever is open already.
//
//agentidem:write name=openTicket identity=key
func (d *Desk) Open(ctx context.Context, key string) (string, error) {
	return d.open(key), nil
}

// FindNoCtx is Find for a tool that takes no context.
//
//agentidem:read name=findTicketNoCtx entity=key
func (d *Desk) FindNoCtx(key string) (bool, error) { return d.find(key), nil }

// OpenNoCtx is Open for a tool that takes no context.
//
//agentidem:write name=openTicketNoCtx identity=key
func (d *Desk) OpenNoCtx(key string) (string, error) { return d.open(key), nil }

// Notify posts key to a webhook at url, whose receiver keeps one
// notification per key: a repeat changes nothing.
//
//agentidem:write name=notify identity=key idempotent
func Notify(ctx context.Context, url, key string) error {
	return post(ctx, url, strings.NewReader(key), http.StatusNoContent, "notify "+key)
}

// post sends body to url and wants status back; what names the request in
// its error.
func post(ctx context.Context, url string, body io.Reader, status int, what string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != status {
		return fmt.Errorf("%s: %s", what, resp.Status)
	}
	return nil
}

// Tickets returns how many times each key's ticket was opened.
func (d *Desk) Tickets() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.tickets)
}

// RequestTicket asks the help desk's HTTP service at url to open a
// ticket for key: the client side of a service whose handler, in the
// test, calls the desk's traced Open.
//
//agentidem:write name=requestTicket identity=key
func RequestTicket(ctx context.Context, url, key string) error {
	return post(ctx, url+"?key="+key, nil, http.StatusOK, "request ticket "+key)
}

func (d *Desk) find(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tickets[key] > 0
}

func (d *Desk) open(key string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tickets[key]++
	d.next++
	return fmt.Sprintf("T-%d", d.next)
}

// Record stores a value of any type: its identity is the value.
//
//agentidem:write name=record identity=v
func Record[T any](ctx context.Context, v T) error { return nil }

// Weird returns a result JSON cannot encode.
//
//agentidem:read name=weird
func Weird(ctx context.Context, kind string) (any, error) {
	switch kind {
	case "chan":
		return make(chan int), nil
	case "nan":
		return math.NaN(), nil
	case "response":
		req, err := http.NewRequest(http.MethodPost, "http://example.invalid/orders", strings.NewReader("{}"))
		if err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Request: req}, nil
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}

// Wait blocks until release is closed, paying no attention to its
// context: a tool stuck where the harness cannot see.
//
//agentidem:write name=hold identity=id
func Wait(ctx context.Context, id string, release <-chan struct{}) error {
	<-release
	return nil
}
