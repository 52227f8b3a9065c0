// Package tools holds the agent's annotated tool functions.
package tools

import (
	"database/sql"
	"errors"
)

// CreateOrder creates an order.
//
//agentidem:write identity=id
func CreateOrder(id string) error { return nil }

// ShipOrder ships an order once it exists.
//
//agentidem:write identity=id after=CreateOrder
func ShipOrder(id string) error { return nil }

// EnsureCustomer creates a customer unless one exists.
func EnsureCustomer(db *sql.DB, email string) error {
	var id int64
	err := db.QueryRow("SELECT id FROM customers WHERE email = $1", email).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		_, err = db.Exec("INSERT INTO customers (email) VALUES ($1)", email)
	}
	return err
}
