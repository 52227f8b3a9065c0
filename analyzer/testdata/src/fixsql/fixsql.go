package fixsql

import (
	"database/sql"
	"errors"
)

func ensureUser(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM users WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO users (email) VALUES ($1);", email) // want `INSERT INTO users runs when`
	}
	return err
}

func ensureTag(db *sql.DB, name string) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM tags WHERE name = $1`, name).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		// want +1 `INSERT INTO tags runs when`
		_, err := db.Exec(`
			INSERT INTO tags (name)
			VALUES ($1)
		`, name)
		return err
	}
	return nil
}

// RETURNING with DO NOTHING returns no row: no fix is offered.
func ensureReturning(db *sql.DB, name string) (int64, error) {
	var id int64
	err := db.QueryRow("SELECT id FROM tags WHERE name = $1", name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = db.QueryRow("INSERT INTO tags (name) VALUES ($1) RETURNING id", name).Scan(&id) // want `INSERT INTO tags runs when`
	}
	return id, err
}

// MySQL placeholders: the dialect may lack ON CONFLICT, no fix.
func ensureMySQL(db *sql.DB, name string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM tags WHERE name = ?", name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO tags (name) VALUES (?)", name) // want `INSERT INTO tags runs when`
	}
	return err
}
