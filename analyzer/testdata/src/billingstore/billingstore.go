// Package billingstore is a store the billing ops delegate their writes
// to, in a package of its own (SinkFact).
package billingstore

import "context"

const insertIfAbsent = "INSERT INTO subscribers (email) VALUES ($1) ON CONFLICT (email) DO NOTHING"

// InsertIfAbsent adds the subscriber unless it is there.
func InsertIfAbsent(ctx context.Context, email string) error {
	return exec(ctx, insertIfAbsent, email)
}

// Insert adds the subscriber: a repeat adds another row.
func Insert(ctx context.Context, email string) error {
	return exec(ctx, "INSERT INTO subscribers (email) VALUES ($1)", email)
}

func exec(ctx context.Context, q string, args ...any) error { return nil }
