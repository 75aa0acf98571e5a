package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
)

// idleResult is what `wsbench idle` measures.
type idleResult struct {
	Conns, Docs, Warm int
	// RSSBefore is the server's RSS with the Warm connections open,
	// RSSAfter with Conns more; PerConn is the growth per connection.
	RSSBefore, RSSAfter int64
	PerConn             float64
	DialSeconds         float64
	// Before and After are the server's runtime stats after each RSS
	// reading (with idleOptions.runtime).
	Before, After *runtimeStats `json:",omitempty"`
}

// idleOptions describe an idle measure.
type idleOptions struct {
	commonFlags
	conns, docs, warm int
	settle            time.Duration
	// runtime: also read the server's runtime stats (readRuntime) on a
	// --metrics-addr of its own, after each RSS reading.
	runtime bool
	// profileRate, when not 0, is the server's runtime.MemProfileRate
	// (GODEBUG=memprofilerate): the heap profile then samples one
	// allocation per profileRate bytes instead of 512 KiB, for a finer
	// runtimeStats.BySite.
	profileRate int
}

func cmdIdle(args []string) error {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	var cf commonFlags
	cf.register(fs)
	conns := fs.Int("conns", 5000, "idle editors to connect")
	docs := fs.Int("docs", 100, "documents they are spread over")
	warm := fs.Int("warm", 500, "editors connected before the first RSS reading, so that what is paid once is not counted")
	settle := fs.Duration("settle", 5*time.Second, "wait before each RSS reading")
	rt := fs.Bool("runtime", false, "also read the server's goroutines, stacks and heap (its --metrics-addr profiles) after each RSS reading")
	rate := fs.Int("profile-rate", 0, "with --runtime, sample one heap allocation per `BYTES` in the server (GODEBUG=memprofilerate; 0: Go's default, 512 KiB)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cf.bin == "" || *conns < 1 || *docs < 1 {
		return fmt.Errorf("need --bin, --conns and --docs")
	}
	res, err := runIdle(idleOptions{commonFlags: cf, conns: *conns, docs: *docs, warm: *warm, settle: *settle, runtime: *rt, profileRate: *rate})
	if err != nil {
		return err
	}
	printJSON(res)
	return nil
}

// runIdle measures what opt describes, on a server of its own.
func runIdle(opt idleOptions) (*idleResult, error) {
	conns, docs, warm, settle := &opt.conns, &opt.docs, &opt.warm, &opt.settle
	extra, env := opt.serverArgs, []string(nil)
	var metricsAddr string
	if opt.runtime {
		port, err := benchproc.FreePort()
		if err != nil {
			return nil, err
		}
		metricsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		extra = append(slices.Clip(extra), "--metrics-addr", metricsAddr)
		if opt.profileRate > 0 {
			env = []string{"GODEBUG=memprofilerate=" + strconv.Itoa(opt.profileRate)}
		}
	}
	s, err := startServer(opt.bin, opt.log, extra, env)
	if err != nil {
		return nil, err
	}
	defer s.Stop(stopGrace)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var open []*websocket.Conn
	defer func() {
		for _, c := range open {
			c.CloseNow()
		}
	}()
	var readers sync.WaitGroup
	defer readers.Wait()
	defer cancel()
	connect := func(base, n int) error {
		return dialAll(n, 32, func(i int) error {
			dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
			defer dcancel()
			k := base + i
			c, _, err := dial(dctx, s.Addr, "idle-"+strconv.Itoa(k%*docs), opt.token, k+1, false)
			if err != nil {
				return err
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			// Read, so that pings are answered, until the end.
			readers.Add(1)
			go func() {
				defer readers.Done()
				for {
					if _, _, err := c.Read(ctx); err != nil {
						return
					}
				}
			}()
			return nil
		})
	}
	res := &idleResult{Conns: *conns, Docs: *docs, Warm: *warm}
	if err := connect(0, *warm); err != nil {
		return nil, err
	}
	time.Sleep(*settle)
	if res.RSSBefore, err = benchproc.ProcStatus(s.Pid(), "VmRSS"); err != nil {
		return nil, err
	}
	if opt.runtime {
		if res.Before, err = readRuntime(metricsAddr); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	if err := connect(*warm, *conns); err != nil {
		return nil, err
	}
	res.DialSeconds = time.Since(t0).Seconds()
	time.Sleep(*settle)
	if res.RSSAfter, err = benchproc.ProcStatus(s.Pid(), "VmRSS"); err != nil {
		return nil, err
	}
	if opt.runtime {
		if res.After, err = readRuntime(metricsAddr); err != nil {
			return nil, err
		}
	}
	res.PerConn = float64(res.RSSAfter-res.RSSBefore) / float64(*conns)
	return res, nil
}
