// Package cbcshapes holds the shapes real SQL code writes check-then-create
// in, each racy form beside a twin that is safe.
package cbcshapes

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"
	"github.com/leporo/sqlf"

	sq "github.com/Masterminds/squirrel"
)

// 1. A transaction from a helper closure.

func withTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func withSerializableTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// The caller picks the isolation level: unknown here.
func withTxOpts(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func createTag(ctx context.Context, db *sql.DB, name string) error {
	return withTx(ctx, db, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM tags WHERE name = $1", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO tags (name) VALUES ($1)", name) // want `INSERT INTO tags runs when the SELECT from tags \(line \d+\) found no row`
		}
		return err
	})
}

func createTagOnConflict(ctx context.Context, db *sql.DB, name string) error {
	return withTx(ctx, db, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM tags WHERE name = $1", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO tags (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", name)
		}
		return err
	})
}

func createTagSerializable(ctx context.Context, db *sql.DB, name string) error {
	return withSerializableTx(ctx, db, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM tags WHERE name = $1", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO tags (name) VALUES ($1)", name)
		}
		return err
	})
}

func createTagOpts(ctx context.Context, db *sql.DB, opts *sql.TxOptions, name string) error {
	return withTxOpts(ctx, db, opts, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM tags WHERE name = $1", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO tags (name) VALUES ($1)", name)
		}
		return err
	})
}

func createTagPgx(ctx context.Context, conn *pgx.Conn, name string) error {
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, "SELECT id FROM tags WHERE name = $1", name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, "INSERT INTO tags (name) VALUES ($1)", name) // want `INSERT INTO tags runs when`
		}
		return err
	})
}

// A lock taken in the literal serializes it.
func createTagLocked(ctx context.Context, db *sql.DB, name string) error {
	return withTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(42)"); err != nil {
			return err
		}
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM tags WHERE name = $1", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO tags (name) VALUES ($1)", name)
		}
		return err
	})
}

// 2. Prepared statements.

func preparedLocal(db *sql.DB, email string) error {
	sel, err := db.Prepare("SELECT id FROM users WHERE email = ?")
	if err != nil {
		return err
	}
	ins, err := db.Prepare("INSERT INTO users (email) VALUES (?)")
	if err != nil {
		return err
	}
	var id int64
	if err := sel.QueryRow(email).Scan(&id); errors.Is(err, sql.ErrNoRows) {
		_, err = ins.Exec(email) // want `INSERT INTO users runs when the SELECT from users`
		return err
	}
	return nil
}

func preparedLocalIgnore(db *sql.DB, email string) error {
	sel, err := db.Prepare("SELECT id FROM users WHERE email = ?")
	if err != nil {
		return err
	}
	ins, err := db.Prepare("INSERT IGNORE INTO users (email) VALUES (?)")
	if err != nil {
		return err
	}
	var id int64
	if err := sel.QueryRow(email).Scan(&id); errors.Is(err, sql.ErrNoRows) {
		_, err = ins.Exec(email)
		return err
	}
	return nil
}

const (
	selectAliasSQL = "SELECT room_id FROM room_aliases WHERE alias = $1"
	insertAliasSQL = "INSERT INTO room_aliases (alias, room_id) VALUES ($1, $2)"
)

// statementList prepares statements at start-up, as matrix servers do.
type statementList []struct {
	stmt **sql.Stmt
	sql  string
}

func (l statementList) prepare(db *sql.DB) (err error) {
	for _, s := range l {
		if *s.stmt, err = db.Prepare(s.sql); err != nil {
			return err
		}
	}
	return nil
}

type aliasTable struct {
	selectAliasStmt *sql.Stmt
	insertAliasStmt *sql.Stmt
	insertOnceStmt  *sql.Stmt
}

func newAliasTable(db *sql.DB) (*aliasTable, error) {
	s := &aliasTable{}
	var err error
	s.insertOnceStmt, err = db.Prepare(insertAliasSQL + " ON CONFLICT DO NOTHING")
	if err != nil {
		return nil, err
	}
	return s, statementList{
		{&s.selectAliasStmt, selectAliasSQL},
		{&s.insertAliasStmt, insertAliasSQL},
	}.prepare(db)
}

// txStmt binds a statement to a transaction, or runs it alone when there
// is none.
func txStmt(tx *sql.Tx, stmt *sql.Stmt) *sql.Stmt {
	if tx != nil {
		return tx.Stmt(stmt)
	}
	return stmt
}

func (s *aliasTable) setAlias(ctx context.Context, db *sql.DB, alias, room string) error {
	txn, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer txn.Rollback()
	var got string
	err = txStmt(txn, s.selectAliasStmt).QueryRowContext(ctx, alias).Scan(&got)
	if err == sql.ErrNoRows {
		if _, err := txStmt(txn, s.insertAliasStmt).ExecContext(ctx, alias, room); err != nil { // want `INSERT INTO room_aliases runs when the SELECT from room_aliases`
			return err
		}
	} else if err != nil {
		return err
	}
	return txn.Commit()
}

