package collab

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pmauthority/pmauthority/transform"
)

// TestMapThroughSpans checks commentLog.mapThrough, one submission of
// random maps (of one or more ranges, inverted too) after another, past
// maxPendingMaps, against mapping every comment through transform.Mapping
// and dropping it when its range collapses.
func TestMapThroughSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		var l commentLog
		var want []Comment
		for i := range 30 {
			from := rng.IntN(25)
			c := Comment{From: from, To: from + 1 + rng.IntN(5), ID: int64(i), Text: "x"}
			l, _, _ = l.apply([]CommentEvent{{Type: CommentCreate, ID: c.ID, From: c.From, To: c.To, Text: c.Text}}, -1, commentLimits{}, commentActor{any: true})
			want = append(want, c)
		}
		for sub := range 2 * maxPendingMaps {
			var maps []*transform.StepMap
			for range 1 + rng.IntN(3) {
				var ranges []int
				pos := rng.IntN(20)
				for range rng.IntN(3) {
					oldSize, newSize := rng.IntN(3), rng.IntN(4)
					ranges = append(ranges, pos, oldSize, newSize)
					pos += oldSize + 1 + rng.IntN(10)
				}
				maps = append(maps, transform.NewStepMap(ranges, rng.IntN(4) == 0))
			}
			mapping := transform.NewMapping(maps)
			next := want[:0:0]
			for _, c := range want {
				from, to := mapping.Map(c.From, 1), mapping.Map(c.To, -1)
				if from < to {
					c.From, c.To = from, to
					next = append(next, c)
				}
			}
			want = next
			l = l.mapThrough(maps)
			if got := l.list(); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, submission %d, maps %v:\ngot  %v\nwant %v", round, sub, maps, got, want)
			}
		}
		l = l.flush()
		if len(l.pending) != 0 || len(l.spans) != len(want) || len(l.notes) != len(want) || l.bytes != len(want)*commentSize("x", "") {
			t.Fatalf("round %d: after flush %d pending, %d spans, %d notes, %d bytes; want %d comments", round, len(l.pending), len(l.spans), len(l.notes), l.bytes, len(want))
		}
		if got := l.list(); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: after flush\ngot  %v\nwant %v", round, got, want)
		}
	}
}

// BenchmarkMapThrough maps 10,000 comments through keystrokes in front
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
