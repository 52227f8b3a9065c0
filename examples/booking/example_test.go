package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"time"

	"github.com/agentidem/agentidem-go/examples/booking"
	"github.com/agentidem/agentidem-go/runtime"
)

// TransportRetryAgent retries only on a *url.Error. FaultError gives its
// faults the *url.Error net/http would return, and its retry after a lost
// answer books twice; with the runtime's own errors it never retried,
// and passed with a note (testkit.FaultError is the same option in a
// test).
func Example() {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &booking.Client{HTTP: &http.Client{Transport: tr, Timeout: 2 * time.Second}}
	var srv *httptest.Server
	rep, err := runtime.Run(context.Background(), "transport-retry",
		func(ctx context.Context) error { return booking.TransportRetryAgent(ctx, client, "ada", "LH400") },
		runtime.Setup(func(context.Context) error {
			srv = httptest.NewServer(booking.NewService())
			client.Base = srv.URL
			return nil
		}),
		runtime.Teardown(func(context.Context) error { srv.Close(); return nil }),
		runtime.FaultError(func(op string, kind runtime.FaultKind) error {
			switch kind {
			case runtime.FaultLostAck: // booked, and the answer never came
				return &url.Error{Op: "Post", URL: client.Base + "/bookings", Err: context.DeadlineExceeded}
			case runtime.FaultBefore, runtime.FaultLostRequest: // never reached the service
				return &url.Error{Op: "Post", URL: client.Base + "/bookings", Err: syscall.ECONNREFUSED}
			}
			return nil // the runtime's own error
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("safe:", rep.Safe, "notes:", len(rep.Notes))
	for _, p := range rep.Problems {
		fmt.Println(p.Code, p.Scenario)
	}
	// Output:
	// safe: false notes: 0
	// duplicate_write lost_acknowledgement/book#1
}
