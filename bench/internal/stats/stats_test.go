package stats

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50}, {0.9, 90}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := Quantile(d, tt.q); got != tt.want {
			t.Errorf("Quantile(1..100, %g) = %d, want %d", tt.q, got, tt.want)
		}
	}
	if got := Quantile(nil, 0.5); got != 0 {
		t.Errorf("Quantile(nil) = %d, want 0", got)
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{3, 1, 2, 10}, 2.5}} {
		if got := Median(tt.xs); got != tt.want {
			t.Errorf("Median(%v) = %g, want %g", tt.xs, got, tt.want)
		}
	}
}
