//go:build unix

package testkit

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// openReport opens the report file at path for writing, making it if
// need be, and says whether it made it. A regular file is one the
// runtime's poller cannot watch, and os.OpenFile tries all the same (two
// more system calls, half the cost of the open where a system call costs
// a microsecond, as in a virtual machine), and os.NewFile asks whether the
// descriptor blocks (one more) and sets up a cleanup: a report file is its
// descriptor (reportFD).
func openReport(path string) (f *reportFD, made bool, err error) {
	for {
		fd, err := open(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC)
		if err == nil {
			return &reportFD{fd: fd, name: path}, true, nil
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
func openOldReport(path string) (*reportFD, error) {
	fd, err := open(path, syscall.O_WRONLY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &reportFD{fd: fd, name: path}, nil
}

// reportFD is an open report file: its descriptor and path, written once
// and closed by the suite that opened it. Its methods are os.File's that
// testkit uses, with their errors (an *fs.PathError naming the operation
// and the path) and their retries, without what an os.File adds to each
// open and close (a system call to ask whether the descriptor blocks, a
// cleanup set and cleared, the poller's reference count).
type reportFD struct {
	fd   int
	name string
}

func (f *reportFD) wrap(op string, err error) error {
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

func (f *reportFD) Seek(offset int64, whence int) (int64, error) {
	n, err := syscall.Seek(f.fd, offset, whence)
	if err != nil {
		return 0, f.wrap("seek", err)
	}
	return n, nil
}

func (f *reportFD) WriteAt(b []byte, off int64) (n int, err error) {
	for len(b) > 0 {
		m, err := syscall.Pwrite(f.fd, b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, f.wrap("write", err)
		}
		if m == 0 {
			return n, f.wrap("write", io.ErrUnexpectedEOF)
		}
		n += m
		b = b[m:]
		off += int64(m)
	}
	return n, nil
}

func (f *reportFD) Truncate(size int64) error {
	err := syscall.Ftruncate(f.fd, size)
	for err == syscall.EINTR {
		err = syscall.Ftruncate(f.fd, size)
	}
	if err != nil {
		return f.wrap("truncate", err)
	}
	return nil
}

func (f *reportFD) Close() error {
	if err := syscall.Close(f.fd); err != nil {
		return f.wrap("close", err)
	}
	return nil
}
