package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/agentidem/agentidem-go/runtime"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

// Quote is the price of one SKU.
type Quote struct {
	SKU   string `json:"sku"`
	Price int    `json:"price"`
}

// OrderRequest is the body of POST /orders.
type OrderRequest struct {
	Customer string   `json:"customer"`
	Items    []string `json:"items"`
	Total    int      `json:"total"`
}

// Client is the agent's tools: an HTTP client of the order API.
type Client struct {
	// Base is the service's URL, e.g. an httptest server's.
	Base string
	// HTTP is the client to use; nil means http.DefaultClient.
	HTTP *http.Client
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// GetQuote reads the price of one SKU.
//
//agentidem:read name=getQuote entity=sku
func (c *Client) GetQuote(ctx context.Context, sku string) (Quote, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+"/quote?sku="+url.QueryEscape(sku), nil)
	if err != nil {
		return Quote{}, err
	}
	var q Quote
	_, err = c.do(req, &q)
	return q, err
}

// PlaceOrder places an order. With a key, the service answers a repeat from
// the stored order; the tool then tells the harness the call was replayed.
//
//agentidem:write name=placeOrder identity=order.Customer,order.Items
func (c *Client) PlaceOrder(ctx context.Context, order OrderRequest, key string) (Order, error) {
	body, err := json.Marshal(order)
	if err != nil {
		return Order{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/orders", bytes.NewReader(body))
	if err != nil {
		return Order{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	var o Order
	resp, err := c.do(req, &o)
	if err != nil {
		return Order{}, err
	}
	if resp.Header.Get("Idempotent-Replayed") == "true" {
		runtime.MarkReplayed(ctx)
	}
	return o, nil
}

// do sends req and decodes a 2xx JSON answer into out.
func (c *Client) do(req *http.Request, out any) (*http.Response, error) {
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, bytes.TrimSpace(b))
	}
	return resp, json.Unmarshal(b, out)
}
