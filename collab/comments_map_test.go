package collab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pmauthority/pmauthority/transform"
)

// TestMapThroughSpans checks commentLog.mapThrough against mapping every
// comment through transform.Mapping, for random maps of one or more
// ranges, inverted too.
func TestMapThroughSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 2000 {
		var maps []*transform.StepMap
		for range 1 + rng.IntN(3) {
			var ranges []int
			pos := rng.IntN(5)
			for range rng.IntN(3) {
				oldSize, newSize := rng.IntN(4), rng.IntN(4)
				ranges = append(ranges, pos, oldSize, newSize)
				pos += oldSize + 1 + rng.IntN(4)
			}
			maps = append(maps, transform.NewStepMap(ranges, rng.IntN(4) == 0))
		}
		var l commentLog
		for i := range 30 {
			from := rng.IntN(25)
			c := Comment{From: from, To: from + 1 + rng.IntN(5), ID: int64(i), Text: "x"}
			l.comments = append(l.comments, c)
			l.bytes += commentSize(c)
		}
		mapping := transform.NewMapping(maps)
		var want []Comment
		for _, c := range l.comments {
			from, to := mapping.Map(c.From, 1), mapping.Map(c.To, -1)
			if from < to {
				c.From, c.To = from, to
				want = append(want, c)
			}
		}
		got := l.mapThrough(maps)
		if !slices.Equal(got.comments, want) {
			t.Fatalf("round %d, maps %v:\ngot  %v\nwant %v", round, maps, got.comments, want)
		}
		if n := len(l.comments) - len(want); got.bytes != l.bytes-n*commentSize(Comment{Text: "x"}) {
			t.Fatalf("round %d: bytes %d after dropping %d of %d", round, got.bytes, n, l.bytes)
		}
	}
}

// BenchmarkMapThrough maps 10,000 comments through a keystroke in front
// of them all.
func BenchmarkMapThrough(b *testing.B) {
	var l commentLog
	for i := range 10_000 {
		l.comments = append(l.comments, Comment{From: 2 + 2*i, To: 3 + 2*i, ID: int64(i), Text: fmt.Sprint(i)})
	}
	maps := []*transform.StepMap{transform.NewStepMap([]int{1, 0, 1}, false)}
	for b.Loop() {
		l = l.mapThrough(maps)
	}
}
