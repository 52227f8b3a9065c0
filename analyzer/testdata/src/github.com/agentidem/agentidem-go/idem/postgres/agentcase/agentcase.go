// Package agentcase is a test agent under idem's tree (idem/postgres's
// own): its writes are no more idempotent for where they live (red team
// rtM, L4).
package agentcase

import (
	"context"
	"database/sql"
)

var DB *sql.DB

// Ticket is this package's own type: naming it is no use of package idem.
type Ticket struct{ ID, Key string }

//agentidem:read entity=key
func findTicket(ctx context.Context, key string) (Ticket, bool) {
	var t Ticket
	err := DB.QueryRowContext(ctx, `SELECT id, key FROM tickets WHERE key = $1`, key).Scan(&t.ID, &t.Key)
	return t, err == nil
}

//agentidem:write identity=key
func openTicket(ctx context.Context, key string) (Ticket, error) {
	var t Ticket
	err := DB.QueryRowContext(ctx, `INSERT INTO tickets (key) VALUES ($1) RETURNING id, key`, key).Scan(&t.ID, &t.Key)
	return t, err
}

func findTicketTraced(ctx context.Context, key string) (Ticket, bool) { return findTicket(ctx, key) }
func openTicketTraced(ctx context.Context, key string) (Ticket, error) {
	return openTicket(ctx, key)
}

func ensure(ctx context.Context, key string) (Ticket, error) {
	if t, ok := findTicketTraced(ctx, key); ok {
		return t, nil
	}
	return openTicketTraced(ctx, key) // want `openTicket after findTicket on the same key races`
}
