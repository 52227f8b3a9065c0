// Package cbcserial holds the red team's serialization shapes (rtM, L1 and
// L2): what the code runs serializes the check and the insert, not what it
// mentions.
package cbcserial

import (
	"billing"
	"cbcserial/locks"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

type PgError struct{ Code string }

func (e *PgError) Error() string { return e.Code }

var serialOpts = &sql.TxOptions{Isolation: sql.LevelSerializable}

// C1: serializable through a package-level variable, retried on 40001.
func serialVar(ctx context.Context, db *sql.DB, email string) error {
	for {
		err := func() error {
			tx, err := db.BeginTx(ctx, serialOpts)
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
			} else if err != nil {
				return err
			}
			return tx.Commit()
		}()
		var pgErr *PgError
		if errors.As(err, &pgErr) && pgErr.Code == "40001" {
			continue
		}
		return err
	}
}

// A package-level variable at the default level is no serialization.
var defaultOpts = &sql.TxOptions{ReadOnly: false}

func defaultVar(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, defaultOpts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when .*one transaction does not stop it unless it is serializable`
			return err
		}
	}
	return tx.Commit()
}

// A level set in a local variable, unconditionally.
func serialLocal(ctx context.Context, db *sql.DB, email string) error {
	var opts sql.TxOptions
	opts.Isolation = sql.LevelSerializable
	tx, err := db.BeginTx(ctx, &opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// Options from elsewhere may be serializable: say nothing.
func optionsParam(ctx context.Context, db *sql.DB, opts *sql.TxOptions, email string) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// lockKey takes a transaction-scoped advisory lock on the key.
func lockKey(ctx context.Context, tx *sql.Tx, key string) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", key)
	return err
}

// C2: the lock is taken by a helper, in the transaction of the check.
func advisoryHelper(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := lockKey(ctx, tx, email); err != nil {
		return err
	}
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return tx.Commit()
}

// The same through a helper of another package (a fact).
func advisoryOtherPackage(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := locks.Key(ctx, tx, email); err != nil {
		return err
	}
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// A session lock on a connection outlives its statement.
func sessionLock(ctx context.Context, db *sql.DB, email string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := locks.Session(ctx, conn, email); err != nil {
		return err
	}
	var id int64
	err = conn.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = conn.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// The lock taken after the check serializes nothing of it.
func lockAfterCheck(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err := lockKey(ctx, tx, email); err != nil {
		return err
	}
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when .*one transaction does not stop it`
	}
	return err
}

// inSerializable runs fn in a serializable transaction.
func inSerializable(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		return err
	}
	if err = fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// C3: the check and the insert in a literal handed to it.
func serialHelper(ctx context.Context, db *sql.DB, email string) error {
	return inSerializable(ctx, db, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
		}
		return err
	})
}

// C4: pgx.BeginTxFunc with serializable options from a variable.
var pgSerial = pgx.TxOptions{IsoLevel: pgx.Serializable}

func pgxVar(ctx context.Context, conn *pgx.Conn, email string) error {
	return pgx.BeginTxFunc(ctx, conn, pgSerial, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, "INSERT INTO users (email) VALUES ($1)", email)
		}
		return err
	})
}

