//go:build !unix

package connlimit

// openFileLimit returns 0: the limit of open files is not known here.
func openFileLimit() uint64 { return 0 }
