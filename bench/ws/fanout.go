package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/pmauthority/pmauthority/bench/internal/benchproc"
	"github.com/pmauthority/pmauthority/internal/readbuf"
)

// fanoutResult is what `wsbench fanout` measures.
type fanoutResult struct {
	Editors, Typers int
	Rate            float64 // steps per second per typer
	Seconds         float64 // of the measured window
	// Steps is the number of steps sent in the window; Deliveries the
	// receipts of those steps at the other editors, Expected how many
	// there should be.
	Steps, Deliveries, Expected int
	// Latency from the (accepted) submission to the receipt, in ms.
	P50, P90, P99, Max float64
	// Nodes is the number of servers the editors were spread over; with
	// more than one, Cross* are the receipts at editors connected to
	// another server than the step's typer, and their latency in ms.
	Nodes                                  int
	CrossDeliveries                        int     `json:",omitempty"`
	CrossP50, CrossP90, CrossP99, CrossMax float64 `json:",omitempty"`
	// CPU is the server's CPU use in the window, in cores (1 = one core
	// busy all the time).
	CPU      float64
	Errors   int
	LastErr  string `json:",omitempty"`
	Conflict int    // conflicts answered to the typers
}

// fanout is the shared state of a fanout run.
type fanout struct {
	typers  int
	perTyp  int
	nodes   int            // servers the editors are spread over
	sentAt  []atomic.Int64 // step id → unix ns of its last submission
	from    atomic.Int64   // window start, unix ns (0: not started)
	to      atomic.Int64   // window end
	errs    atomic.Int64
	lastErr atomic.Value
	conf    atomic.Int64
}

func (f *fanout) fail(err error) {
	f.errs.Add(1)
	f.lastErr.Store(err.Error())
}

// inWindow reports whether a step sent at t is measured.
func (f *fanout) inWindow(t int64) bool {
	from, to := f.from.Load(), f.to.Load()
	return from != 0 && t >= from && (to == 0 || t < to)
}

func cmdFanout(args []string) error {
	fs := flag.NewFlagSet("fanout", flag.ContinueOnError)
	var cf commonFlags
	cf.register(fs)
	editors := fs.Int("editors", 1000, "editors connected to the document")
	typers := fs.Int("typers", 10, "editors that type (the first ones)")
	rate := fs.Float64("rate", 5, "steps per second per typer")
	warmup := fs.Duration("warmup", 3*time.Second, "typing before the measured window")
	duration := fs.Duration("duration", 20*time.Second, "measured window")
	addrList := fs.String("addrs", "", "`host:port,...` of running servers of one cluster (one database) instead of starting one with --bin: editor i connects to the i-th modulo their number")
	pidList := fs.String("pids", "", "with --addrs: the servers' process `ids`, for their CPU (added up)")
	doc := fs.String("doc", "fanout", "the document's `id`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	addrs := benchproc.SplitList(*addrList)
	for _, a := range addrs {
		if err := benchproc.CheckLoopback(a); err != nil {
			return err
		}
	}
	var pids []int
	for _, p := range benchproc.SplitList(*pidList) {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return fmt.Errorf("--pids: bad process id %q", p)
		}
		pids = append(pids, n)
	}
	if cf.bin == "" && len(addrs) == 0 || *typers < 1 || *editors <= *typers || *rate <= 0 {
		return fmt.Errorf("need --bin or --addrs, and more editors than typers (at least one)")
	}
	res, err := runFanout(fanoutOptions{commonFlags: cf, editors: *editors, typers: *typers,
		rate: *rate, warmup: *warmup, duration: *duration, addrs: addrs, pids: pids, doc: *doc})
	if err != nil {
		return err
	}
	printJSON(res)
	return nil
}

// fanoutOptions describe a fanout measure.
type fanoutOptions struct {
	commonFlags
	editors, typers  int
	rate             float64
	warmup, duration time.Duration
	// addrs are running servers to use instead of starting one, pids
	// their process ids; doc is the document ("fanout" when empty).
	addrs []string
	pids  []int
	doc   string
}

