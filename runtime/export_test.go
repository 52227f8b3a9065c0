package runtime

import "testing"

// CheckReportEncoding fails unless the report's MarshalJSON and WriteJSON
// write what the reflection path writes (checkEncoding), for the tests of
// package runtime_test.
func CheckReportEncoding(tb testing.TB, name string, r *Report) {
	tb.Helper()
	checkEncoding(tb, name, r)
}

// judgedMore returns the opMore of an Operation the State judge saw as v.
func judgedMore(v *effectView) *opMore { return &opMore{view: v} }
