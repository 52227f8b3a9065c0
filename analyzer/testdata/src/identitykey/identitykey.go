// Package identitykey holds writes that hand their sink a key outside
// their identity (red team rtT #9): one made fresh at the call site, in a
// retry loop or not, is reported; one made once before the loop, or from
// the request, is not.
package identitykey

import (
	"context"

	"github.com/google/uuid"
)

//agentidem:write identity=chargeID,amount name=refund_keyed
func RefundWithKey(ctx context.Context, chargeID string, amount int64, key string) error { return nil }

//agentidem:write identity=orderID
func Ship(ctx context.Context, orderID, requestKey, note string) error { return nil }

func freshKeyPerAttempt(ctx context.Context, ch string) error {
	var err error
	for range 3 {
		if err = RefundWithKey(ctx, ch, 100, uuid.NewString()); err == nil { // want `the key argument of refund_keyed, a key outside its identity, is built from uuid.NewString at the call site: every retry or redelivery sends a fresh key`
			return nil
		}
	}
	return err
}

func freshRequestKey(ctx context.Context, o string) error {
	return Ship(ctx, o, uuid.New().String(), "n") // want `the requestKey argument of Ship, a key outside its identity, is built from uuid.New at the call site`
}

func keyOncePerOp(ctx context.Context, ch string) error {
	key := uuid.NewString()
	var err error
	for range 3 {
		if err = RefundWithKey(ctx, ch, 100, key); err == nil {
			return nil
		}
	}
	return err
}

func keyFromTheRequest(ctx context.Context, ch string) error {
	return RefundWithKey(ctx, ch, 100, "refund/"+ch)
}

// A fresh value in a parameter that is no key is not judged.
func freshNote(ctx context.Context, o string) error {
	return Ship(ctx, o, "ship/"+o, uuid.NewString())
}
