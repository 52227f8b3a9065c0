// Package grpctest tests the suite on agents whose tools call an in-process
// gRPC service (red team rtN F1, F2): a nested module, as runtime/ imports
// the standard library only. The tool sends an idempotency key in the
// call's metadata; the service's handler books a refund in a traced ledger.
package grpctest

import (
	"context"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

//go:generate go run github.com/agentidem/agentidem-go/cmd/agentidem-gen

type Ledger struct {
	mu      sync.Mutex
	Refunds map[string]int
	Keys    map[string]string
	// Untraced: the server calls its ledger directly (a service of another team).
	Untraced bool
}

// Book is the sink's write (server side).
//
//agentidem:write identity=payment name=ledger_book
func (l *Ledger) Book(ctx context.Context, payment string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.Refunds[payment]++
	return "re_" + payment, nil
}

// BookKeyed is the sink's write deduplicated by an idempotency key from gRPC metadata.
//
//agentidem:write identity=payment name=ledger_book_keyed
func (l *Ledger) BookKeyed(ctx context.Context, payment, key string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.Keys[key]; ok {
		return r, nil
	}
	l.Refunds[payment]++
	l.Keys[key] = "re_" + payment
	return "re_" + payment, nil
}

func (l *Ledger) Snapshot() any {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := map[string]int{}
	for k, v := range l.Refunds {
		m[k] = v
	}
	return m
}

type Server struct {
	L   *Ledger
	srv *grpc.Server
	lis *bufconn.Listener
	tcp net.Listener
}

// StartTCP serves on a localhost TCP listener instead of bufconn.
func StartTCP() (*Server, error) {
	l := &Ledger{Refunds: map[string]int{}, Keys: map[string]string{}}
	s := grpc.NewServer()
	s.RegisterService(&desc, l)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go s.Serve(lis)
	return &Server{L: l, srv: s, tcp: lis}, nil
}

func handler(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	in := new(wrapperspb.StringValue)
	if err := dec(in); err != nil {
		return nil, err
	}
	l := srv.(*Ledger)
	md, _ := metadata.FromIncomingContext(ctx)
	if l.Untraced {
		if keys := md.Get("idempotency-key"); len(keys) > 0 {
			r, err := l.BookKeyed(ctx, in.Value, keys[0]) //agentidem:ignore Untraced on purpose: the finding is true
			return wrapperspb.String(r), err
		}
		r, err := l.Book(ctx, in.Value) //agentidem:ignore Untraced on purpose: the finding is true
		return wrapperspb.String(r), err
	}
	if keys := md.Get("idempotency-key"); len(keys) > 0 {
		r, err := l.BookKeyedTraced(ctx, in.Value, keys[0])
		return wrapperspb.String(r), err
	}
	r, err := l.BookTraced(ctx, in.Value)
	return wrapperspb.String(r), err
}

var desc = grpc.ServiceDesc{
	ServiceName: "bank.Bank",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Refund", Handler: handler}},
}

func Start(untraced bool) *Server {
	l := &Ledger{Refunds: map[string]int{}, Keys: map[string]string{}, Untraced: untraced}
	s := grpc.NewServer()
	s.RegisterService(&desc, l)
	lis := bufconn.Listen(1 << 20)
	go s.Serve(lis)
	return &Server{L: l, srv: s, lis: lis}
}

func (s *Server) Stop() { s.srv.Stop() }

func (s *Server) Dial() (*grpc.ClientConn, error) {
	if s.tcp != nil {
		return grpc.NewClient(s.tcp.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	return grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return s.lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
}

type Client struct{ Conn *grpc.ClientConn }

// Refund is the agent's tool: a gRPC call. key=="" sends no idempotency key.
//
//agentidem:write identity=payment name=refund_rpc
func (c *Client) Refund(ctx context.Context, payment, key string) (string, error) {
	if key != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "idempotency-key", key)
	}
	out := new(wrapperspb.StringValue)
	if err := c.Conn.Invoke(ctx, "/bank.Bank/Refund", wrapperspb.String(payment), out); err != nil {
		return "", err
	}
	return out.Value, nil
}

// Agent retries once on error. keyed: the key names the work ("refund:"+payment).
func Agent(ctx context.Context, c *Client, keyed bool) error {
	key := ""
	if keyed {
		key = "refund:p1"
	}
	if _, err := c.RefundTraced(ctx, "p1", key); err != nil {
		_, err = c.RefundTraced(ctx, "p1", key)
		return err
	}
	return nil
}
