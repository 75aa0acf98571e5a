// Package ratelimit holds token buckets: one for a single caller (Bucket)
// and a table of them keyed by client (Table) that forgets idle clients,
// so that its memory is bounded by the clients active lately.
package ratelimit

import (
	"sync"
	"time"
)

// Bucket is a token bucket: Take succeeds rate times per second on
// average and burst times at once. Its zero value is a full bucket; it is
// not safe for concurrent use.
type Bucket struct {
	used float64 // tokens taken and not yet refilled
	last int64   // unix nanoseconds of the last Take
}

// Take takes a token at now, or reports false and how long until one is
// refilled.
func (b *Bucket) Take(now time.Time, rate, burst float64) (bool, time.Duration) {
	return b.TakeN(now, 1, rate, burst)
}

// TakeN takes n tokens at now, or none and reports false and how long
// until n are refilled (for n > burst, until the bucket is full: n never
// fit).
func (b *Bucket) TakeN(now time.Time, n, rate, burst float64) (bool, time.Duration) {
	t := now.UnixNano()
	if b.last != 0 {
		b.used = max(0, b.used-float64(t-b.last)/1e9*rate)
	}
	b.last = t
	if b.used+n > burst {
		return false, time.Duration((b.used + min(n, burst) - burst) / rate * 1e9)
	}
	b.used += n
	return true, 0
}

// full reports whether b has refilled to its burst at now: it is then the
// same as a new bucket.
func (b *Bucket) full(now time.Time, rate float64) bool {
	return b.used-float64(now.UnixNano()-b.last)/1e9*rate <= 0
}

// Table is a Bucket per key, of Rate tokens per second and Burst at once.
// A key's bucket is dropped once it has refilled, so that the table holds
// only the keys that took a token within about two refill periods
// (Burst/Rate). It is safe for concurrent use.
type Table struct {
	rate, burst float64
	mu          sync.Mutex
	buckets     map[string]Bucket
	swept       time.Time
}

// NewTable returns a table of buckets of rate tokens per second and burst
// at once.
func NewTable(rate, burst float64) *Table {
	return &Table{rate: rate, burst: burst, buckets: make(map[string]Bucket)}
}

// Take takes a token of key at now, or reports false and how long until
// one is refilled.
func (t *Table) Take(key string, now time.Time) (bool, time.Duration) {
	return t.TakeN(key, 1, now)
}

// TakeN takes n tokens of key at now, or none and reports false and how
// long until they are refilled (see Bucket.TakeN).
func (t *Table) TakeN(key string, n float64, now time.Time) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.Sub(t.swept) >= time.Duration(t.burst/t.rate*1e9) {
		t.sweep(now)
	}
	b := t.buckets[key]
	ok, wait := b.TakeN(now, n, t.rate, t.burst)
	t.buckets[key] = b
	return ok, wait
}

// sweep drops the buckets that have refilled. It runs with mu held, at
// most once per refill period, so its cost per Take stays constant.
func (t *Table) sweep(now time.Time) {
	t.swept = now
	for k, b := range t.buckets {
		if b.full(now, t.rate) {
			delete(t.buckets, k)
		}
	}
}

// Len returns the number of keys the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.buckets)
}
