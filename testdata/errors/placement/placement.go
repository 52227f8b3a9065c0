// Package placement has directives in the wrong place.
package placement

// Order is a type, not a function.
//
//agentidem:write identity=id
type Order struct{ ID string }

//agentidem:read
var x = 1

//agentidem:read
//agentidem:write identity=id
func twice(id string) error { return nil }

func body() {
	//agentidem:read
	_ = x
}

//agentidem:read
func init() {}

//agentidem:write identity=1
func _() error { return nil }
