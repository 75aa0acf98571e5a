package testutil

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLogBuffer(t *testing.T) {
	var b LogBuffer
	log := slog.New(slog.NewTextHandler(&b, nil))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				log.Info("hello", "g", i, "n", j)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, "msg=hello g=") {
			t.Fatalf("torn line %q", l)
		}
	}
	b.Reset()
	if b.String() != "" {
		t.Errorf("after Reset: %q", b.String())
	}
	fmt.Fprint(&b, "again")
	if b.String() != "again" {
		t.Errorf("after a write: %q", b.String())
	}
}

func TestFakeClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewFakeClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now() = %v", c.Now())
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			c.Advance(time.Second)
			c.Now()
		})
	}
	wg.Wait()
	if got := c.Now().Sub(start); got != 10*time.Second {
		t.Errorf("advanced by %v, want 10s", got)
	}
	var zero FakeClock
	if !zero.Now().IsZero() {
		t.Errorf("zero clock reads %v", zero.Now())
	}
}
