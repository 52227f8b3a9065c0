package runtime

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poolDriver is a database/sql driver whose statements are done at once:
// its connections are only ever waited for by database/sql's pool.
type poolDriver struct{}

func (poolDriver) Open(string) (driver.Conn, error) { return poolConn{}, nil }

type poolConn struct{}

func (poolConn) Prepare(string) (driver.Stmt, error) { return poolStmt{}, nil }
func (poolConn) Close() error                        { return nil }
func (poolConn) Begin() (driver.Tx, error)           { return poolTx{}, nil }

type poolTx struct{}

func (poolTx) Commit() error   { return nil }
func (poolTx) Rollback() error { return nil }

type poolStmt struct{}

func (poolStmt) Close() error                               { return nil }
func (poolStmt) NumInput() int                              { return -1 }
func (poolStmt) Exec([]driver.Value) (driver.Result, error) { return driver.RowsAffected(1), nil }
func (poolStmt) Query([]driver.Value) (driver.Rows, error)  { return nil, errors.New("no rows here") }

var registerPool sync.Once

// An agent that opens a transaction on a pool of one connection and, inside
// it, calls a tool that runs its statement on the pool, not on the
// transaction, waits for good, in production too. The stall says so:
// the tool waits for a connection of its pool, every one in use, a
// transaction held across the call keeping one (red team rtT #10: it said
// only "blocked in a select").
func TestAPoolOfOneHeldByATransactionIsNamed(t *testing.T) {
	registerPool.Do(func() { sql.Register("agentidem-pool", poolDriver{}) })
	record := &Op{Name: "record_payment", Kind: KindWrite, Params: []string{"order"}}
	var db *sql.DB
	agent := func(ctx context.Context) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "insert order"); err != nil {
			return err
		}
		if err := traced(ctx, record, []any{"o-1"}, []any{"o-1"}, func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "insert payment") // the pool, not tx
			return err
		}); err != nil {
			return err
		}
		return tx.Commit()
	}
	setup := Setup(func(context.Context) error {
		var err error
		db, err = sql.Open("agentidem-pool", "")
		db.SetMaxOpenConns(1)
		return err
	})
	teardown := Teardown(func(context.Context) error { return db.Close() })
	s := NewSuite("pool of one", agent, setup, teardown, StallTimeout(500*time.Millisecond))
	endSuite(t, s)
	res, err := s.Baseline(context.Background())
	require.NoError(t, err)
	var stalled []string
	for _, f := range res.Findings {
		if f.Code == CodeStalled {
			stalled = append(stalled, f.Message)
		}
	}
	require.NotEmpty(t, stalled, "the deadlock stalls the baseline: %v", res.Findings)
	assert.True(t, strings.Contains(stalled[0], "waiting for a connection of its database/sql pool, every one of which is in use"), stalled[0])
}