func (s *aliasTable) setAliasNoTx(ctx context.Context, alias, room string) error {
	var got string
	err := s.selectAliasStmt.QueryRowContext(ctx, alias).Scan(&got)
	if err == nil {
		return errors.New("alias in use")
	}
	_, err = s.insertAliasStmt.ExecContext(ctx, alias, room) // want `INSERT INTO room_aliases runs when`
	return err
}

func (s *aliasTable) setAliasOnce(ctx context.Context, alias, room string) error {
	var got string
	err := s.selectAliasStmt.QueryRowContext(ctx, alias).Scan(&got)
	if err == nil {
		return errors.New("alias in use")
	}
	_, err = s.insertOnceStmt.ExecContext(ctx, alias, room)
	return err
}

// The transaction comes from the caller: its isolation level is unknown.
func (s *aliasTable) setAliasCallerTx(ctx context.Context, txn *sql.Tx, alias, room string) error {
	var got string
	err := txStmt(txn, s.selectAliasStmt).QueryRowContext(ctx, alias).Scan(&got)
	if err == sql.ErrNoRows {
		_, err = txStmt(txn, s.insertAliasStmt).ExecContext(ctx, alias, room)
	}
	return err
}

// 3. A "found" flag.

func foundFlag(db *sql.DB, email string) error {
	found := true
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == sql.ErrNoRows {
		found = false
	} else if err != nil {
		return err
	}
	if found {
		return nil
	}
	_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	return err
}

func foundFlagRows(db *sql.DB, email string) error {
	rows, err := db.Query("SELECT id FROM users WHERE email = $1", email)
	if err != nil {
		return err
	}
	found := false
	for rows.Next() {
		found = true
	}
	rows.Close()
	if !found {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return err
}

func foundFlagOnConflict(db *sql.DB, email string) error {
	found := true
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == sql.ErrNoRows {
		found = false
	}
	if !found {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1) ON CONFLICT DO NOTHING", email)
	}
	return err
}

