// Package options uses name=, wrapper=, after=, redact= and idempotent.
package options

import "context"

// Card is a payment card.
type Card struct {
	Number string
	CVV    string
}

// createInvoice has a custom op name.
//
//agentidem:write identity=customer name=billing.createInvoice
func createInvoice(ctx context.Context, customer string, amount int) (string, error) {
	return "inv-" + customer, nil
}

// attachInvoice must come after createInvoice and has a custom wrapper.
//
//agentidem:write identity=invoice after=billing.createInvoice,lookup wrapper=AttachInvoice
func attachInvoice(ctx context.Context, invoice string, note string) error { return nil }

// charge redacts the card; the identity uses the customer only, so it is
// recorded in clear.
//
//agentidem:write identity=customer,amount redact=card
func charge(ctx context.Context, customer string, card Card, amount int) error { return nil }

// tokenize redacts the card and uses it in the identity: the runtime records
// a digest of the identity instead of the value.
//
//agentidem:write identity=card.Number redact=card,pin
func tokenize(ctx context.Context, card Card, pin string) (string, error) {
	return "tok", nil
}

// setStatus sets a status: a repeat with equal arguments changes nothing.
//
//agentidem:write identity=order idempotent
func setStatus(ctx context.Context, order, status string) error { return nil }

// lookup reads with a custom name.
//
//agentidem:read name=lookup entity=id
func lookup(id string) (string, error) { return id, nil }

// Key is a composite identity.
type Key struct {
	Tenant string
	Parts  []string
}

// upsert has identities built from expressions: no false positive.
//
//agentidem:write identity="Key{Tenant: tenant, Parts: []string{id, kind}}, len(rows), rows[0], meta[\"k\"]" entity=tenant+"/"+id
func upsert(ctx context.Context, tenant, id, kind string, rows []string, meta map[string]any) error {
	return nil
}
