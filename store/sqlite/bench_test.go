package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pmauthority/pmauthority/store"
)

var benchStep = []store.Step{{
	JSON:     []byte(`{"stepType":"replace","from":12,"to":12,"slice":{"content":[{"type":"text","text":"a"}]}}`),
	ClientID: []byte(`123456789`),
}}

// BenchmarkAppend measures appends of one step each: ManyDocs from many
// goroutines to a document each (where group commit shares commits
// between them), OneDoc from goroutines that take turns on one document,
// as collab serializes a document's submissions (there every append waits
// for its own commit: ns/op is the latency of one committed append).
// commits/append is the number of transactions per append.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []Sync{SyncFull, SyncNormal} {
		b.Run(mode.String(), func(b *testing.B) {
			b.Run("ManyDocs", func(b *testing.B) {
				const parallelism = 16 // goroutines per GOMAXPROCS
				s, ids := benchStore(b, mode, parallelism*runtime.GOMAXPROCS(0))
				var next atomic.Int64
				b.SetParallelism(parallelism)
				commits := s.w.commits.Load()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					id := ids[next.Add(1)-1]
					for v := int64(0); pb.Next(); v++ {
						if err := s.Append(context.Background(), id, v, benchStep, nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
				benchReport(b, s.w.commits.Load()-commits)
			})
			b.Run("OneDoc", func(b *testing.B) {
				s, ids := benchStore(b, mode, 1)
				var (
					mu sync.Mutex
					v  int64
				)
				commits := s.w.commits.Load()
				b.ResetTimer()
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
				benchReport(b, s.w.commits.Load()-commits)
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

func benchReport(b *testing.B, commits int64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	b.ReportMetric(float64(commits)/float64(b.N), "commits/append")
}
