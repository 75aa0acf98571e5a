package collab_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// BenchmarkDocAt measures DocAt (GET /docs/{id}?version=N) on a document
// of 200 paragraphs (about 15 KB of JSON) after 2,000 typing steps, with
// snapshots every 500 versions, as Config.SnapshotEvery 500 saves them:
// the cost is decoding the snapshot at or below N plus applying the
// N − snapshot steps after it, so it grows with N's distance from the
// snapshot below it (0 to 499 here), not with N. The store is in memory,
// so that the figures are the authority's work, without the disk;
// cpu-ns/op (the process's CPU time, GC included) is steadier than ns/op
// on a shared machine.
func BenchmarkDocAt(b *testing.B) {
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(b, st, collab.Config{SnapshotEvery: 1 << 30, KeepSteps: -1})
	var doc strings.Builder
	doc.WriteString(`{"type":"doc","content":[`)
	for i := range 200 {
		if i > 0 {
			doc.WriteByte(',')
		}
		fmt.Fprintf(&doc, `{"type":"paragraph","content":[{"type":"text","text":"Paragraph %03d of the benchmark document, some words."}]}`, i)
	}
	doc.WriteString(`]}`)
	schema, _, _ := a.Schema("basic")
	start, err := schema.NodeFromJSON([]byte(doc.String()))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Create(ctx, "d", "basic", start); err != nil {
		b.Fatal(err)
	}
	// Typing: one character a step at a random place in a paragraph's
	// text, as editors send them.
	rng := rand.New(rand.NewPCG(1, 2))
	const typed = 2000
	for v := range int64(typed) {
		cur := mustGet(b, a, "d").Doc
		p := rng.IntN(cur.ChildCount())
		pos := 1
		for i := range p {
			pos += cur.Child(i).NodeSize()
		}
		pos += rng.IntN(cur.Child(p).Content.Size() + 1)
		if _, err := a.Submit(ctx, "d", "", collab.Submission{Version: v, Steps: steps(insert(pos, "x")), ClientID: collab.ClientID("1")}); err != nil {
			b.Fatal(err)
		}
	}
	for _, v := range []int64{500, 1000, 1500} {
		node, err := a.DocAt(ctx, "d", v)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: v, Doc: node.AppendJSON(nil)}, -1); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []int64{1500, 1501, 1510, 1550, 1600, 1750, 1999} {
		b.Run(fmt.Sprintf("N=%d/steps=%d", n, n-1500), func(b *testing.B) {
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := a.DocAt(ctx, "d", n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
