// Command wsbench measures pmauthority's WebSocket transport
// (docs/protocol.md) against a `pmauthority serve` process it starts on
// 127.0.0.1:
//
//	wsbench run    --bin PATH [--rounds 3] [--quick] [--out FILE]
//	    both measures below, alternated, with a Markdown report of medians
//	wsbench idle   --bin PATH [--conns 5000] [--docs 100] [--runtime]
//	    the server's RSS growth per idle, joined WebSocket editor (with
//	    --runtime also its goroutines, stacks and heap, from its profiles)
//	wsbench ab     --old PATH --new PATH [--rounds 3] [--conns 2000] [--docs 10] [--out FILE]
//	    idle with two binaries, interleaved (old, new, old, new, …): per
//	    round and medians, the ratio, and where the bytes go
//	wsbench fanout --bin PATH [--editors 1000] [--typers 10] [--rate 5] [--duration 20s]
//	    one document, some editors typing: delivery latency from the
//	    submission to its receipt at every other editor, and server CPU
//
// idle and fanout print one JSON line of results. Only loopback traffic; every
// phase is bounded in time. See run.sh.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wsbench run|idle|ab|fanout [flags] (-h for the flags)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "idle":
		err = cmdIdle(os.Args[2:])
	case "fanout":
		err = cmdFanout(os.Args[2:])
	case "run":
		err = cmdRun(os.Args[2:])
	case "ab":
		err = cmdAB(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want run, idle, ab or fanout", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wsbench:", err)
		os.Exit(1)
	}
}

// stopGrace is how long the server may take to stop after SIGTERM.
const stopGrace = 20 * time.Second

// startServer starts bin serve with the memory store on a free loopback
// port, extra added to its flags and env to its environment, and waits
// until it answers.
func startServer(bin, logPath string, extra, env []string) (*benchproc.Server, error) {
	port, err := benchproc.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := append([]string{"serve", "--store", "memory", "--addr", addr}, benchproc.UnlimitedConns(bin)...)
	args = append(args, extra...)
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	s, err := benchproc.StartServer(cmd, addr, logPath)
	if err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if done, err := s.Exited(); done {
			s.Stop(stopGrace)
			return nil, fmt.Errorf("server exited: %v (log: %s)", err, logPath)
		}
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.Stop(stopGrace)
			return nil, fmt.Errorf("server not answering on %s: %v", addr, err)
		}
	}
}

// cpuTicks returns the user+system CPU time of process pid in clock
// ticks (1/100 s).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	return u + st, errors.Join(err1, err2)
}

// dial opens a WebSocket to document doc and says hello at version 0
// (or null: a snapshot), with token in the hello unless it is empty. It
// returns the connection and the version the server answered.
func dial(ctx context.Context, addr, doc, token string, clientID int, snapshot bool) (*websocket.Conn, int64, error) {
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/docs/"+doc+"/ws", &websocket.DialOptions{
		Subprotocols: []string{"pmauthority.v1"},
	})
	if err != nil {
		return nil, 0, err
	}
	c.SetReadLimit(64 << 20)
	v := "0"
	if snapshot {
		v = "null"
	}
	hello := `{"type":"hello","version":` + v + `,"commentVersion":0,"clientID":` + strconv.Itoa(clientID)
	if token != "" {
		t, _ := json.Marshal(token)
		hello += `,"token":` + string(t)
	}
	hello += `}`
	if err := c.Write(ctx, websocket.MessageText, []byte(hello)); err != nil {
		c.CloseNow()
		return nil, 0, err
	}
	_, msg, err := c.Read(ctx)
	if err != nil {
		c.CloseNow()
		return nil, 0, err
	}
	var m struct {
		Type    string
		Version int64
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.Type != "welcome" && m.Type != "snapshot" {
		c.CloseNow()
		return nil, 0, fmt.Errorf("hello answered %.200s", msg)
	}
	return c, m.Version, nil
}

// dialAll opens n connections, at most par at a time; open(i) opens the
// i-th. It stops at the first error.
func dialAll(n, par int, open func(i int) error) error {
	sem := make(chan struct{}, par)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i := range n {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := open(i); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("connection %d: %w", i, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// printJSON prints v as one line.
func printJSON(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

// commonFlags are the flags of every command: the server to start and
// how its editors connect.
type commonFlags struct {
	bin, log string
	// token is sent in every editor's hello (empty: none).
	token string
	// serverArgs are added to the server's flags.
	serverArgs stringList
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.bin, "bin", "", "the pmauthority binary (required)")
	fs.StringVar(&c.log, "log", os.DevNull, "file for the server's log")
	fs.StringVar(&c.token, "token", "", "send `TOKEN` in every editor's hello (for a server started with --jwt-secret-file etc.)")
	fs.Var(&c.serverArgs, "server-arg", "add `ARG` to the server's flags (repeatable, e.g. --server-arg=--jwt-secret-file --server-arg=/tmp/secret)")
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, " ") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
