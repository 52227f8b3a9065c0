package runtime

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Stacks as the red team's stalls showed them (rtW #3: a pgxpool of one
// held by the agent's transaction; rtW #7: a gRPC client stream never
// closed, over bufconn), cut to the frames that matter.
const modDir = "/root/go/pkg/mod/"

var (
	pgxToolWait = gInfo{id: 26, state: "select", funcs: []string{
		"github.com/jackc/puddle/v2.(*Pool[...]).acquire",
		"github.com/jackc/puddle/v2.(*Pool[...]).Acquire",
		"github.com/jackc/pgx/v5/pgxpool.(*Pool).Acquire",
		"github.com/jackc/pgx/v5/pgxpool.(*Pool).Exec",
		"rtw/pgstall.(*DB).RecordRefund",
		"rtw/pgstall.Agent",
	}, files: []string{
		modDir + "github.com/jackc/puddle/v2@v2.2.2/pool.go:410",
		modDir + "github.com/jackc/puddle/v2@v2.2.2/pool.go:370",
		modDir + "github.com/jackc/pgx/v5@v5.13.0/pgxpool/pool.go:570",
		modDir + "github.com/jackc/pgx/v5@v5.13.0/pgxpool/pool.go:700",
		"/src/rtw/pgstall/agent.go:21",
		"/src/rtw/pgstall/agent.go:35",
	}}
	grpcCall = gInfo{id: 28, state: "select", funcs: []string{
		"google.golang.org/grpc/internal/transport.(*recvBufferReader).read",
		"google.golang.org/grpc.(*csAttempt).recvMsg",
		"google.golang.org/grpc.(*clientStream).RecvMsg",
		"rtw/grpcpay.BatchRefund",
	}, files: []string{
		modDir + "google.golang.org/grpc@v1.85.0/internal/transport/transport.go:200",
		modDir + "google.golang.org/grpc@v1.85.0/stream.go:1200",
		modDir + "google.golang.org/grpc@v1.85.0/stream.go:1100",
		"/src/rtw/grpcpay/stream.go:73",
	}}
	grpcHandler = gInfo{id: 42, state: "select", funcs: []string{
		"google.golang.org/grpc/internal/transport.(*recvBufferReader).read",
		"google.golang.org/grpc.(*serverStream).RecvMsg",
		"rtw/grpcpay.(*server).BatchRefund",
	}, files: []string{
		modDir + "google.golang.org/grpc@v1.85.0/internal/transport/transport.go:200",
		modDir + "google.golang.org/grpc@v1.85.0/stream.go:1700",
		"/src/rtw/grpcpay/stream.go:25",
	}}
	grpcLoop = gInfo{id: 37, state: "select", funcs: []string{
		"google.golang.org/grpc/internal/transport.(*controlBuffer).get",
		"google.golang.org/grpc/internal/transport.(*loopyWriter).run",
		"created by google.golang.org/grpc/internal/transport.newHTTP2Client",
	}, files: []string{
		modDir + "google.golang.org/grpc@v1.85.0/internal/transport/controlbuf.go:496",
		modDir + "google.golang.org/grpc@v1.85.0/internal/transport/controlbuf.go:600",
		modDir + "google.golang.org/grpc@v1.85.0/internal/transport/http2_client.go:400",
	}}
)

func TestLibraryWaitsAreToldForWhatTheyAre(t *testing.T) {
	note := pgxToolWait.libWaitNote()
	assert.Contains(t, note, "waiting for a connection of its pgx pool (pgxpool's Acquire), every one of which is in use")
	assert.Contains(t, note, "a transaction or rows the agent holds open across this call keep one")
	assert.Equal(t, "agent.go:21", pgxToolWait.where())

	assert.Contains(t, grpcCall.libWaitNote(), "waiting for its gRPC call's answer")
	assert.Contains(t, grpcCall.libWaitNote(), "CloseSend")
	assert.Contains(t, grpcHandler.libWaitNote(), "a gRPC server's handler waiting for the client's next message")
	assert.False(t, grpcCall.grpcOwn())
	assert.False(t, grpcHandler.grpcOwn())

	assert.True(t, grpcLoop.grpcOwn(), "gRPC's own loop is folded")
	assert.Equal(t, "transport/controlbuf.go:496", grpcLoop.where(), "a library's frame with its directory")
	assert.Equal(t, "grpc/stream.go:529", libSite(modDir+"google.golang.org/grpc@v1.85.0/stream.go:529"))
	assert.Equal(t, "and 3 goroutines of google.golang.org/grpc's own (its transport's loops)", foldedText(3, "google.golang.org/grpc"))

	for _, g := range []gInfo{pgxToolWait, grpcCall, grpcHandler, grpcLoop} {
		assert.True(t, g.knownLibWait(), "goroutine %d: no long-poll hint", g.id)
	}
	plain := gInfo{id: 9, state: "select", funcs: []string{"github.com/nats-io/nats.go.(*Subscription).Fetch", "rtw/q.Agent"},
		files: []string{modDir + "github.com/nats-io/nats.go@v1.40.0/js.go:3000", "/src/rtw/q/agent.go:12"}}
	assert.False(t, plain.knownLibWait(), "a broker's pull request may be a timed long poll")
	assert.Empty(t, plain.libWaitNote())
	assert.False(t, strings.Contains(pgxToolWait.libWaitNote(), "long poll"))
}
