package booking

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// deliveries serializes the deliveries of one worker (one process, one
// lock), so that two deliveries of one request never race the check.
var deliveries sync.Mutex

// Transport reports whether err is a transport failure: a *url.Error (a
// timeout, a reset or refused connection), as net/http returns it. An
// answer with a status, whatever it is, is not one.
func Transport(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue)
}

// Gateway reports whether err is a 502, 503 or 504 answer: a gateway that
// could not reach the service, or timed out waiting for it.
func Gateway(err error) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// TransportRetryAgent books a seat, retrying on transport failures only,
// with no key: a booking whose answer was lost is booked again.
func TransportRetryAgent(ctx context.Context, c *Client, customer, flight string) error {
	return book(ctx, c, customer, flight, "", Transport)
}

// StatusRetryAgent books a seat, retrying on a 502, 503 or 504 only, with
// no key: a gateway that timed out after the booking books it again.
func StatusRetryAgent(ctx context.Context, c *Client, customer, flight string) error {
	return book(ctx, c, customer, flight, "", Gateway)
}

// KeyedAgent books a seat, retrying when retry(err) says so, under a key
// derived from the work: the service answers a repeat from the booking it
// made.
func KeyedAgent(retry func(error) bool) func(ctx context.Context, c *Client, customer, flight string) error {
	return func(ctx context.Context, c *Client, customer, flight string) error {
		return book(ctx, c, customer, flight, "book:"+customer+":"+flight, retry)
	}
}

// book checks for an existing booking, then books, up to three times while
// retry(err) holds.
func book(ctx context.Context, c *Client, customer, flight, key string, retry func(error) bool) error {
	deliveries.Lock()
	defer deliveries.Unlock()
	bs, err := c.FindBookingsTraced(ctx, customer, flight)
	if err != nil || len(bs) > 0 {
		return err
	}
	for attempt := 1; ; attempt++ {
		_, err = c.BookTraced(ctx, customer, flight, key)
		if err == nil || attempt == 3 || ctx.Err() != nil || !retry(err) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}