// runFanout measures what opt describes, on a server of its own.
func runFanout(opt fanoutOptions) (*fanoutResult, error) {
	editors, typers, rate, warmup, duration := &opt.editors, &opt.typers, &opt.rate, &opt.warmup, &opt.duration
	addrs, pids, doc := opt.addrs, opt.pids, opt.doc
	if doc == "" {
		doc = "fanout"
	}
	if len(addrs) == 0 {
		s, err := startServer(opt.bin, opt.log, opt.serverArgs, nil)
		if err != nil {
			return nil, err
		}
		defer s.Stop(stopGrace)
		addrs, pids = []string{s.Addr}, []int{s.Pid()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *warmup+*duration+3*time.Minute)
	defer cancel()

	total := *warmup + *duration + 5*time.Second
	f := &fanout{typers: *typers, perTyp: int(*rate*total.Seconds()) + 10, nodes: len(addrs)}
	f.sentAt = make([]atomic.Int64, *typers*f.perTyp)
	eds := make([]*editor, *editors)
	open := func(i int) error {
		dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
		defer dcancel()
		node := i % len(addrs)
		c, v, err := dial(dctx, addrs[node], doc, opt.token, i+1, false)
		if err != nil {
			return err
		}
		eds[i] = &editor{f: f, c: c, typer: -1, version: v, node: node}
		if i < *typers {
			eds[i].typer = i
		}
		return nil
	}
	// One editor per server first, one after the other, so that the
	// document is made once and then loaded by each server.
	first := min(len(addrs), *editors)
	err := dialAll(first, 1, open)
	if err == nil {
		err = dialAll(*editors-first, 32, func(i int) error { return open(first + i) })
	}
	if err != nil {
		for _, e := range eds {
			if e != nil {
				e.c.CloseNow()
			}
		}
		return nil, err
	}
	var wg sync.WaitGroup
	for _, e := range eds {
		wg.Add(1)
		go func() { defer wg.Done(); e.read(ctx) }()
	}
	stopTyping := make(chan struct{})
	var typing sync.WaitGroup
	for _, e := range eds[:*typers] {
		typing.Add(1)
		go func() { defer typing.Done(); e.type_(ctx, *rate, stopTyping) }()
	}
	time.Sleep(*warmup)
	t0, err := cpuTicksAll(pids)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	f.from.Store(start.UnixNano())
	time.Sleep(*duration)
	end := time.Now()
	f.to.Store(end.UnixNano())
	t1, err := cpuTicksAll(pids)
	if err != nil {
		return nil, err
	}
	close(stopTyping)
	typing.Wait()
	// Let the last steps arrive, then stop reading.
	time.Sleep(2 * time.Second)
	for _, e := range eds {
		e.c.Close(websocket.StatusNormalClosure, "")
	}
	cancel()
	wg.Wait()

	res := &fanoutResult{Editors: *editors, Typers: *typers, Rate: *rate, Seconds: end.Sub(start).Seconds(), Nodes: len(addrs)}
	res.CPU = float64(t1-t0) / 100 / res.Seconds
	for i := range f.sentAt {
		if f.inWindowFinal(&f.sentAt[i]) {
			res.Steps++
		}
	}
	var lat, cross []int32
	for _, e := range eds {
		lat = append(lat, e.lat...)
		cross = append(cross, e.cross...)
	}
	res.Deliveries = len(lat)
	res.Expected = res.Steps * (*editors - 1)
	res.P50, res.P90, res.P99, res.Max = quantilesMS(lat)
	if len(addrs) > 1 {
		res.CrossDeliveries = len(cross)
		res.CrossP50, res.CrossP90, res.CrossP99, res.CrossMax = quantilesMS(cross)
	}
	res.Errors = int(f.errs.Load())
	if e, ok := f.lastErr.Load().(string); ok {
		res.LastErr = e
	}
	res.Conflict = int(f.conf.Load())
	return res, nil
}

// quantilesMS sorts lat (µs) and returns its p50, p90, p99 and maximum
// in ms.
func quantilesMS(lat []int32) (p50, p90, p99, mx float64) {
	if len(lat) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1000
	}
	return q(0.50), q(0.90), q(0.99), float64(lat[len(lat)-1]) / 1000
}

// cpuTicksAll returns the CPU time of the processes pids added up, in
// clock ticks.
func cpuTicksAll(pids []int) (int64, error) {
	var sum int64
	for _, p := range pids {
		t, err := cpuTicks(p)
		if err != nil {
			return 0, err
		}
		sum += t
	}
	return sum, nil
}

// inWindowFinal reports whether the step whose send time is at p was
// sent in the window (and accepted: only accepted steps are counted by
// the receivers, which is checked against this count).
func (f *fanout) inWindowFinal(p *atomic.Int64) bool {
	t := p.Load()
	return t != 0 && f.inWindow(t)
}

// editor is one connection: it reads the pushes, and a typer also
// submits steps the way prosemirror-collab does (one submission in
// flight; on a conflict, send again once the pushed steps are in).
type editor struct {
	f       *fanout
	c       *websocket.Conn
	typer   int // -1 for readers
	node    int // the server it is connected to
	lat     []int32
	cross   []int32 // of lat, the steps typed on another server
	buf     []byte
	mu      sync.Mutex
	version int64
	seq     int   // next step of this typer
	unsent  []int // step ids typed, not sent
	flight  []int // sent, not answered
	msgID   int
}

