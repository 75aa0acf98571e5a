//go:build !linux

package sqlite

import "os"

// allocate gives f n bytes on disk (not a sparse file).
func allocate(f *os.File, n int64) error { return writeZeros(f, n) }
