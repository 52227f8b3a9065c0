// Package params has unnamed and blank parameters and parameters named
// like the wrapper's own locals.
package params

import (
	"context"
	neturl "net/url"
)

// Handler has methods with odd parameter names.
type Handler struct{}

// unnamed has no parameter names at all.
//
//agentidem:read
func unnamed(context.Context, string, int) (string, error) { return "", nil }

// blank has blank parameters next to named ones.
//
//agentidem:write identity=id
func blank(_ context.Context, id string, _ int, _ ...string) error { return nil }

// clash names its parameters like the wrapper's locals.
//
//agentidem:write identity=aiCall,aiCtx,aiErr,aiLost,aiR0,aiV0,aiArgs+1
func clash(ctx context.Context, aiCall string, aiCtx int, aiErr string, aiLost bool, aiR0, aiV0 string, aiArgs int) (aiR1 string, err error) {
	return aiCall + aiErr + aiR0 + aiV0, nil
}

// Handle has an unnamed receiver and blank parameters.
//
//agentidem:write identity=p1
func (Handler) Handle(_ context.Context, p1 string, _ int) (int, error) { return len(p1), nil }

// recv names its context like the default blank name.
//
//agentidem:read
func (h *Handler) recv(p0 context.Context, recv int) error { return nil }

// shadow names a later parameter like the name a blank one would get.
//
//agentidem:write identity=p0
func shadow(_ string, p0 int, _ bool) error { return nil }

// Serve has an unnamed receiver and a parameter named like the default
// receiver name.
//
//agentidem:write identity=recv
func (*Handler) Serve(recv int) error { return nil }

// Account shares its name with a parameter below.
type Account struct{ ID string }

// save has a parameter named like its type, and one named like an imported
// package that its identity uses under another name.
//
//agentidem:write identity=neturl.PathEscape(url),Account.ID
func save(ctx context.Context, Account Account, url string, base *neturl.URL) (Account, *neturl.URL, error) {
	return Account, base, nil
}

// agentidemrt is named like the generated file's runtime import.
//
//agentidem:read
func runtimeNamed(agentidemrt string) (int, error) { return len(agentidemrt), nil }
