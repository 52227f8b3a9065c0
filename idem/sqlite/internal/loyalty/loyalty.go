// Package loyalty holds a loyalty program's tools over SQLite for the
// tests of package sqlite: a visit counter kept with an upsert that adds
// (wrongly declared idempotent, and undeclared), and a member enrolled
// with INSERT ... ON CONFLICT DO NOTHING (undeclared: State judges it).
package loyalty

import (
	"context"
	"database/sql"
)

// Schema creates the program's tables.
const Schema = `
CREATE TABLE IF NOT EXISTS visits (member TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS members (email TEXT PRIMARY KEY, tier TEXT NOT NULL);`

// Program is the loyalty program.
type Program struct{ DB *sql.DB }

// CountVisit adds one to member's visits; its author thought it an upsert.
//
//agentidem:write name=countVisit identity=member idempotent
func (p *Program) CountVisit(ctx context.Context, member string) error {
	_, err := p.DB.ExecContext(ctx, `INSERT INTO visits (member, n) VALUES (?, 1) ON CONFLICT (member) DO UPDATE SET n = n + 1`, member)
	return err
}

// AddVisit is CountVisit, undeclared.
//
//agentidem:write name=addVisit identity=member
func (p *Program) AddVisit(ctx context.Context, member string) error {
	_, err := p.DB.ExecContext(ctx, `INSERT INTO visits (member, n) VALUES (?, 1) ON CONFLICT (member) DO UPDATE SET n = n + 1`, member)
	return err
}

// Enroll enrolls email unless enrolled.
//
//agentidem:write name=enroll identity=email
func (p *Program) Enroll(ctx context.Context, email, tier string) error {
	_, err := p.DB.ExecContext(ctx, `INSERT INTO members (email, tier) VALUES (?, ?) ON CONFLICT (email) DO NOTHING`, email, tier)
	return err
}

// Lookup reads a member's tier.
//
//agentidem:read name=lookupMember entity=email
func (p *Program) Lookup(ctx context.Context, email string) (string, error) {
	var tier string
	err := p.DB.QueryRowContext(ctx, `SELECT tier FROM members WHERE email = ?`, email).Scan(&tier)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return tier, err
}
