package pgx

import "context"

const ReadCommitted TxIsoLevel = "read committed"

// BeginTxFunc runs fn in a transaction begun on db with opts.
func BeginTxFunc(ctx context.Context, db interface {
	BeginTx(ctx context.Context, opts TxOptions) (Tx, error)
}, opts TxOptions, fn func(Tx) error) error {
	return nil
}