// At read committed it races.
func pgxReadCommitted(ctx context.Context, conn *pgx.Conn, email string) error {
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = tx.Exec(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when .*pgx.TxOptions\{IsoLevel: pgx.Serializable\}`
		}
		return err
	})
}

// C5: the unique violation is checked by a helper.
func isUniqueViolation(err error) bool {
	var pgErr *PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

func uniqueHelper(ctx context.Context, db *sql.DB, email string) (int64, error) {
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	err = db.QueryRowContext(ctx, "INSERT INTO users (email) VALUES ($1) RETURNING id", email).Scan(&id)
	if isUniqueViolation(err) {
		err = db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	}
	return id, err
}

// C6: SET TRANSACTION ISOLATION LEVEL SERIALIZABLE in the transaction.
func setTxSQL(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE email = $1", email).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// C7: a guard that tests something other than presence.
func guard(ctx context.Context, db *sql.DB, email string) error {
	var blocked bool
	if err := db.QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM blocklist WHERE email = $1)", email).Scan(&blocked); err != nil {
		return err
	}
	if !blocked {
		_, err := db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1) ON CONFLICT DO NOTHING", email)
		return err
	}
	return nil
}

// B1: a transaction-scoped advisory lock on a database, outside any
// transaction: released when its statement ends.
func advisoryOnPool(ctx context.Context, db *sql.DB, email string) error {
	if _, err := db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", email); err != nil {
		return err
	}
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return err
}

// The same through a helper of another package.
func advisoryOnPoolHelper(ctx context.Context, db *sql.DB, email string) error {
	if err := locks.KeyOnDB(ctx, db, email); err != nil {
		return err
	}
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return err
}

// B2: a serializable transaction begun, but the check and the insert run
// on the database.
func serialButDB(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// B3: a log line that says SERIALIZABLE serializes nothing.
func logMentions(ctx context.Context, db *sql.DB, email string) error {
	log.Printf("users: not SERIALIZABLE here, relying on app checks")
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return err
}

// B10: serializable only under an if: the default path is read committed.
func onlyIfStrict(ctx context.Context, db *sql.DB, email string, strict bool) error {
	opts := &sql.TxOptions{}
	if strict {
		opts.Isolation = sql.LevelSerializable
	}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when .*one transaction does not stop it unless it is serializable`
			return err
		}
	}
	return tx.Commit()
}

// B4: a mutex taken after the insert, for a cache.
type repo struct {
	db    *sql.DB
	cache map[string]int64
	mu    sync.Mutex
}

func (r *repo) cacheLockAfter(ctx context.Context, email string) error {
	var id int64
	err := r.db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = r.db.QueryRowContext(ctx, "INSERT INTO users (email) VALUES ($1) RETURNING id", email).Scan(&id) // want `INSERT INTO users runs when`
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.cache[email] = id
	r.mu.Unlock()
	return nil
}

// B5: a switch on the error.
func switchErr(ctx context.Context, db *sql.DB, email string) error {
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
		return err
	case err != nil:
		return err
	}
	return nil
}

// B6: an early return when found.
func earlyReturn(ctx context.Context, db *sql.DB, email string) error {
	var id int64
	err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	_, err = db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	return err
}

// B7: in a loop, with continue.
func inLoop(ctx context.Context, db *sql.DB, emails []string) error {
	for _, e := range emails {
		var id int64
		err := db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", e).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			if _, err := db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", e); err != nil { // want `INSERT INTO users runs when`
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// B8: through the repository's methods.
func (r *repo) findByEmail(ctx context.Context, email string) (int64, error) {
	var id int64
	err := r.db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	return id, err
}

func (r *repo) create(ctx context.Context, email string) error {
	_, err := r.db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	return err
}

func (r *repo) ensureUser(ctx context.Context, email string) error {
	_, err := r.findByEmail(ctx, email)
	if errors.Is(err, sql.ErrNoRows) {
		return r.create(ctx, email) // want `INSERT INTO users runs when`
	}
	return err
}

// Methods that take the transaction, in a serializable one.
func (r *repo) findTx(ctx context.Context, tx *sql.Tx, email string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	return id, err
}

func (r *repo) createTx(ctx context.Context, tx *sql.Tx, email string) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	return err
}

func (r *repo) ensureUserSerial(ctx context.Context, email string) error {
	tx, err := r.db.BeginTx(ctx, serialOpts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = r.findTx(ctx, tx, email)
	if errors.Is(err, sql.ErrNoRows) {
		if err := r.createTx(ctx, tx, email); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (r *repo) ensureUserTx(ctx context.Context, email string) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = r.findTx(ctx, tx, email)
	if errors.Is(err, sql.ErrNoRows) {
		if err := r.createTx(ctx, tx, email); err != nil { // want `INSERT INTO users runs when .*one transaction does not stop it`
			return err
		}
	}
	return tx.Commit()
}

// B9: FOR UPDATE on an absent row locks nothing in PostgreSQL.
func forUpdate(ctx context.Context, conn *pgx.Conn, email string) error {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return err
	}
	var id int64
	err = tx.QueryRow(ctx, "SELECT id FROM users WHERE email = $1 FOR UPDATE", email).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := tx.Exec(ctx, "INSERT INTO users (email) VALUES ($1)", email); err != nil { // want `INSERT INTO users runs when .*pgx.TxOptions\{IsoLevel: pgx.Serializable\}`
			return err
		}
	}
	return tx.Commit(ctx)
}

// A lock whose query is built at run time is read from its literal.
func lockBuilt(ctx context.Context, db *sql.DB, email string, shard int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("SELECT pg_advisory_xact_lock(%d, hashtext($1))", shard), email); err != nil {
		return err
	}
	var id int64
	err = tx.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// A store method that takes a session lock on its own database.
type store struct{ db *sql.DB }

func (s *store) lock(ctx context.Context, key string) error {
	_, err := s.db.ExecContext(ctx, "SELECT pg_advisory_lock(hashtext($1))", key)
	return err
}

func (s *store) ensure(ctx context.Context, email string) error {
	if err := s.lock(ctx, email); err != nil {
		return err
	}
	var id int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = s.db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email)
	}
	return err
}

