//go:build unix

package connlimit

import "syscall"

// openFileLimit returns the process's limit of open files (the soft
// RLIMIT_NOFILE), 0 when unknown.
func openFileLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return uint64(rl.Cur)
}
