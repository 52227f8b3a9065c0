// Package clash has ops and wrappers whose names collide.
package clash

import "context"

//agentidem:write identity=id name=pay
func payA(id string) error { return nil }

//agentidem:write identity=id name=pay
func payB(id string) error { return nil }

//agentidem:read
func refund(id string) error { return nil }

func refundTraced(id string) error { return nil }

//agentidem:write identity=id wrapper=Send
func sendA(id string) error { return nil }

//agentidem:write identity=id wrapper=Send
func sendB(id string) error { return nil }

// Svc has a method whose wrapper name is taken.
type Svc struct{ GetTraced int }

//agentidem:read
func (s *Svc) Get(id string) error { return nil }

//agentidem:write identity=id redact=cvv
func charge(id, card string) error { return nil }

//agentidem:write identity=id redact=ctx
func withCtx(ctx context.Context, id string) error { return nil }

//agentidem:write identity=id after=self name=self
func selfAfter(id string) error { return nil }
