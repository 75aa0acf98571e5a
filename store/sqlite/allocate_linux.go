package sqlite

import (
	"errors"
	"os"
	"syscall"
)

// allocate gives f n bytes on disk (not a sparse file).
func allocate(f *os.File, n int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, n)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return writeZeros(f, n)
	}
	return err
}
