//go:build unix

package testkit

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openReport opens the report file at path for writing, making it if
// need be, and says whether it made it. A regular file is one the
// runtime's poller cannot watch, and os.OpenFile tries all the same (two
// more system calls, half the cost of the open where a system call costs
// a microsecond, as in a virtual machine); os.NewFile asks only whether
// the descriptor blocks.
func openReport(path string) (f *os.File, made bool, err error) {
	for {
		fd, err := open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC)
		if err == nil {
			return os.NewFile(uintptr(fd), path), true, nil
		}
		if err != syscall.EEXIST {
			return nil, false, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		f, err := openOldReport(path)
		if err == nil {
			return f, false, nil
		}
		if !errors.Is(err, fs.ErrNotExist) { // removed in between: make it
			return nil, false, err
		}
	}
}

func open(path string, mode int) (int, error) {
	fd, err := syscall.Open(path, mode, 0o666)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, mode, 0o666)
	}
	return fd, err
}

// openOldReport opens the report file an earlier run left at path for
// writing, and fails where there is none.
func openOldReport(path string) (*os.File, error) {
	fd, err := open(path, syscall.O_WRONLY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
