//go:build unix

package server

import "syscall"

// writeNow writes b to rc without waiting for the connection to take it:
// it returns the bytes written, 0 or less when none was.
func writeNow(rc syscall.RawConn, b []byte) int {
	n := 0
	err := rc.Write(func(fd uintptr) bool {
		var err error
		if n, err = syscall.Write(int(fd), b); err != nil {
			n = 0 // EAGAIN: the connection's buffer is full
		}
		return true // done, written or not
	})
	if err != nil {
		return 0
	}
	return n
}

// readNow reads into b what rc has, without waiting for more: it returns
// the bytes read, 0 or less when none was (nothing yet, the end, or an
// error, which a read that waits then reports).
func readNow(rc syscall.RawConn, b []byte) int {
	n := 0
	err := rc.Read(func(fd uintptr) bool {
		var err error
		if n, err = syscall.Read(int(fd), b); err != nil {
			n = 0 // EAGAIN: nothing to read yet
		}
		return true // done, read or not
	})
	if err != nil {
		return 0
	}
	return n
}
