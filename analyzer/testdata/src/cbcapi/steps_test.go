package cbcapi

import (
	"net/http"
	"strings"
	"testing"
)

// A test that checks a customer is absent, then creates it: one caller,
// on purpose.
func TestCreateCustomer(t *testing.T) {
	base, id := "http://localhost", t.Name()
	resp, err := http.Get(base + "/customers/" + id)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d", resp.StatusCode)
	}
	_, _ = http.Post(base+"/customers", "application/json", strings.NewReader(id))
}
