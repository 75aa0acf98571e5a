package postgres

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store"
)

// benchURLEnv names the variable that points the benchmarks at a
// PostgreSQL of one's choosing (bench/cluster.sh starts one with fsync
// on) instead of pgtest's, which runs with fsync off: a postgres:// URL
// of a database on a cluster where the user may create databases. Each
// benchmark gets a new database there, dropped after it.
const benchURLEnv = "PMA_BENCH_POSTGRES_URL"

var benchDBs atomic.Int64

// benchURL returns the URL of a new, empty database for a benchmark.
func benchURL(b *testing.B) string {
	b.Helper()
	base := os.Getenv(benchURLEnv)
	if base == "" {
		return pgtest.URL(b)
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "postgres" && u.Scheme != "postgresql" {
		b.Fatalf("%s: want a postgres:// URL (%v)", benchURLEnv, err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		b.Fatalf("%s: %v", benchURLEnv, err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("pmabench_%d_%d", os.Getpid(), benchDBs.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		b.Fatalf("%s: %v", benchURLEnv, err)
	}
	b.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			b.Errorf("dropping %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			b.Errorf("dropping %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// notifySQL is the part of appendSQL that sends the notice; silentSQL
// is appendSQL without it, for BenchmarkNotifyLock only (a Store always
// notifies).
const notifySQL = "(SELECT count(*) FROM (SELECT pg_notify($12, $13) FROM upd) AS n)"

var silentSQL = strings.Replace(appendSQL, notifySQL, "(SELECT count(*) FROM upd WHERE length($12::text) + length($13::text) > 0)", 1)

// BenchmarkNotifyLock measures what NOTIFY costs the Appends of many
// documents at once. PostgreSQL serialises the commits of transactions
// that NOTIFY (PreCommit_Notify takes a lock on "database 0", one for
// the whole server and all its databases, and holds it until the commit
// is over, WAL flush included), so notifying batches of
// several Stores (nodes) cannot share a flush, and with fsync on each
// waits for the one before. Each sub-benchmark runs 100 documents, each
// with a goroutine appending one step at a time, spread over 1 or 3
// Stores on one database (each listening, as nodes do), with the Store's
// NOTIFY and every Store listening (notify=on), with it and nobody
// listening (unheard: the lock and the queue without the deliveries),
// and without it (off, silentSQL). Reported: appends/s, the p50 and p99
// of an Append, commits (transactions) per Append, and NOTIFYs received
// per commit by one listener.
func BenchmarkNotifyLock(b *testing.B) {
	if silentSQL == appendSQL {
		b.Fatal("appendSQL no longer contains notifySQL: update the benchmark")
	}
	for _, nodes := range []int{1, 3} {
		for _, mode := range []string{"on", "unheard", "off"} {
			b.Run(fmt.Sprintf("nodes=%d/notify=%s", nodes, mode), func(b *testing.B) {
				benchNotifyLock(b, nodes, 100, mode, 0)
			})
		}
	}
}

// BenchmarkInFlight is BenchmarkNotifyLock with NOTIFY (as the Store
// always does) and at most 1, 2 (maxInFlight) or 5 batches in flight per
// Store (5 was the bound of serve's default pool of 10 before
// maxInFlight).
func BenchmarkInFlight(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		for _, n := range []int{1, 2, 5} {
			b.Run(fmt.Sprintf("nodes=%d/inflight=%d", nodes, n), func(b *testing.B) {
				benchNotifyLock(b, nodes, 100, "on", n)
			})
		}
	}
}

// benchNotifyLock runs docs documents over nodes Stores: mode on (the
// Store's NOTIFY, every Store listening), unheard (NOTIFY, nobody
// listening) or off (no NOTIFY); inflight, when positive, replaces the
// Stores' bound on the batches in flight.
func benchNotifyLock(b *testing.B, nodes, docs int, mode string, inflight int) {
	url := benchURL(b)
	ctx := context.Background()
	stores := make([]*Store, nodes)
	var heard atomic.Int64
	for i := range stores {
		// The pool of serve's default --postgres-pool.
		s, err := Open(ctx, url, Options{MaxConns: 10, StatementTimeout: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if inflight > 0 {
			s.commits.max = inflight
		}
		if mode == "off" {
			s.commits.sql = silentSQL
		}
		stores[i] = s
		if mode == "unheard" {
			continue
		}
		first := i == 0
		cancel := s.Subscribe(func(n store.Notice) {
			if first && n.ID != "" {
				heard.Add(1)
			}
		})
		defer cancel()
	}
	for d := range docs {
		if err := stores[d%nodes].Create(ctx, fmt.Sprint("doc", d), "basic", []byte(`{}`), nil); err != nil {
			b.Fatal(err)
		}
	}
	// Every transaction that writes takes a transaction id, and nothing
	// else writes to the cluster meanwhile: the ids taken count the
	// commits (this query takes one too).
	xid := func() int64 {
		var n int64
		if err := stores[0].pool.QueryRow(ctx, "SELECT pg_current_xact_id()::text::bigint").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	// Let the listeners hear the Creates.
	time.Sleep(200 * time.Millisecond)
	c0, h0 := xid(), heard.Load()

	step := []store.Step{{JSON: []byte(`{"stepType":"replace","from":1,"to":1,"slice":{"content":[{"type":"text","text":"k"}]}}`), ClientID: []byte(`1`)}}
	var left atomic.Int64
	left.Store(int64(b.N))
	lats := make([][]time.Duration, docs)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for d := range docs {
		wg.Go(func() {
			s, id := stores[d%nodes], fmt.Sprint("doc", d)
			for v := int64(0); left.Add(-1) >= 0; v++ {
				t0 := time.Now()
				if err := s.Append(ctx, id, v, step, nil); err != nil {
					b.Error(err)
					return
				}
				lats[d] = append(lats[d], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	c1 := xid()
	time.Sleep(200 * time.Millisecond) // the last notices
	h1 := heard.Load()
	all := slices.Concat(lats...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	txs := max(c1-c0-1, 1)
	b.ReportMetric(float64(txs)/float64(len(all)), "commits/append")
	b.ReportMetric(float64(h1-h0)/float64(txs), "notifies/commit")
}
