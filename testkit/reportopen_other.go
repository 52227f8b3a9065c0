//go:build !unix

package testkit

import (
	"errors"
	"io/fs"
	"os"
)

// openReport opens the report file at path for writing, making it if
// need be, and says whether it made it.
func openReport(path string) (f *reportFD, made bool, err error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		f, err = openOldReport(path)
		if err == nil {
			return f, false, nil
		}
		if !errors.Is(err, fs.ErrNotExist) { // removed in between: make it
			return nil, false, err
		}
	}
}

// openOldReport opens the report file an earlier run left at path for
// writing, and fails where there is none.
func openOldReport(path string) (*reportFD, error) {
	return os.OpenFile(path, os.O_WRONLY, 0o666)
}

// reportFD is an open report file.
type reportFD = os.File
