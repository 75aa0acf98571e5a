package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/store"
)

var benchStep = []store.Step{{
	JSON:     []byte(`{"stepType":"replace","from":12,"to":12,"slice":{"content":[{"type":"text","text":"a"}]}}`),
	ClientID: []byte(`123456789`),
}}

// BenchmarkAppend measures appends of one step each: ManyDocs from 100
// goroutines to a document each (where group commit shares commits
// between them), OneDoc from goroutines that take turns on one document,
// as collab serializes a document's submissions (there every append waits
// for its own commit: ns/op is the latency of one committed append).
// commits/append is the number of transactions per append: run it with
// -cpu 1,2 to see that batching does not depend on a second core.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []Sync{SyncFull, SyncNormal} {
		b.Run(mode.String(), func(b *testing.B) {
			b.Run("ManyDocs", func(b *testing.B) {
				const appenders = 100
				s, ids := benchStore(b, mode, appenders)
				var left atomic.Int64
				left.Store(int64(b.N))
				var wg sync.WaitGroup
				commits := s.w.commits.Load()
				b.ResetTimer()
				cpu := cpuTime(b)
				for _, id := range ids {
					wg.Go(func() {
						for v := int64(0); left.Add(-1) >= 0; v++ {
							if err := s.Append(context.Background(), id, v, benchStep, nil); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				benchReport(b, s.w.commits.Load()-commits, cpu)
			})
			b.Run("OneDoc", func(b *testing.B) {
				s, ids := benchStore(b, mode, 1)
				var (
					mu sync.Mutex
					v  int64
				)
				commits := s.w.commits.Load()
				b.ResetTimer()
				cpu := cpuTime(b)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						mu.Lock()
						err := s.Append(context.Background(), ids[0], v, benchStep, nil)
						v++
						mu.Unlock()
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
				benchReport(b, s.w.commits.Load()-commits, cpu)
			})
		})
	}
}

// benchStore opens a store with n documents.
func benchStore(b *testing.B, mode Sync, n int) (*Store, []string) {
	s := open(b, filepath.Join(b.TempDir(), "bench.db"), Options{Sync: mode})
	b.Cleanup(func() { closeStore(b, s) })
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint("doc", i)
		if err := s.Create(context.Background(), ids[i], "basic", []byte(`{"type":"doc"}`), nil); err != nil {
			b.Fatal(err)
		}
	}
	return s, ids
}

// benchReport reports the rate of appends, the commits they took and the
// CPU time they used since cpu (cpuTime's).
func benchReport(b *testing.B, commits int64, cpu time.Duration) {
	b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	b.ReportMetric(float64(commits)/float64(b.N), "commits/append")
}

// BenchmarkCommit measures the writer's own work per operation: batches of
// appends (to a document each, of Steps steps) committed directly, without
// the queue and the goroutines around it, with the housekeeping between
// batches (folds, checkpoints), with SyncNormal so that fsyncs do not
// drown it. ns/op is per append.
func BenchmarkCommit(b *testing.B) {
	for _, bc := range []struct{ batch, steps int }{{1, 1}, {32, 1}, {32, 3}} {
		b.Run(fmt.Sprintf("Batch%d/Steps%d", bc.batch, bc.steps), func(b *testing.B) {
			s, ids := benchStore(b, SyncNormal, bc.batch)
			steps := slices.Repeat(benchStep, bc.steps)
			batch := make([]*op, bc.batch)
			errs := make([]error, bc.batch)
			b.ResetTimer()
			cpu := cpuTime(b)
			for v := int64(0); v < int64(b.N); v += int64(bc.batch) {
				for i := range batch {
					batch[i] = &op{ctx: context.Background(), run: s.appendOp(ids[i], v/int64(bc.batch)*int64(bc.steps), steps, -1, nil)}
				}
				inWriter(s, func(w *writer) {
					w.commit(batch, errs)
					w.maintain()
				})
				for i, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
					errs[i] = nil
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
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
