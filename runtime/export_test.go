package runtime

import "testing"

// CheckReportEncoding fails unless the report's MarshalJSON and WriteJSON
// write what the reflection path writes (checkEncoding), for the tests of
// package runtime_test.
func CheckReportEncoding(tb testing.TB, name string, r *Report) {
	tb.Helper()
	checkEncoding(tb, name, r)
}
