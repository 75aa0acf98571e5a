package benchproc

import (
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// children are the processes started and not yet ended, killed when the
// program is interrupted.
var children = struct {
	sync.Mutex
	m       map[*exec.Cmd]bool
	handler sync.Once
}{m: map[*exec.Cmd]bool{}}

// Start starts cmd and keeps it among the children that an interrupt
// (SIGINT or SIGTERM) kills before the program exits with status 130.
// Forget it once it has ended.
func Start(cmd *exec.Cmd) error {
	children.handler.Do(func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			s := <-sig
			children.Lock()
			for c := range children.m {
				c.Process.Kill()
			}
			children.Unlock()
			Logf("interrupted by %v: servers and load generator stopped", s)
			os.Exit(130)
		}()
	})
	children.Lock()
	defer children.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	children.m[cmd] = true
	return nil
}

// Forget removes cmd, which has ended, from the children.
func Forget(cmd *exec.Cmd) {
	children.Lock()
	delete(children.m, cmd)
	children.Unlock()
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
