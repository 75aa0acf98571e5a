package connlimit

import (
	"math"
	"testing"
)

// TestDefaultMax: three quarters of the open-file limit, at most
// an eighth of the Go memory limit at ConnCost each, at least
// MinConns.
func TestDefaultMax(t *testing.T) {
	for _, tc := range []struct {
		files  uint64
		memory int64
		want   int
	}{
		{1024, math.MaxInt64, 768},
		{20_000, math.MaxInt64, 15_000},
		{1 << 20, 358 << 20, 358 << 20 / 8 / ConnCost},
		{20_000, 4 << 30, 15_000},
		{0, math.MaxInt64, 10_000},
		{math.MaxUint64, math.MaxInt64, math.MaxInt32},
		{8, math.MaxInt64, MinConns},
		{1 << 20, 1 << 20, MinConns},
	} {
		if got := defaultMax(tc.files, tc.memory); got != tc.want {
			t.Errorf("%d files, memory limit %d: %d, want %d", tc.files, tc.memory, got, tc.want)
		}
	}
	if n := DefaultMax(); n < MinConns {
		t.Errorf("DefaultMax: %d", n)
	}
}
