package booking

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentidem/agentidem-go/runtime"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Client calls the booking API at Base with HTTP.
type Client struct {
	Base string
	HTTP *http.Client
}

// StatusError is the client's error for an answer that is not a 2xx.
type StatusError struct {
	Code int
	Body string
}

// Error reads as the status line and the body: "504 Gateway Timeout:
// upstream timed out".
func (e *StatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Code, http.StatusText(e.Code), strings.TrimSpace(e.Body))
}

// FindBookings lists customer's bookings on flight.
//
//agentidem:read name=find_bookings entity=customer
func (c *Client) FindBookings(ctx context.Context, customer, flight string) ([]Booking, error) {
	u := c.Base + "/bookings?customer=" + url.QueryEscape(customer) + "&flight=" + url.QueryEscape(flight)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	var out []Booking
	_, err = c.do(req, &out)
	return out, err
}

// Book books a seat for customer on flight; a non-empty key is sent as
// the Idempotency-Key, and a booking the service answered from it is
// marked replayed.
//
//agentidem:write name=book identity=customer,flight
func (c *Client) Book(ctx context.Context, customer, flight, key string) (Booking, error) {
	body, err := json.Marshal(Booking{Customer: customer, Flight: flight})
	if err != nil {
		return Booking{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/bookings", bytes.NewReader(body))
	if err != nil {
		return Booking{}, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	var b Booking
	resp, err := c.do(req, &b)
	if err != nil {
		return Booking{}, err
	}
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		runtime.MarkReplayed(ctx)
	}
	return b, nil
}

// do sends req and decodes a 2xx answer into out. A transport failure is
// the *url.Error of net/http; another status a *StatusError.
func (c *Client) do(req *http.Request, out any) (*http.Response, error) {
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, &StatusError{Code: resp.StatusCode, Body: string(b)}
	}
	return resp, json.Unmarshal(b, out)
}
