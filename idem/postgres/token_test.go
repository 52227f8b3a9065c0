package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"github.com/agentidem/agentidem-go/testkit"
)

// Accounts whose rows get random values from column DEFAULTs: an
// api_token md5(random()::text), an api_key gen_random_uuid() in a column
// not named id, an invite code of random bytes in base64url. A correct
// create-if-absent (INSERT ... ON CONFLICT (email) DO NOTHING), retried
// once on an error, was a duplicate_write in duplicate_delivery/concurrent
// on every run: the baseline's token against the run's (red team,
// /tmp/rtM P8 TestUUIDtoken, 4/4). The naive insert, into a table with no
// unique email, still makes a second account.

const tokenSchema = `
CREATE TABLE IF NOT EXISTS agentidem_tok_accounts (
	email TEXT PRIMARY KEY,
	api_token TEXT NOT NULL DEFAULT md5(random()::text),
	api_key TEXT NOT NULL DEFAULT gen_random_uuid()::text,
	invite TEXT NOT NULL DEFAULT translate(encode(decode(md5(random()::text) || md5(random()::text), 'hex'), 'base64'), '+/=', '-_'),
	logins INT NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS agentidem_tok_plain_accounts (
	email TEXT NOT NULL,
	api_token TEXT NOT NULL DEFAULT md5(random()::text),
	logins INT NOT NULL DEFAULT 1);
`

var register = &runtime.Op{Name: "register", Kind: runtime.KindWrite, Params: []string{"email"}}

func TestRandomTokenColumnOfACreateIfAbsent(t *testing.T) {
	db := seqDB(t)
	if _, err := db.Exec(tokenSchema); err != nil {
		t.Fatal(err)
	}
	opts := []testkit.Option{
		testkit.Setup(func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, `TRUNCATE agentidem_tok_accounts, agentidem_tok_plain_accounts`)
			return err
		}),
		testkit.State(func() any {
			out := map[string]any{}
			for _, tab := range []string{"agentidem_tok_accounts", "agentidem_tok_plain_accounts"} {
				var j sql.NullString
				if err := db.QueryRow(`SELECT jsonb_agg(to_jsonb(t) ORDER BY to_jsonb(t)::text) FROM ` + tab + ` t`).Scan(&j); err != nil {
					return err.Error()
				}
				out[tab] = json("[]")
				if j.Valid {
					out[tab] = json(j.String)
				}
			}
			return out
		}),
		testkit.NoSummary(),
	}
	for _, c := range []struct {
		name string
		q    string
		safe bool
	}{
		{"create if absent", `INSERT INTO agentidem_tok_accounts (email) VALUES ($1) ON CONFLICT (email) DO NOTHING`, true},
		{"count the logins", `INSERT INTO agentidem_tok_accounts (email) VALUES ($1) ON CONFLICT (email) DO UPDATE SET logins = agentidem_tok_accounts.logins + 1`, false},
		{"naive insert", `INSERT INTO agentidem_tok_plain_accounts (email) VALUES ($1)`, false},
	} {
		agent := func(ctx context.Context) error {
			reg := func() error {
				return call(ctx, register, []any{"bob@example.com"}, 1, func(ctx context.Context) error {
					_, err := db.ExecContext(ctx, c.q, "bob@example.com")
					return err
				})
			}
			if err := reg(); err != nil && ctx.Err() == nil {
				return reg()
			}
			return nil
		}
		rep := testkit.Run(t, agent, opts...)
		if !rep.BaselineSucceeded {
			t.Fatalf("%s: baseline failed: %s", c.name, rep.BaselineFailure)
		}
		dup := codes(rep)[runtime.CodeDuplicateWrite]
		if rep.Safe != c.safe || dup == c.safe {
			t.Errorf("%s: safe %v, duplicate_write %v; findings: %v", c.name, rep.Safe, dup, rep.Findings)
		}
	}
}