// The flag is also cleared by something else than the read: it does not
// say the row is absent.
func foundFlagOther(db *sql.DB, email string, force bool) error {
	found := true
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == sql.ErrNoRows {
		found = false
	}
	if force {
		found = false
	}
	if !found {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// 4. Update, then insert when nothing was updated.

func bumpCounter(db *sql.DB, name string) error {
	res, err := db.Exec("UPDATE counters SET n = n + 1 WHERE name = $1", name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err = db.Exec("INSERT INTO counters (name, n) VALUES ($1, 1)", name) // want `INSERT INTO counters runs when the UPDATE of counters \(line \d+\) changed no row`
	}
	return err
}

func bumpCounterPgx(ctx context.Context, conn *pgx.Conn, name string) error {
	tag, err := conn.Exec(ctx, "UPDATE counters SET n = n + 1 WHERE name = $1", name)
	if err != nil {
		return err
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	_, err = conn.Exec(ctx, "INSERT INTO counters (name, n) VALUES ($1, 1)", name) // want `INSERT INTO counters runs when`
	return err
}

func bumpCounterOnConflict(db *sql.DB, name string) error {
	res, err := db.Exec("UPDATE counters SET n = n + 1 WHERE name = $1", name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err = db.Exec("INSERT INTO counters (name, n) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET n = counters.n + 1", name)
	}
	return err
}

func bumpCounterUnique(db *sql.DB, name string) error {
	res, err := db.Exec("UPDATE counters SET n = n + 1 WHERE name = $1", name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err = db.Exec("INSERT INTO counters (name, n) VALUES ($1, 1)", name)
		if isUniqueViolation(err) {
			return bumpCounterUnique(db, name)
		}
	}
	return err
}

func isUniqueViolation(err error) bool { return false }

// An UPDATE that failed says nothing about the row.
func updateFailed(db *sql.DB, name string) error {
	if _, err := db.Exec("UPDATE counters SET n = n + 1 WHERE name = $1", name); err != nil {
		_, err = db.Exec("INSERT INTO counters (name, n) VALUES ($1, 1)", name)
		return err
	}
	return nil
}

// A hand-rolled upsert split across methods, with sqlx named queries (the
// shape of a CA's OCSP store).

type ocspRecord struct{ Serial, AKI, Body string }

type accessor struct{ db *sqlx.DB }

func (d *accessor) insertOCSP(rr ocspRecord) error {
	_, err := d.db.NamedExec(`INSERT INTO ocsp_responses (serial_number, authority_key_identifier, body)
		VALUES (:serial_number, :authority_key_identifier, :body)`, &ocspRecord{Serial: rr.Serial, AKI: rr.AKI, Body: rr.Body})
	return err
}

func (d *accessor) upsertOCSP(serial, aki, body string) error {
	res, err := d.db.NamedExec(`UPDATE ocsp_responses SET body = :body
		WHERE serial_number = :serial_number AND authority_key_identifier = :authority_key_identifier`, &ocspRecord{Serial: serial, AKI: aki, Body: body})
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return d.insertOCSP(ocspRecord{Serial: serial, AKI: aki, Body: body}) // want `INSERT INTO ocsp_responses runs when`
	}
	return nil
}

// Inserting a different record when nothing was updated.
func (d *accessor) upsertOther(serial, aki, body, other string) error {
	res, err := d.db.NamedExec(`UPDATE ocsp_responses SET body = :body
		WHERE serial_number = :serial_number`, &ocspRecord{Serial: serial})
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return d.insertOCSP(ocspRecord{Serial: other, AKI: aki, Body: body})
	}
	return nil
}

// 6. Queries built at run time from constants.

const usersTable = "users"

func sprintfTable(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow(fmt.Sprintf("SELECT id FROM %s WHERE email = $1", usersTable), email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec(fmt.Sprintf("INSERT INTO %s (email) VALUES ($1)", usersTable), email) // want `INSERT INTO users runs when`
	}
	return err
}

type prefixed struct {
	db     *sql.DB
	prefix string
}

func (p *prefixed) table(name string) string { return p.prefix + name }

func (p *prefixed) ensureUser(email string) error {
	var id int64
	q := "SELECT id FROM " + p.table("users") + " WHERE email = ?"
	err := p.db.QueryRow(q, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = p.db.Exec(fmt.Sprintf("INSERT INTO %s (email) VALUES (?)", p.table("users")), email) // want `INSERT INTO users runs when`
	}
	return err
}

func (p *prefixed) ensureUserReplace(email string) error {
	var id int64
	q := "SELECT id FROM " + p.table("users") + " WHERE email = ?"
	err := p.db.QueryRow(q, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = p.db.Exec(fmt.Sprintf("INSERT OR REPLACE INTO %s (email) VALUES (?)", p.table("users")), email)
	}
	return err
}

// The table is a variable: the two statements may name different tables.
func sprintfVariable(db *sql.DB, table, email string) error {
	var id int64
	err := db.QueryRow(fmt.Sprintf("SELECT id FROM %s WHERE email = $1", table), email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec(fmt.Sprintf("INSERT INTO %s (email) VALUES ($1)", table), email)
	}
	return err
}

// Builders with a constant table and key columns.

func tenant(table string) string { return fmt.Sprintf("%s%s", tenantID, table) }

var tenantID = ""

func addMessageTag(db *sql.DB, id string, tagID int) error {
	var exists int
	if err := sqlf.From(tenant("message_tags")).
		Select("COUNT(ID)").To(&exists).
		Where("ID = ?", id).
		Where("TagID = ?", tagID).
		QueryRowAndClose(context.Background(), db); err != nil {
		return err
	}
	if exists > 0 {
		return nil
	}
	_, err := sqlf.InsertInto(tenant("message_tags")). // want `INSERT INTO message_tags runs when the SELECT from message_tags`
								Set("ID", id).
								Set("TagID", tagID).
								ExecAndClose(context.Background(), db)
	return err
}

func addMessageTagOnConflict(db *sql.DB, id string, tagID int) error {
	var exists int
	if err := sqlf.From(tenant("message_tags")).
		Select("COUNT(ID)").To(&exists).
		Where("ID = ? AND TagID = ?", id, tagID).
		QueryRowAndClose(context.Background(), db); err != nil {
		return err
	}
	if exists > 0 {
		return nil
	}
	_, err := sqlf.InsertInto(tenant("message_tags")).
		Set("ID", id).
		Set("TagID", tagID).
		Clause("ON CONFLICT DO NOTHING").
		ExecAndClose(context.Background(), db)
	return err
}

func squirrelEnsure(db *sql.DB, email string) error {
	var id int64
	err := sq.Select("id").From("users").Where(sq.Eq{"email": email}).RunWith(db).QueryRow().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = sq.Insert("users").Columns("email").Values(email).RunWith(db).Exec() // want `INSERT INTO users runs when`
	}
	return err
}

func squirrelEnsureSuffix(db *sql.DB, email string) error {
	var id int64
	err := sq.Select("id").From("users").Where(sq.Eq{"email": email}).RunWith(db).QueryRow().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = sq.Insert("users").Columns("email").Values(email).Suffix("ON CONFLICT DO NOTHING").RunWith(db).Exec()
	}
	return err
}

// The table of a builder comes from a variable: unknown.
func squirrelVariableTable(db *sql.DB, table, email string) error {
	var id int64
	err := sq.Select("id").From(table).Where(sq.Eq{"email": email}).RunWith(db).QueryRow().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = sq.Insert(table).Columns("email").Values(email).RunWith(db).Exec()
	}
	return err
}
