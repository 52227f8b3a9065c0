package runtime

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Stalls in two libraries read as guesses (red team rtW #3, #7). A tool
// waiting for a connection of a pgxpool of one, which the agent's own
// transaction held across the call, was "blocked in a select at
// agent.go:21" with a hint of "a library's timed long poll (a message
// broker's pull request ...)", where database/sql's twin is told as the
// pool's every connection in use. A gRPC client stream never closed
// (CloseSend) listed eleven goroutines of grpc and bufconn, by bare file
// names ("stream.go:529") that read as the user's own stream.go:73, never
// said that the call waited for its RPC's answer and the server's handler
// for the client's next message, and gave the long-poll hint too.
//
// So a wait in pgx's pool (pgxpool's Acquire, puddle's acquire) gets the
// pool's text; a gRPC call waiting for its answer and a server handler
// waiting for the client's next message say so; goroutines of gRPC's own
// (its transport's loops, bufconn, its callback serializer, a stream's
// context watcher), with no frame of the user's code, are folded into one
// "and N goroutines of google.golang.org/grpc"; a library's frame is
// shown with its directory ("grpc/stream.go:529"); and none of these
// known waits gets the long-poll hint (world.timedSelects).

// pgxPoolWait reports whether g waits for a connection of a pgx pool.
func (g *gInfo) pgxPoolWait() bool {
	return slices.ContainsFunc(g.funcs, func(f string) bool {
		return strings.HasPrefix(f, "github.com/jackc/puddle/") && (strings.Contains(f, ").acquire") || strings.Contains(f, ").Acquire")) ||
			strings.HasPrefix(f, "github.com/jackc/pgx/") && strings.Contains(f, "pgxpool.(*Pool).Acquire")
	})
}

// sqlPoolWait reports whether g waits for a connection of a database/sql
// pool.
func (g *gInfo) sqlPoolWait() bool {
	return g.has("database/sql.(*DB).conn")
}

// grpcHandlerRecv reports whether g is a gRPC server's handler waiting
// for the client's next message.
func (g *gInfo) grpcHandlerRecv() bool {
	return g.runsUserCode() && slices.ContainsFunc(g.funcs, func(f string) bool {
		return strings.HasPrefix(f, "google.golang.org/grpc.(*serverStream).RecvMsg")
	})
}

// grpcAwaiting reports whether g is a gRPC client's call waiting for its
// answer, in the user's code.
func (g *gInfo) grpcAwaiting() bool {
	return g.runsUserCode() && slices.ContainsFunc(g.funcs, awaitingRPC)
}

// grpcOwn reports whether g is one of gRPC's own goroutines: a frame of
// google.golang.org/grpc and none of the user's code.
func (g *gInfo) grpcOwn() bool {
	return !g.runsUserCode() && slices.ContainsFunc(g.funcs, func(f string) bool {
		return strings.HasPrefix(strings.TrimPrefix(f, "created by "), "google.golang.org/grpc")
	})
}

// knownLibWait reports whether g's wait is one libWaitNote tells, or one
// of gRPC's own loops: no timed long poll.
func (g *gInfo) knownLibWait() bool {
	return g.pgxPoolWait() || g.sqlPoolWait() || g.grpcHandlerRecv() || g.grpcAwaiting() || g.grpcOwn() || g.xsyncSemaphoreWait() // syncwaits.go
}

// libWaitNote says what g waits for where a library's frame tells it: a
// pgx pool's connection, a gRPC answer, a gRPC client's next message; ""
// otherwise.
func (g *gInfo) libWaitNote() string {
	switch {
	case g.pgxPoolWait():
		return ", waiting for a connection of its pgx pool (pgxpool's Acquire), every one of which is in use: a transaction or rows the agent holds open across this call keep one (with a pool of one, MaxConns 1, run the statement on the transaction, or end it before the call)"
	case g.grpcHandlerRecv():
		return ", a gRPC server's handler waiting for the client's next message (RecvMsg): a client stream its client never closed (CloseSend), or a client that waits for this handler's answer first"
	case g.grpcAwaiting():
		return ", waiting for its gRPC call's answer: on a client stream, the server answers once the client closes its side (CloseSend); on a unary call, the server's handler has not returned"
	}
	return g.xsyncWaitNote() // syncwaits.go
}

// libSite is a library's frame as a stall names it: its file with its
// directory, the module's version left out ("grpc/stream.go:529"), so
// that it does not read as the user's file of the same name.
func libSite(site string) string {
	dir, file := filepath.Split(site)
	dir = filepath.Base(dir)
	if i := strings.IndexByte(dir, '@'); i >= 0 {
		dir = dir[:i]
	}
	if dir == "." || dir == "/" || dir == "" {
		return file
	}
	return dir + "/" + file
}

// foldedText is blocked's line for n goroutines of module's own.
func foldedText(n int, module string) string {
	if n == 1 {
		return "and 1 goroutine of " + module + "'s own (its transport's loops)"
	}
	return fmt.Sprintf("and %d goroutines of %s's own (its transport's loops)", n, module)
}
