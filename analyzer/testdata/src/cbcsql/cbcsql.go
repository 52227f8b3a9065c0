package cbcsql

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"
)

func ensureUser(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when the SELECT from users \(line \d+\) found no row for the same key`
	}
	return err
}

func ensureUserOnConflict(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1) ON CONFLICT (email) DO NOTHING", email)
	}
	return err
}

func ensureUserUniqueCheck(ctx context.Context, db *sql.DB, email string) error {
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	if isUniqueViolation(err) {
		return nil
	}
	return err
}

func isUniqueViolation(err error) bool { return false }

// The same through a helper named as many code bases name it.
func ensureUserIsDup(ctx context.Context, db *sql.DB, email string) error {
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	if isDup(err) {
		return nil
	}
	return err
}

func isDup(err error) bool { return false }

func earlyReturn(ctx context.Context, db *sql.DB, email string) error {
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == nil {
		return errors.New("already registered")
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when the SELECT from users`
	return err
}

func existsFlag(db *sql.DB, email string) error {
	var exists bool
	if err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM users WHERE email = $1)`, email).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		_, err := db.Exec(`INSERT INTO users (email) VALUES ($1)`, email) // want `INSERT INTO users runs when`
		return err
	}
	return nil
}

func countZero(db *sql.DB, email string) error {
	var n int
	if err := db.QueryRow("SELECT count(*) FROM users WHERE email = ?", email).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		_, err := db.Exec("INSERT INTO users (email) VALUES (?)", email) // want `INSERT INTO users runs when`
		return err
	}
	return nil
}

// Found, then insert into another table: no race on users.
func otherTable(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO audit (email) VALUES ($1)", email)
	}
	return err
}

// The insert runs when the row exists: not a check-before-create.
func insertWhenFound(db *sql.DB, email, note string) error {
	var id int64
	if err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id); err != nil {
		return err
	}
	_, err := db.Exec("INSERT INTO users (email, note) VALUES ($1, $2)", email, note)
	return err
}

// Different key in the insert.
func otherKey(db *sql.DB, email, other string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", other)
	}
	return err
}

func inTransaction(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when`
			return err
		}
	}
	return tx.Commit()
}

func serializableTransaction(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// A transaction from the caller may be serializable: say nothing.
func callersTransaction(ctx context.Context, tx *sql.Tx, email string) error {
	var id int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

func pgxSwitch(ctx context.Context, conn *pgx.Conn, email string) error {
	var id int64
	switch err := conn.QueryRow(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id); {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = conn.Exec(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
		return err
	case err != nil:
		return err
	}
	return nil
}

func pgxSerializable(ctx context.Context, conn *pgx.Conn, email string) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return err
	}
	var id int64
	if err := tx.QueryRow(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
		_, err = tx.Exec(ctx, "INSERT INTO users (email) VALUES ($1)", email)
		return err
	}
	return tx.Commit(ctx)
}

func pgxTransaction(ctx context.Context, conn *pgx.Conn, email string) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return err
	}
	var id int64
	if err := tx.QueryRow(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
		_, err = tx.Exec(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
		return err
	}
	return tx.Commit(ctx)
}

// Upsert emulation: the insert branch races like any check-before-create.
func upsert(db *sql.DB, email, name string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	switch {
	case err == sql.ErrNoRows:
		_, err = db.Exec("INSERT INTO users (email, name) VALUES ($1, $2)", email, name) // want `INSERT INTO users runs when`
	case err == nil:
		_, err = db.Exec("UPDATE users SET name = $2 WHERE id = $1", id, name)
	}
	return err
}

