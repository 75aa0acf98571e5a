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
			l, _, _ = l.apply([]CommentEvent{{Type: CommentCreate, ID: int64(i), From: from, To: from + 1 + rng.IntN(5), Text: "x"}}, -1, commentLimits{})
		}
		mapping := transform.NewMapping(maps)
		var want []Comment
		for _, c := range l.list() {
			from, to := mapping.Map(c.From, 1), mapping.Map(c.To, -1)
			if from < to {
				c.From, c.To = from, to
				want = append(want, c)
			}
		}
		got := l.mapThrough(maps)
		if !slices.Equal(got.list(), want) {
			t.Fatalf("round %d, maps %v:\ngot  %v\nwant %v", round, maps, got.list(), want)
		}
		if n := len(l.notes) - len(want); got.bytes != l.bytes-n*commentSize("x") || len(got.spans) != len(got.notes) {
			t.Fatalf("round %d: bytes %d after dropping %d of %d", round, got.bytes, n, l.bytes)
		}
	}
}

// BenchmarkMapThrough maps 10,000 comments through a keystroke in front
// of them all.
func BenchmarkMapThrough(b *testing.B) {
	var l commentLog
	for i := range 10_000 {
		l.spans = append(l.spans, commentSpan{2 + 2*i, 3 + 2*i})
		l.notes = append(l.notes, commentNote{id: int64(i), text: fmt.Sprint(i)})
	}
	maps := []*transform.StepMap{transform.NewStepMap([]int{1, 0, 1}, false)}
	for b.Loop() {
		l = l.mapThrough(maps)
	}
}
