package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	now := time.Unix(1000, 0)
	var b Bucket
	for i := range 4 { // the burst
		if ok, _ := b.Take(now, 2, 4); !ok {
			t.Fatalf("take %d of the burst refused", i)
		}
	}
	ok, wait := b.Take(now, 2, 4)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over the burst: %v, wait %v; want refused, 500ms", ok, wait)
	}
	now = now.Add(500 * time.Millisecond) // one token refilled
	if ok, _ := b.Take(now, 2, 4); !ok {
		t.Fatal("refused after a refill")
	}
	if ok, _ := b.Take(now, 2, 4); ok {
		t.Fatal("took a token that was not refilled")
	}
}

func TestTableForgetsIdleKeys(t *testing.T) {
	tb := NewTable(1, 2) // refilled in 2 s
	now := time.Unix(1000, 0)
	for i := range 100 {
		tb.Take("client-"+strconv.Itoa(i), now)
	}
	if ok, _ := tb.Take("client-0", now); !ok {
		t.Fatal("second token of a burst of 2 refused")
	}
	if ok, wait := tb.Take("client-0", now); ok || wait != time.Second {
		t.Fatalf("third token: %v, wait %v; want refused, 1s", ok, wait)
	}
	if n := tb.Len(); n != 100 {
		t.Fatalf("Len = %d, want 100", n)
	}
	// Once refilled, the keys are dropped by the next Take's sweep.
	now = now.Add(3 * time.Second)
	tb.Take("other", now)
	if n := tb.Len(); n != 1 {
		t.Fatalf("after the refill period Len = %d, want 1 (idle keys dropped)", n)
	}
	// A dropped key starts with a full bucket, as before.
	for i := range 2 {
		if ok, _ := tb.Take("client-0", now); !ok {
			t.Fatalf("take %d of a forgotten key refused", i)
		}
	}
}

func TestTakeN(t *testing.T) {
	now := time.Unix(1000, 0)
	tb := NewTable(10, 100) // 10 a second, 100 at once
	if ok, _ := tb.TakeN("a", 60, now); !ok {
		t.Fatal("60 of 100 refused")
	}
	ok, wait := tb.TakeN("a", 50, now)
	if ok || wait != time.Second {
		t.Fatalf("50 more: %v, wait %v; want refused, 1s", ok, wait)
	}
	// A refusal takes nothing.
	if ok, _ := tb.TakeN("a", 40, now); !ok {
		t.Fatal("the 40 left refused")
	}
	// More than the burst never fits: the wait is until the bucket is
	// full (at once for a full one).
	if ok, wait := tb.TakeN("b", 150, now); ok || wait != 0 {
		t.Fatalf("more than the burst: %v, wait %v; want refused, 0", ok, wait)
	}
}
