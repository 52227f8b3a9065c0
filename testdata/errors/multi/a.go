// Package multi has errors in two files.
package multi

//agentidem:write identity=nope
func a(id string) error { return nil }
