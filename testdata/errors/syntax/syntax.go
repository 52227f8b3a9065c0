// Package syntax has directives that do not parse.
package syntax

//agentidem:write identity=id colour=red
func unknownKey(id string) error { return nil }

//agentidem:write name=missingIdentity
func missingIdentity(id string) error { return nil }

//agentidem:write identity=id identity=n
func duplicateKey(id string, n int) error { return nil }

//agentidem:write identity="id
func unterminated(id string) error { return nil }

//agentidem:write identity=id name="a\q"
func badEscape(id string) error { return nil }

//agentidem:read identity=id
func readIdentity(id string) error { return nil }

//agentidem:delete identity=id
func unknownVerb(id string) error { return nil }

//agentidem:write identity=id+
func notExpr(id string) error { return nil }

//agentidem:write identity=id wrapper=not-ident
func badWrapper(id string) error { return nil }
