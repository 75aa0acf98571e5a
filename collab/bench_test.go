package collab_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

// BenchmarkSubmit measures submissions of one step each over SQLite (in
// a temporary folder, synced at every commit) from concurrent submitters:
// ManyDocs with a document each, whose appends share commits, and OneDoc
// all on one document, where each submitter answered ErrConflict catches
// up with Events and submits again, as the ProseMirror collab client does.
// ns/op and cpu-ns/op are per accepted submission; conflicts/submit counts
// the ErrConflict answers, p99-ms is the 99th percentile of one Submit
// call. Run it with -cpu 1,2.
func BenchmarkSubmit(b *testing.B) {
	for _, bc := range []struct {
		name       string
		submitters int
		oneDoc     bool
	}{
		{"ManyDocs/100", 100, false},
		{"OneDoc/2", 2, true},
		{"OneDoc/8", 8, true},
	} {
		b.Run(bc.name, func(b *testing.B) { benchSubmit(b, bc.submitters, bc.oneDoc) })
	}
}

func benchSubmit(b *testing.B, submitters int, oneDoc bool) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	a := newAuthority(b, st, collab.Config{})
	ids := make([]string, submitters)
	for i := range ids {
		ids[i] = "doc0"
		if !oneDoc {
			ids[i] = fmt.Sprint("doc", i)
		}
		mustGet(b, a, ids[i])
	}
	var (
		left      atomic.Int64 // submissions still to be accepted
		mu        sync.Mutex
		conflicts int
		latencies []time.Duration
		wg        sync.WaitGroup
	)
	left.Store(int64(b.N))
	b.ResetTimer()
	cpu := cpuTime(b)
	for i, id := range ids {
		wg.Go(func() {
			var (
				version int64
				c       int
				lat     []time.Duration
			)
			sub := collab.Submission{Steps: steps(insert(1, "a")), ClientID: collab.ClientID(fmt.Sprint(i))}
			for left.Add(-1) >= 0 {
				for {
					sub.Version = version
					t0 := time.Now()
					r, err := a.Submit(ctx, id, "", sub)
					lat = append(lat, time.Since(t0))
					if err == nil {
						version = r.Version
						break
					}
					if !errors.Is(err, collab.ErrConflict) {
						b.Error(err)
						return
					}
					c++
					ev, err := nextEvents(ctx, a, id, "", version, 0)
					if err != nil {
						b.Error(err)
						return
					}
					version = ev.Version
				}
			}
			mu.Lock()
			conflicts += c
			latencies = append(latencies, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	if len(latencies) > 0 {
		slices.Sort(latencies)
		b.ReportMetric(float64(conflicts)/float64(len(latencies)), "conflicts/submit")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// BenchmarkDocMemory measures the Go heap that a loaded document takes:
// each operation creates a document with one submission of 20 steps that
// insert 100 letters each (the collab bench's memory scenario). heap-B/doc
// is the live heap after a collection, per document.
func BenchmarkDocMemory(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	a := newAuthority(b, st, collab.Config{})
	sub := memorySubmission()
	before := liveHeap()
	b.ResetTimer()
	for i := range b.N {
		if _, err := a.Submit(ctx, fmt.Sprint("doc", i), "", sub); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(liveHeap()-before)/float64(b.N), "heap-B/doc")
	runtime.KeepAlive(a)
}

// BenchmarkReloadedDocMemory measures the Go heap that a document loaded
// from the store takes (after a restart): documents made as in
// BenchmarkDocMemory by one authority are loaded by a second one over the
// same store; heap-B/doc is the live heap after a collection, per
// document.
func BenchmarkReloadedDocMemory(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Sync: sqlite.SyncNormal})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	maker, err := collab.New(collab.Config{Store: st, Schemas: lookupSchema, AutoCreate: true, SnapshotEvery: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	sub := memorySubmission()
	for i := range b.N {
		if _, err := maker.Submit(ctx, fmt.Sprint("doc", i), "", sub); err != nil {
			b.Fatal(err)
		}
	}
	maker.Close()
	a := newAuthority(b, st, collab.Config{})
	before := liveHeap()
	b.ResetTimer()
	for i := range b.N {
		// Events loads it without caching its JSON (which Get does).
		if _, err := a.Events(ctx, fmt.Sprint("doc", i), "", 20, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(liveHeap()-before)/float64(b.N), "heap-B/doc")
	runtime.KeepAlive(a)
}

// memorySubmission is the submission that makes a document in the memory
// benchmarks: 20 steps inserting 100 letters each.
func memorySubmission() collab.Submission {
	sub := collab.Submission{Steps: make([][]byte, 20), ClientID: collab.ClientID("1")}
	for i := range sub.Steps {
		sub.Steps[i] = insert(1, strings.Repeat(string(rune('a'+i)), 100))
	}
	return sub
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// cpuTime returns the CPU time (user + system) the process has used, all
// threads together: on a loaded machine it tracks the work done better
// than the wall-clock time, which includes waiting for a core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKeystrokeComments measures one keystroke (a submission of one
// step inserting a letter in front of every comment, so that every
// comment moves) on a document over SQLite synced at every commit, with
// no comments and with 10,000 comments of 16 bytes each (0.98 MB by
// Config.MaxCommentBytes, under its default), in a paragraph of 20,002
// letters either way. The ratio of the
// two is what the comments cost a keystroke; cpu-ns/op (see cpuTime) is
// the steadier figure on a loaded machine.
func BenchmarkKeystrokeComments(b *testing.B) {
	for _, n := range []int{0, 10_000} {
		b.Run(fmt.Sprint("comments=", n), func(b *testing.B) { benchKeystrokeComments(b, n) })
	}
}

func benchKeystrokeComments(b *testing.B, comments int) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{Sync: sqlite.SyncFull})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	a := newAuthority(b, st, collab.Config{})
	r, err := a.Submit(ctx, "d", "", collab.Submission{Steps: steps(insert(1, strings.Repeat("x", 2*10_000+2))), ClientID: collab.ClientID("1")})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("c", 16)
	for i := 0; i < comments; {
		sub := collab.Submission{Version: r.Version}
		for ; i < comments && len(sub.Comments) < 1000; i++ {
			sub.Comments = append(sub.Comments, collab.CommentEvent{Type: collab.CommentCreate, ID: int64(i + 1), From: 2 + 2*i, To: 3 + 2*i, Text: text})
		}
		if r, err = a.Submit(ctx, "d", "", sub); err != nil {
			b.Fatal(err)
		}
	}
	sub := collab.Submission{Steps: steps(insert(1, "a")), ClientID: collab.ClientID("1")}
	b.ResetTimer()
	cpu := cpuTime(b)
	for range b.N {
		sub.Version = r.Version
		if r, err = a.Submit(ctx, "d", "", sub); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
}
