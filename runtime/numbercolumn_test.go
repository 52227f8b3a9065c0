package runtime

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
)

// An invoice table whose rows a sequence numbers in a column not named id
// (PostgreSQL's usual names: a BIGSERIAL invoice_id primary key, an
// invoice's number): a rolled back attempt used up number 1, and the run's
// one invoice is number 2 where the baseline's is 1. That is one invoice
// under another number, as with a column named id; it was a duplicate_write
// blaming a missing Settle (red team, /tmp/rtM P2, TestInvoiceRolledBack
// and TestInv2InvoiceID on PostgreSQL, 10/10 and 5/5 runs). Two rows that
// differ only in their number are two invoices, and a repeat that adds 1 to
// an integer column that names no row (a quantity) is a second effect.
func TestRowsNumberedInAColumnNotNamedIDAreNamesTheSinkMade(t *testing.T) {
	create := &Op{Name: "create_invoice", Kind: KindWrite, Params: []string{"order"}}
	for _, col := range []string{"id", "number", "invoice_id", "invoiceId", "invoice_no", "seq"} {
		for _, c := range []struct {
			mode string
			want string
		}{
			{"rolled back", RepeatAbsorbed},
			{"failed attempt committed", RepeatDuplicate},
			{"quantity added to", RepeatDuplicate},
		} {
			t.Run(col+", "+c.mode, func(t *testing.T) {
				w := &kvWorld{}
				var seq atomic.Int64
				agent := func(ctx context.Context) error {
					var err error
					for range 2 {
						n := seq.Add(1) // nextval: not given back on rollback
						err = traced(ctx, create, []any{"o-1"}, []any{"o-1"}, func(context.Context) error {
							if c.mode != "quantity added to" {
								return nil
							}
							return w.do(func(m map[string]any) { // INSERT ... ON CONFLICT DO UPDATE SET quantity = quantity + 1
								rows, _ := m["invoices"].([]any)
								if i := slices.IndexFunc(rows, func(r any) bool { return r.(map[string]any)["order_id"] == "o-1" }); i >= 0 {
									r := rows[i].(map[string]any)
									q, _ := r["quantity"].(json.Number).Int64()
									r["quantity"] = json.Number(itoa(int(q) + 1))
									return
								}
								m["invoices"] = append(rows, map[string]any{col: json.Number(itoa(int(n))), "order_id": "o-1", "quantity": json.Number("1")})
							})
						})
						if c.mode != "quantity added to" && (err == nil || c.mode == "failed attempt committed") {
							w.do(func(m map[string]any) { // the commit, untraced
								rows, _ := m["invoices"].([]any)
								m["invoices"] = append(rows, map[string]any{col: json.Number(itoa(int(n))), "order_id": "o-1", "cents": json.Number("500")})
							})
						}
						if err == nil {
							break
						}
					}
					return err
				}
				rep := runOn(t, w, func(map[string]any) { seq.Store(0) }, agent, OnlyScenario(ScenarioLostAck+"/create_invoice#1"))
				res, repeat, dup := judgedRepeat(t, rep)
				assert.Equal(t, c.want, repeat.Repeat, "%s, judged by %s; findings %v; notes %q", repeat.ID, repeat.JudgedBy, res.Findings, res.Trace.Notes)
				assert.Equal(t, c.want == RepeatDuplicate, dup, "duplicate_write: %v", res.Findings)
				assert.Equal(t, c.want == RepeatAbsorbed, rep.Safe, "the report's verdict: %v", res.Findings)
			})
		}
	}
}

// Which keys name a row's number (idKey, numberKey), and which are data.
func TestNumberKey(t *testing.T) {
	for k, want := range map[string]bool{
		"invoice_id": true, "tagId": true, "InvoiceID": true, "number": true, "invoice_no": true,
		"lineNumber": true, "seq": true, "serial": true, "quantity": false, "cents": false, "n": false,
		"no_show": false, "phone": false, "casino": false, "amount": false, "x_id": false,
	} {
		assert.Equal(t, want, numberKey(k), k)
	}
	n := json.Number("7")
	assert.Equal(t, "tag_id", idKey(map[string]any{"tag_id": n, "post": "p", "tag": "go"}))
	assert.Equal(t, "number", idKey(map[string]any{"number": n, "order_id": "ORD-1", "cents": n}))
	assert.Equal(t, "", idKey(map[string]any{"line_id": n, "order_id": n, "qty": n}), "two could be the row's number")
	assert.Equal(t, "", idKey(map[string]any{"order_id": "ORD-1", "qty": n}), "a text reference names no row")
	assert.Equal(t, "id", idKey(map[string]any{"id": "a", "number": n}))
}