func ignored(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		//agentidem:ignore users are created by the nightly import only, one process
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// The query in a local variable, inside a transaction begun here (the
// shape found in miniflux's StoreFeedIcon).
func localQuery(db *sql.DB, hash string, content []byte) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	var id int64
	err = tx.QueryRow(`SELECT id FROM icons WHERE hash=$1`, hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		query := `
			INSERT INTO icons (hash, content)
			VALUES ($1, $2)
			RETURNING id
		`
		if err := tx.QueryRow(query, hash, content).Scan(&id); err != nil { // want `INSERT INTO icons runs when`
			tx.Rollback()
			return err
		}
	} else if err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// A query variable that is not constant by the time it runs: say nothing.
func builtQuery(db *sql.DB, hash, suffix string) error {
	var id int64
	err := db.QueryRow(`SELECT id FROM icons WHERE hash=$1`, hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		query := `INSERT INTO icons (hash) VALUES ($1)`
		query += suffix
		_, err = db.Exec(query, hash)
	}
	return err
}

type user struct{ ID int64 }

func sqlxGet(db *sqlx.DB, email string) error {
	var u user
	err := db.Get(&u, "SELECT id FROM users WHERE email = $1", email)
	if errors.Is(err, sql.ErrNoRows) {
		db.MustExec("INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return nil
}

func sqlxSelectEmpty(db *sqlx.DB, email string) error {
	var us []user
	if err := db.Select(&us, "SELECT id FROM users WHERE email = $1", email); err != nil {
		return err
	}
	if len(us) == 0 {
		db.MustExec("INSERT INTO users (email) VALUES ($1) ON CONFLICT DO NOTHING", email)
	}
	return nil
}

func sqlxSelectEmptyRace(db *sqlx.DB, email string) error {
	var us []user
	if err := db.Select(&us, "SELECT id FROM users WHERE email = $1", email); err != nil {
		return err
	}
	if len(us) == 0 {
		db.MustExec("INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return nil
}

// SQLite, seen opened here: a transaction is serializable (a second writer
// whose read went stale gets SQLITE_BUSY), so the check and the insert in
// one transaction cannot both see no row and both insert.
func sqliteTransaction(ctx context.Context, path, email string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = ?", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES (?)", email); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SQLite, but the check runs outside the transaction: another connection
// may insert between the two.
func sqliteCheckOutsideTransaction(ctx context.Context, path, email string) error {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	var id int64
	err = db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = ?", email).Scan(&id)
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES (?)", email); err != nil { // want `INSERT INTO users runs when the SELECT from users \(line \d+\) found no row for the same key: two concurrent or redelivered calls can both see no row and both insert; use INSERT ... ON CONFLICT DO NOTHING with a unique constraint on the key, or handle the unique-violation error$`
		return err
	}
	return tx.Commit()
}

// Another driver: one transaction at the default isolation (READ COMMITTED
// in PostgreSQL, REPEATABLE READ in MySQL) lets both see no row.
func postgresTransaction(ctx context.Context, dsn, email string) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when .*: one transaction does not stop it unless it is serializable; use INSERT ... ON CONFLICT DO NOTHING with a unique constraint on the key, handle the unique-violation error, or begin the transaction with &sql.TxOptions\{Isolation: sql.LevelSerializable\}`
			return err
		}
	}
	return tx.Commit()
}

// A handle that is SQLite only on one path is not known to be SQLite.
func sqliteOnOnePath(ctx context.Context, db *sql.DB, path, email string, local bool) error {
	if local {
		var err error
		if db, err = sql.Open("sqlite", path); err != nil {
			return err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = ?", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES (?)", email); err != nil { // want `INSERT INTO users runs when .*one transaction does not stop it unless it is serializable`
			return err
		}
	}
	return tx.Commit()
}

// The read's own result, named exists, returned after the insert: no
// unique-violation check.
func ensureUserReturnsExisted(ctx context.Context, db *sql.DB, email string) (bool, error) {
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM users WHERE email = $1)", email).Scan(&exists); err != nil {
		return false, err
	}
	if !exists {
		if _, err := db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when the SELECT from users`
			return false, err
		}
	}
	return exists, nil
}

// The same, handling the unique violation of the insert.
func ensureUserHandlesDuplicate(ctx context.Context, db *sql.DB, email string) (bool, error) {
	var exists bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM users WHERE email = $1)", email).Scan(&exists); err != nil {
		return false, err
	}
	if !exists {
		if _, err := db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil && !isUniqueViolation(err) {
			return false, err
		}
	}
	return exists, nil
}

type userCache struct {
	db    *sql.DB
	mu    sync.Mutex
	cache map[string]int64
}

// A mutex held across the check and the insert serializes them (in one
// process).
func (s *userCache) createLocked(ctx context.Context, email string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var id int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = s.db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// A mutex taken after the insert, for a cache, serializes nothing of them.
func (s *userCache) createThenCache(ctx context.Context, email string) error {
	var id int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if err = s.db.QueryRowContext(ctx, "INSERT INTO users (email) VALUES ($1) RETURNING id", email).Scan(&id); err != nil { // want `INSERT INTO users runs when the SELECT from users`
			return err
		}
	} else if err != nil {
		return err
	}
	s.mu.Lock()
	s.cache[email] = id
	s.mu.Unlock()
	return nil
}

// PostgreSQL: SELECT ... FOR UPDATE of the row being checked locks nothing
// when the row is absent; two transactions both see no row.
func forUpdateAbsentRow(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1 FOR UPDATE", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when the SELECT from users`
			return err
		}
	}
	return tx.Commit()
}

// A parent row locked FOR UPDATE first serializes the check of its
// children.
func forUpdateParent(ctx context.Context, db *sql.DB, orgID int64, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT 1 FROM orgs WHERE id = $1 FOR UPDATE", orgID); err != nil {
		return err
	}
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM members WHERE org_id = $1 AND email = $2", orgID, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, "INSERT INTO members (org_id, email) VALUES ($1, $2)", orgID, email); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// MySQL (? placeholders) at its default REPEATABLE READ: FOR UPDATE on an
// absent row takes a gap lock, and the second of two inserts fails with a
// deadlock. The dialect is not certain: not reported.
func forUpdateGapLock(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = ? FOR UPDATE", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES (?)", email); err != nil {
			return err
		}
	}
	return tx.Commit()
}
