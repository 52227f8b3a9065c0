// Package escape holds raw tools handed as values (red team fF): to a
// helper that calls them they escape the trace as a direct call does.
package escape

import (
	"context"
	"reflect"

	"indirect/desk"
)

func retry(ctx context.Context, f func(context.Context, string, int) error, id string, cents int) error {
	var err error
	for i := 0; i < 3; i++ {
		if err = f(ctx, id, cents); err == nil {
			return nil
		}
	}
	return err
}

func viaRetry(ctx context.Context, id string) error {
	if _, err := desk.WeatherTraced(ctx, "Paris"); err != nil {
		return err
	}
	return retry(ctx, desk.Refund, id, 100) // want `Refund handed to retry, which calls it, in agent code escapes the trace`
}

// The twin hands the wrapper.
func viaRetryTraced(ctx context.Context, id string) error {
	if _, err := desk.WeatherTraced(ctx, "Paris"); err != nil {
		return err
	}
	return retry(ctx, desk.RefundTraced, id, 100)
}

// A raw tool bound to a variable and called is a direct call.
func boundRaw(ctx context.Context, id string) error {
	if _, err := desk.WeatherTraced(ctx, "Paris"); err != nil {
		return err
	}
	refund := desk.Refund
	return refund(ctx, id, 100) // want `direct call of Refund in agent code escapes the trace`
}

// A helper that makes a closure around the tool (it may trace it) and a
// value read for its type call nothing.
func wrap(name string, f func(context.Context, string, int) error) func(context.Context, string, int) error {
	return func(ctx context.Context, id string, cents int) error { return f(ctx, id, cents) }
}

func notCalled(ctx context.Context, id string) (string, error) {
	_ = reflect.TypeOf(desk.Refund).String()
	_ = wrap("refund", desk.Refund)
	return desk.WeatherTraced(ctx, id)
}

// Outside agent code (no wrapper called) nothing is reported.
func plain(ctx context.Context, id string) error {
	return retry(ctx, desk.Refund, id, 100)
}

// A local closure that calls what it is handed is a helper too.
func viaClosure(ctx context.Context, id string) error {
	if _, err := desk.WeatherTraced(ctx, "Paris"); err != nil {
		return err
	}
	try := func(f func(context.Context, string, int) error) error { return f(ctx, id, 1) }
	return try(desk.Refund) // want `Refund handed to try, which calls it, in agent code escapes the trace`
}

// Through an interface the raw method is not judged: the value the agent
// holds may be a traced implementation the module does not show.
type creator interface {
	CreateTicket(ctx context.Context, id, title string) (desk.Ticket, error)
	Close() error
}

func viaInterface(ctx context.Context, c creator, id string) error {
	if _, err := desk.WeatherTraced(ctx, "Paris"); err != nil {
		return err
	}
	_, err := c.CreateTicket(ctx, id, "t")
	return err
}
