package grpctest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentidem/agentidem-go/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// A red team (rtW #2) called a gRPC service through a client whose service
// config retries UNAVAILABLE: a server that booked the refund and then
// failed made the client send it again inside one traced call, and the
// baseline booked two refunds, "ok". The suite's note told it to wrap the
// client with runtime.Transport, which a ClientConn cannot use. The guide
// (section 5) says instead: make the test's fake server apply the write,
// then answer UNAVAILABLE once in each world, and say with an Invariant
// what one call may leave. This is that recipe, on the package's server,
// whose handler books without tracing (a service of another team).

const retryConfig = `{"methodConfig":[{"name":[{"service":"bank.Bank"}],"retryPolicy":{"maxAttempts":3,"initialBackoff":"0.01s","maxBackoff":"0.01s","backoffMultiplier":1,"retryableStatusCodes":["UNAVAILABLE"]}}]}`

// interceptedDesc is desc with a handler that runs the server's
// interceptor, as protoc-gen-go-grpc's handlers do (desc's ignores it).
var interceptedDesc = grpc.ServiceDesc{
	ServiceName: "bank.Bank",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Refund", Handler: func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		inner := func(ctx context.Context, req any) (any, error) {
			return handler(srv, ctx, func(v any) error { proto.Merge(v.(proto.Message), req.(proto.Message)); return nil }, nil)
		}
		if ic == nil {
			return inner(ctx, in)
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/bank.Bank/Refund"}, inner)
	}}},
}

// startFailOnce serves the ledger behind an interceptor that lets the
// handler book the first Refund of the world, then answers UNAVAILABLE.
func startFailOnce(failed *atomic.Bool) (*Server, *grpc.ClientConn, error) {
	failOnce := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err == nil && info.FullMethod == "/bank.Bank/Refund" && failed.CompareAndSwap(false, true) {
			return nil, status.Error(codes.Unavailable, "connection reset after the refund was booked")
		}
		return resp, err
	}
	l := &Ledger{Refunds: map[string]int{}, Keys: map[string]string{}, Untraced: true}
	s := grpc.NewServer(grpc.UnaryInterceptor(failOnce))
	s.RegisterService(&interceptedDesc, l)
	lis := bufconn.Listen(1 << 20)
	go s.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(retryConfig))
	return &Server{L: l, srv: s, lis: lis}, conn, err
}

func retrySuite(t *testing.T, keyed bool) *runtime.Report {
	t.Helper()
	var (
		srv    *Server
		c      *Client
		failed atomic.Bool
	)
	stop := func() {
		if srv != nil {
			c.Conn.Close()
			srv.Stop()
		}
	}
	t.Cleanup(stop)
	rep, err := runtime.Run(context.Background(), t.Name(), func(ctx context.Context) error { return Agent(ctx, c, keyed) },
		runtime.Setup(func(context.Context) error {
			stop()
			failed.Store(false)
			s, conn, err := startFailOnce(&failed)
			srv, c = s, &Client{Conn: conn}
			return err
		}),
		runtime.State(func() any { return srv.L.Snapshot() }),
		runtime.Invariant("one refund per payment", func(*runtime.Trace) error {
			if n := srv.L.Snapshot().(map[string]int)["p1"]; n > 1 {
				return fmt.Errorf("p1 refunded %d times", n)
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Without a key the client's retry books again, in the baseline already:
// the invariant fails there. With a key the server deduplicates, the
// invariant holds, and the suite is SAFE.
func TestGRPCRetryPolicyMetByAFailingFakeServer(t *testing.T) {
	for range 2 {
		buggy := retrySuite(t, false)
		assert := func(ok bool, format string, args ...any) {
			t.Helper()
			if !ok {
				t.Errorf(format, args...)
			}
		}
		var failedIn []string
		for _, f := range buggy.Findings {
			if f.Code == runtime.CodeInvariantFailed && strings.Contains(f.Message, "p1 refunded 2 times") {
				failedIn = append(failedIn, f.Scenario)
			}
		}
		assert(!buggy.Safe, "the unkeyed agent is safe")
		assert(len(failedIn) > 0 && failedIn[0] == "baseline", "the retry's second booking fails the invariant in the baseline: %v", failedIn)

		fixed := retrySuite(t, true)
		assert(fixed.Safe, "the keyed agent: %+v", fixed.Findings)
	}
}
