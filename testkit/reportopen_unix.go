//go:build unix

package testkit

import (
	"io/fs"
	"os"
	"syscall"
)

// openReport opens the report file at path for writing, making it if
// need be. A regular file is one the runtime's poller cannot watch, and
// os.OpenFile tries all the same (two more system calls, half the cost of
// the open where a system call costs a microsecond, as in a virtual
// machine); os.NewFile asks only whether the descriptor blocks.
func openReport(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0o666)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_CLOEXEC, 0o666)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