// A method whose transaction-scoped lock is in a transaction of its own
// serializes nothing of its caller's.
func (s *store) lockInOwnTx(ctx context.Context, key string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Commit()
	_, err = tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", key)
	return err
}

func (s *store) ensureAfterOwnTx(ctx context.Context, email string) error {
	if err := s.lockInOwnTx(ctx, email); err != nil {
		return err
	}
	var id int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = s.db.ExecContext(ctx, "INSERT INTO users (email) VALUES ($1)", email) // want `INSERT INTO users runs when`
	}
	return err
}

// Annotated ops: their accesses are not seen here, so a serializable
// transaction or a lock the function runs still silences; a log line does
// not.
func opsLogMentions(ctx context.Context, key string) (*billing.Ticket, error) {
	log.Printf("tickets: not SERIALIZABLE, the sink deduplicates")
	t, err := billing.FindTicketTraced(ctx, key)
	if errors.Is(err, billing.ErrNotFound) {
		return billing.CreateTicketTraced(ctx, key, "printer on fire") // want `CreateTicket after FindTicket on the same key races`
	}
	return t, err
}

func opsInSerializable(ctx context.Context, db *sql.DB, key string) (*billing.Ticket, error) {
	tx, err := db.BeginTx(ctx, serialOpts)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	t, err := billing.FindTicketTraced(ctx, key)
	if errors.Is(err, billing.ErrNotFound) {
		return billing.CreateTicketTraced(ctx, key, "printer on fire")
	}
	return t, err
}

// Statements prepared on a transaction: the access's transaction is not
// resolved, a serializable one begun here covers it.
func preparedInSerial(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, serialOpts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	sel, err := tx.PrepareContext(ctx, "SELECT id FROM users WHERE email = $1")
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO users (email) VALUES ($1)")
	if err != nil {
		return err
	}
	var id int64
	err = sel.QueryRowContext(ctx, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = ins.ExecContext(ctx, email)
	}
	return err
}

func preparedInDefault(ctx context.Context, db *sql.DB, email string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	sel, err := tx.PrepareContext(ctx, "SELECT id FROM users WHERE email = $1")
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO users (email) VALUES ($1)")
	if err != nil {
		return err
	}
	var id int64
	err = sel.QueryRowContext(ctx, email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = ins.ExecContext(ctx, email) // want `INSERT INTO users runs when`
	}
	return err
}

// B11: on a pool of the real driver, whose methods run SQL of their own
// (a red team's miss: the driver's Exec was summarized and hid the
// INSERT).
func poolPlain(ctx context.Context, pool *pgxpool.Pool, email string) error {
	var id int64
	err := pool.QueryRow(ctx, `SELECT id FROM users WHERE email = $1`, email).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		_, err = pool.Exec(ctx, `INSERT INTO users (email) VALUES ($1)`, email) // want `INSERT INTO users runs when`
	}
	return err
}