var textKey = []byte(`"text":"k`)

// read reads messages until the connection ends.
func (e *editor) read(ctx context.Context) {
	for {
		_, r, err := e.c.Reader(ctx)
		if err != nil {
			return
		}
		e.buf, err = readbuf.Append(e.buf[:0], r)
		if err != nil {
			return
		}
		now := time.Now().UnixNano()
		msg := e.buf
		switch {
		case bytes.HasPrefix(msg, []byte(`{"type":"steps"`)):
			for rest := msg; ; {
				i := bytes.Index(rest, textKey)
				if i < 0 {
					break
				}
				rest = rest[i+len(textKey):]
				j := bytes.IndexByte(rest, '"')
				id, err := strconv.Atoi(string(rest[:j]))
				if err != nil || id < 0 || id >= len(e.f.sentAt) {
					e.f.fail(fmt.Errorf("bad step text in %.100s", msg))
					continue
				}
				if e.typer >= 0 && id/e.f.perTyp == e.typer {
					continue // its own
				}
				if sent := e.f.sentAt[id].Load(); e.f.inWindow(sent) {
					l := int32((now - sent) / 1000)
					e.lat = append(e.lat, l)
					// Typer t is editor t, on server t modulo their number.
					if e.f.nodes > 1 && (id/e.f.perTyp)%e.f.nodes != e.node {
						e.cross = append(e.cross, l)
					}
				}
			}
			if e.typer >= 0 {
				e.mu.Lock()
				e.version = versionOf(msg)
				e.mu.Unlock()
			}
		case bytes.HasPrefix(msg, []byte(`{"type":"ack"`)):
			e.mu.Lock()
			e.flight = e.flight[:0]
			if len(e.unsent) > 0 {
				e.sendLocked(ctx)
			}
			e.mu.Unlock()
		case bytes.HasPrefix(msg, []byte(`{"type":"conflict"`)):
			e.f.conf.Add(1)
			e.mu.Lock()
			// The steps it missed came first: send again on top of them.
			e.unsent = append(e.flight, e.unsent...)
			e.flight = nil
			e.sendLocked(ctx)
			e.mu.Unlock()
		case bytes.HasPrefix(msg, []byte(`{"type":"presence"`)), bytes.HasPrefix(msg, []byte(`{"type":"pong"`)):
		default:
			e.f.fail(fmt.Errorf("unexpected message %.200s", msg))
		}
	}
}

// type_ types rate steps per second until stop.
func (e *editor) type_(ctx context.Context, rate float64, stop <-chan struct{}) {
	every := time.Duration(float64(time.Second) / rate)
	// Spread the typers over the interval.
	time.Sleep(time.Duration(e.typer) * every / time.Duration(e.f.typers))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.mu.Lock()
		if e.seq < e.f.perTyp {
			e.unsent = append(e.unsent, e.typer*e.f.perTyp+e.seq)
			e.seq++
		}
		if len(e.flight) == 0 {
			e.sendLocked(ctx)
		}
		e.mu.Unlock()
	}
}

// sendLocked submits the unsent steps at the current version, each
// inserting "k<id>" at position 1. It is called with mu held.
func (e *editor) sendLocked(ctx context.Context) {
	if len(e.unsent) == 0 {
		return
	}
	e.flight, e.unsent = e.unsent, nil
	e.msgID++
	buf := []byte(`{"type":"steps","id":`)
	buf = strconv.AppendInt(buf, int64(e.msgID), 10)
	buf = append(buf, `,"version":`...)
	buf = strconv.AppendInt(buf, e.version, 10)
	buf = append(buf, `,"clientID":`...)
	buf = strconv.AppendInt(buf, int64(e.typer+1), 10)
	buf = append(buf, `,"steps":[`...)
	for i, id := range e.flight {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"k`...)
		buf = strconv.AppendInt(buf, int64(id), 10)
		buf = append(buf, `"}]}}`...)
	}
	buf = append(buf, "]}"...)
	now := time.Now().UnixNano()
	for _, id := range e.flight {
		e.f.sentAt[id].Store(now)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.c.Write(wctx, websocket.MessageText, buf); err != nil {
		e.f.fail(err)
	}
}

// versionOf returns the "version" of a steps message.
func versionOf(msg []byte) int64 {
	i := bytes.Index(msg, []byte(`"version":`))
	if i < 0 {
		return 0
	}
	rest := msg[i+len(`"version":`):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, _ := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v
}
