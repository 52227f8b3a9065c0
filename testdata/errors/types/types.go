// Package types has identities that name nothing or cannot be
// canonicalized.
package types

import "unsafe"

type opaque struct{ a, b int }

type withFunc struct {
	ID string
	On func()
}

//agentidem:write identity=orderID
func noParam(id string) error { return nil }

//agentidem:write identity=cb
func funcIdentity(cb func()) error { return nil }

//agentidem:write identity=ch
func chanIdentity(ch chan int) error { return nil }

//agentidem:write identity=c
func complexIdentity(c complex128) error { return nil }

//agentidem:write identity=p
func pointerIdentity(p unsafe.Pointer) error { return nil }

//agentidem:write identity=o
func opaqueIdentity(o opaque) error { return nil }

//agentidem:write identity=w
func fieldFunc(w withFunc) error { return nil }

//agentidem:write identity=id,string
func typeIdentity(id string) error { return nil }

//agentidem:read entity=ch
func chanEntity(ch chan int) error { return nil }

//agentidem:write identity=id,<-ids
func receive(id string, ids chan string) error { return nil }

//agentidem:write identity=ref
func result(id string) (ref string, err error) { return id, nil }
