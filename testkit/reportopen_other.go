//go:build !unix

package testkit

import "os"

// openReport opens the report file at path for writing, making it if
// need be.
func openReport(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
}
