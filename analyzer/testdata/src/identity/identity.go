package identity

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"time"

	"billing"

	"github.com/google/uuid"
)

type order struct{ ID string }

func freshIdentity(ctx context.Context, s *billing.Svc) error {
	return s.RefundTraced(ctx, uuid.NewString(), 100) // want `identity of Svc.Refund \(paymentID\) is built from uuid.NewString at the call site`
}

func stableIdentity(ctx context.Context, s *billing.Svc, o order) error {
	return s.RefundTraced(ctx, o.ID, 100)
}

func throughVariable(ctx context.Context, o order) error {
	id := uuid.New()
	key := id.String()
	return billing.ChargeWithTrace(ctx, o.ID, key) // want `identity of charge \(key\) is built from uuid.New`
}

func timestamp(ctx context.Context) error {
	return billing.CreateInvoiceTraced(ctx, fmt.Sprint(time.Now().UnixNano())) // want `identity of CreateInvoice \(orderID\) is built from time.Now`
}

func randomKey(ctx context.Context) error {
	return billing.CreateInvoiceTraced(ctx, fmt.Sprint(rand.Int63())) // want `built from rand.Int63`
}

// A coarse, deterministic per-day key is chosen on purpose.
func dailyKey(ctx context.Context, o order) error {
	day := time.Now().Format("2006-01-02")
	return billing.CreateInvoiceTraced(ctx, o.ID+"/"+day)
}

// The same in UTC, and truncated to the day: coarse keys too.
func dailyKeyUTC(ctx context.Context, o order) error {
	if err := billing.CreateInvoiceTraced(ctx, o.ID+"/"+time.Now().UTC().Format("2006-01-02")); err != nil {
		return err
	}
	return billing.CreateInvoiceTraced(ctx, o.ID+"/"+time.Now().UTC().Truncate(24*time.Hour).Format(time.DateOnly))
}

// The moment itself in UTC is fresh on every retry.
func momentUTC(ctx context.Context, o order) error {
	return billing.CreateInvoiceTraced(ctx, time.Now().UTC().String()) // want `identity of CreateInvoice \(orderID\) is built from time.Now`
}

// Derived by hashing the request: deterministic.
func hashedKey(ctx context.Context, o order) error {
	return billing.ChargeWithTrace(ctx, o.ID, uuid.NewSHA1(uuid.UUID{}, []byte(o.ID)).String())
}

// A fresh value in a parameter that is not part of the identity is fine.
func nonIdentityParam(ctx context.Context, o order) error {
	return billing.ChargeWithTrace(ctx, uuid.NewString(), o.ID)
}

// Plain functions with an idempotency-key parameter.
func pay(ctx context.Context, amount int, idempotencyKey string) error { return nil }

func plainFresh(ctx context.Context) error {
	return pay(ctx, 100, uuid.NewString()) // want `idempotency key idempotencyKey of pay is built from uuid.NewString`
}

func plainStable(ctx context.Context, o order) error {
	return pay(ctx, 100, "pay/"+o.ID)
}

func ignored(ctx context.Context, s *billing.Svc) error {
	//agentidem:ignore a refund here is a manual one-off from the console
	return s.RefundTraced(ctx, uuid.NewString(), 100)
}

// One key for the retries of this call: correct for a plain function.
func plainKeyBeforeRetries(ctx context.Context) error {
	key := uuid.NewString()
	var err error
	for i := 0; i < 3; i++ {
		if err = pay(ctx, 100, key); err == nil {
			return nil
		}
	}
	return err
}

func newKey() string {
	b := make([]byte, 8)
	_, _ = crand.Read(b)
	return hex.EncodeToString(b)
}

func readerKey() string {
	b := make([]byte, 8)
	io.ReadFull(crand.Reader, b)
	return hex.EncodeToString(b)
}

func fixedKey() string {
	b := make([]byte, 8)
	return hex.EncodeToString(b)
}

func throughHelper(ctx context.Context, o order) error {
	return billing.ChargeWithTrace(ctx, o.ID, newKey()) // want `identity of charge \(key\) is built from newKey \(rand.Read\)`
}

func throughReaderHelper(ctx context.Context, o order) error {
	return billing.ChargeWithTrace(ctx, o.ID, readerKey()) // want `identity of charge \(key\) is built from readerKey \(rand.Reader\)`
}

func throughDeterministicHelper(ctx context.Context, o order) error {
	return billing.ChargeWithTrace(ctx, o.ID, fixedKey())
}
