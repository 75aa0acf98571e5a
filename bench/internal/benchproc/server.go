package benchproc

import (
	"bytes"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// A Server is a child process serving on a loopback address, its
// standard output and error in a log file.
type Server struct {
	// Addr is the host:port it serves on.
	Addr string
	// Cmd is the running process.
	Cmd *exec.Cmd
	// Log is its log file, closed by Stop.
	Log    *os.File
	exited chan error
}

// StartServer starts cmd (see Start), which is to serve on addr, with its
// output in a new file at logPath. It does not wait for it to answer:
// each generator knows what answering means for its servers.
func StartServer(cmd *exec.Cmd, addr, logPath string) (*Server, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := Start(cmd); err != nil {
		logFile.Close()
		return nil, err
	}
	s := &Server{Addr: addr, Cmd: cmd, Log: logFile, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	return s, nil
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Exited reports whether the server has ended, and its Wait error.
func (s *Server) Exited() (bool, error) {
	select {
	case err := <-s.exited:
		s.exited <- err
		return true, err
	default:
		return false, nil
	}
}

// Stop ends the server: SIGTERM, then SIGKILL after grace. It closes the
// log and forgets the process.
func (s *Server) Stop(grace time.Duration) {
	defer s.Log.Close()
	defer Forget(s.Cmd)
	if done, _ := s.Exited(); done {
		return
	}
	s.Cmd.Process.Signal(syscall.SIGTERM)
	var err error
	select {
	case err = <-s.exited:
	case <-time.After(grace):
		s.Cmd.Process.Kill()
		err = <-s.exited
	}
	s.exited <- err // for Exited
}

// LogTail returns the last n lines of the server's log, on one line.
func (s *Server) LogTail(n int) string {
	b, _ := os.ReadFile(s.Log.Name())
	return LastLines(b, n)
}

// UnlimitedConns returns the serve flags that lift a pmauthority binary's
// per-client and connection limits (--max-conns, --max-client-conns,
// --max-ws-messages, --max-presence, --max-submissions, --max-creates,
// --max-documents), for loads that open thousands of connections and
// requests from one address; of those, only the ones that binary has (an
// older one has none). The answer is cached per binary.
func UnlimitedConns(bin string) []string {
	connFlagsMu.Lock()
	defer connFlagsMu.Unlock()
	if flags, ok := connFlags[bin]; ok {
		return flags
	}
	flags := []string{}
	help, _ := exec.Command(bin, "serve", "-h").CombinedOutput()
	for _, name := range []string{"max-conns", "max-client-conns", "max-ws-messages", "max-presence",
		"max-submissions", "max-creates", "max-documents"} {
		if bytes.Contains(help, []byte("  -"+name+" ")) {
			flags = append(flags, "--"+name, "1000000000")
		}
	}
	connFlags[bin] = flags
	return flags
}

var (
	connFlagsMu sync.Mutex
	connFlags   = map[string][]string{}
)
