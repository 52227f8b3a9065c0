// Package cbcapi holds check-then-create through an HTTP API and through
// GORM (red team fF), each buggy shape beside twins that are not
// reported.
package cbcapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

type Client struct {
	hc   *http.Client
	base string
}

// GET one customer, 404, POST to the collection.
func (c *Client) EnsureCustomer(ctx context.Context, id string) error {
	resp, err := c.hc.Get(c.base + "/customers/" + id)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		r2, err := c.hc.Post(c.base+"/customers", "application/json", strings.NewReader(`{"id":"`+id+`"}`)) // want `POST \{c.base\}/customers runs when the GET of \{c.base\}/customers/\{id\} \(line 23\) answered 404`
		if err != nil {
			return err
		}
		r2.Body.Close()
	}
	return nil
}

// A lookup by query, requests built with NewRequestWithContext, an early
// return when found.
func (c *Client) EnsureByEmail(ctx context.Context, email string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/customers?email=%s", c.base, url.QueryEscape(email)), nil)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		return nil
	}
	post, err := http.NewRequestWithContext(ctx, "POST", c.base+"/customers", strings.NewReader(email))
	if err != nil {
		return err
	}
	r2, err := c.hc.Do(post) // want `POST \{c.base\}/customers runs when the GET of \{c.base\}/customers\?email=\{email\} \(line 45\) answered 404`
	if err != nil {
		return err
	}
	return r2.Body.Close()
}

// The twin sends an Idempotency-Key: the server deduplicates the POST.
func (c *Client) EnsureKeyed(ctx context.Context, id string) error {
	resp, err := c.hc.Get(c.base + "/customers/" + id)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/customers", strings.NewReader(id))
	if err != nil {
		return err
	}
	req.Header.Set("Idempotency-Key", "customer/"+id)
	r2, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	return r2.Body.Close()
}

// The twin handles the conflict the server answers for a customer that
// is there (a unique key at the server).
func (c *Client) EnsureConflict(ctx context.Context, id string) error {
	resp, err := c.hc.Get(c.base + "/customers/" + id)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		r2, err := c.hc.Post(c.base+"/customers", "application/json", strings.NewReader(id))
		if err != nil {
			return err
		}
		defer r2.Body.Close()
		if r2.StatusCode == http.StatusConflict {
			return nil
		}
	}
	return nil
}

// Not a check-then-create: the POST runs on a transport error (net/http
// answers a 404 without one), or on another status, or to another
// collection, or on another server.
func (c *Client) NotLookups(ctx context.Context, id string, other *Client) error {
	resp, err := c.hc.Get(c.base + "/customers/" + id)
	if err != nil {
		_, _ = c.hc.Post(c.base+"/customers", "application/json", strings.NewReader(id))
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		_, _ = c.hc.Post(c.base+"/customers", "application/json", strings.NewReader(id))
	}
	if resp.StatusCode == http.StatusNotFound {
		_, _ = c.hc.Post(c.base+"/audit", "application/json", strings.NewReader(id))
		_, _ = c.hc.Post(other.base+"/customers", "application/json", strings.NewReader(id))
		_, _ = c.hc.Post(c.base+"/customers/"+id+"/notes", "application/json", strings.NewReader(id))
	}
	return nil
}

// The twin creates with PUT on the key: one resource, however often.
func (c *Client) PutCustomer(ctx context.Context, id string) error {
	resp, err := c.hc.Get(c.base + "/customers/" + id)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base+"/customers/"+id, nil)
		if err != nil {
			return err
		}
		r2, err := c.hc.Do(req)
		if err != nil {
			return err
		}
		r2.Body.Close()
	}
	return nil
}

type customer struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// The key reaches the POST through a struct marshalled to JSON.
func (c *Client) EnsureJSON(ctx context.Context, id, name string) error {
	resp, err := c.hc.Get(c.base + "/customers/" + url.PathEscape(id))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		return nil
	}
	b, err := json.Marshal(customer{ID: id, Name: name})
	if err != nil {
		return err
	}
	r2, err := c.hc.Post(c.base+"/customers/", "application/json", bytes.NewReader(b)) // want `POST \{c.base\}/customers/ runs when the GET of \{c.base\}/customers/\{id\}`
	if err != nil {
		return err
	}
	return r2.Body.Close()
}

// The twin sends no key: a new session after an expired one is another
// session, not the one looked up.
func (c *Client) RenewSession(ctx context.Context, sid, user string) error {
	resp, err := c.hc.Get(c.base + "/sessions/" + sid)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		r2, err := c.hc.Post(c.base+"/sessions", "application/json", strings.NewReader(user))
		if err != nil {
			return err
		}
		r2.Body.Close()
	}
	return nil
}
