package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// fanoutOptions describes a load of many long-polling readers of one
// document and one writer submitting at a steady rate.
type fanoutOptions struct {
	Addr string
	// Token, when not empty, is sent as a bearer token with every request.
	Token   string
	Doc     string
	Readers int
	// Rate is the writer's submissions per second (one step each).
	Rate    float64
	MaxText int64
	Seed    uint64
	// Warmup is how long the writer submits before it is measured,
	// Duration how long it is measured; Grace how long the readers may
	// take, after the end, to receive the last measured submission.
	Warmup, Duration, Grace time.Duration
	PID                     int
}

// fanoutResult is what a fanout load measured.
type fanoutResult struct {
	Readers  int     `json:"readers"`
	Rate     float64 `json:"rate"`
	Duration float64 `json:"duration"`
	// Submits counts the writer's POSTs sent in the measured time, all of
	// which must be accepted.
	Submits int `json:"submits"`
	// Deliveries counts a reader receiving a measured submission's step;
	// Expected is Submits × Readers, Missed the difference.
	Deliveries int `json:"deliveries"`
	Expected   int `json:"expected"`
	Missed     int `json:"missed"`
	// Polls counts the readers' long-poll answers in the measured time,
	// Empty the {} among them (poll timeouts).
	Polls int `json:"polls"`
	Empty int `json:"empty"`
	// Delivery is the time from the writer sending a POST to a reader
	// receiving its step; Submit the time of the writer's POSTs.
	Delivery latencies `json:"delivery"`
	Submit   latencies `json:"submit"`
	CPU      cpuUse    `json:"cpu"`
	errorCount
}

// runFanout runs the load opt describes: the readers connect and wait
// first, then the writer submits every 1/Rate seconds.
func runFanout(opt fanoutOptions) (*fanoutResult, error) {
	if opt.Readers < 1 || opt.Rate <= 0 || opt.Duration <= 0 {
		return nil, fmt.Errorf("need readers, a rate and a duration")
	}
	wc, err := dialConn(opt.Addr, opt.Token)
	if err != nil {
		return nil, err
	}
	defer wc.Close()
	st, err := getDoc(wc, opt.Doc)
	if err != nil {
		return nil, err
	}
	version := *st.Version
	total := opt.Warmup + opt.Duration
	// sentAt[v] is when the POST that made version v was sent, in
	// nanoseconds since start (0: not sent).
	sentAt := make([]atomic.Int64, version+int64(opt.Rate*total.Seconds())+64)

	readers := make([]*reader, opt.Readers)
	for i := range readers {
		c, err := dialConn(opt.Addr, opt.Token)
		if err != nil {
			for _, r := range readers[:i] {
				r.c.Close()
			}
			return nil, err
		}
		readers[i] = &reader{c: c, version: version, comment: *st.CommentVersion}
	}
	// Let every reader's first poll reach the server before the writer
	// starts (a reader that is late gets its first steps at once anyway).
	start := time.Now()
	w := window{from: start.Add(opt.Warmup), end: start.Add(total)}
	stop := w.end.Add(opt.Grace)
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Go(func() { r.run(opt.Doc, start, w, stop, sentAt) })
	}

	t := newTypist(opt.Seed, opt.MaxText)
	var submit []time.Duration
	var werr errorCount
	submits := 0
	wc.nc.SetDeadline(stop)
	path := "/docs/" + opt.Doc + "/events"
	next := start.Add(time.Second / 4)
	var meter *cpuMeter
	for next.Before(w.end) {
		time.Sleep(time.Until(next))
		t0 := time.Now()
		if meter == nil && !t0.Before(w.from) {
			meter = startCPU(0, []int{opt.PID})
		}
		body := t.submission(version, 1)
		if version+1 >= int64(len(sentAt)) {
			werr.add(fmt.Errorf("writer: more versions than planned"))
			break
		}
		sentAt[version+1].Store(int64(t0.Sub(start)))
		status, answer, err := wc.do("POST", path, body)
		t1 := time.Now()
		in := w.has(t0)
		if in {
			submits++
			submit = append(submit, t1.Sub(t0))
		}
		if err == nil && status != 200 {
			err = fmt.Errorf("writer: status %d: %.200s", status, answer)
		}
		if err != nil {
			werr.add(err)
			break
		}
		version++
		next = next.Add(time.Duration(float64(time.Second) / opt.Rate))
	}
	var cpu cpuUse
	if meter != nil {
		cpu = meter.stop()
	}
	time.Sleep(time.Until(stop))
	for _, r := range readers {
		r.c.nc.SetDeadline(time.Now()) // ends the waiting polls
	}
	wg.Wait()

	res := &fanoutResult{Readers: opt.Readers, Rate: opt.Rate, Duration: opt.Duration.Seconds(),
		Submits: submits, Expected: submits * opt.Readers, Submit: summarize(submit), CPU: cpu}
	res.merge(werr)
	var delivery []time.Duration
	for _, r := range readers {
		r.c.Close()
		delivery = append(delivery, r.delivery...)
		res.Polls += r.polls
		res.Empty += r.empty
		res.merge(r.errorCount)
	}
	res.Deliveries = len(delivery)
	res.Missed = res.Expected - res.Deliveries
	res.Delivery = summarize(delivery)
	return res, nil
}

// reader is one long-polling reader.
type reader struct {
	c                *conn
	version, comment int64
	delivery         []time.Duration
	polls, empty     int
	errorCount
}

// run polls until stop, re-polling as soon as an answer is in, and
// records when each measured submission's step arrives.
func (r *reader) run(doc string, start time.Time, w window, stop time.Time, sentAt []atomic.Int64) {
	r.c.nc.SetDeadline(stop)
	for time.Now().Before(stop) {
		status, body, err := r.c.do("GET", eventsPath(doc, r.version, r.comment), nil)
		now := time.Now()
		if err != nil {
			if now.Before(stop) {
				r.add(err)
			}
			return
		}
		in := w.has(now)
		if in {
			r.polls++
		}
		var a eventsAnswer
		if status != 200 {
			err = fmt.Errorf("GET events: status %d: %.200s", status, body)
		} else if err = json.Unmarshal(body, &a); err == nil && a.Version == nil {
			if in {
				r.empty++
			}
			continue
		} else if err == nil {
			err = a.check(r.version)
		}
		if err != nil {
			r.add(err)
			return
		}
		got := now.Sub(start)
		for v := r.version + 1; v <= *a.Version && v < int64(len(sentAt)); v++ {
			if sent := time.Duration(sentAt[v].Load()); sent > 0 && w.has(start.Add(sent)) {
				r.delivery = append(r.delivery, got-sent)
			}
		}
		r.version, r.comment = *a.Version, *a.CommentVersion
	}
}
