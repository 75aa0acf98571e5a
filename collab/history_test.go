package collab_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// typeText creates id and types text into its paragraph one character a
// step, each by author "user-<i%3>" with client id 100+i%3 (the
// anonymous submissions of tests are client 1's).
func typeText(t *testing.T, a *collab.Authority, id, text string) {
	t.Helper()
	mustGet(t, a, id)
	for i, r := range text {
		mustSubmit(t, a, id, collab.Submission{
			Version:  int64(i),
			Steps:    steps(insert(1+i, string(r))),
			ClientID: collab.ClientID(fmt.Sprint(100 + i%3)),
			Author:   fmt.Sprintf("user-%d", i%3),
		})
	}
}

// docJSON returns the JSON of DocAt(id, v), failing the test on an error.
func docJSON(t *testing.T, a *collab.Authority, id string, v int64) string {
	t.Helper()
	node, err := a.DocAt(context.Background(), id, v)
	if err != nil {
		t.Fatalf("DocAt(%q, %d): %v", id, v, err)
	}
	return string(node.AppendJSON(nil))
}

func TestDocAt(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	const text = "abcdefghijklmnopqrstuvwxy"
	a := newAuthority(t, st, collab.Config{SnapshotEvery: 10, KeepSteps: -1})
	typeText(t, a, "d", text)
	if err := a.Close(); err != nil { // snapshots at 25
		t.Fatal(err)
	}
	// A new Authority reads everything from the store, whose snapshots
	// are at 0, at 10 and 20 (in the background, or not), and 25.
	b := newAuthority(t, st, collab.Config{AutoCreate: false})
	for v := int64(0); v <= int64(len(text)); v++ {
		if got, want := docJSON(t, b, "d", v), paragraph(text[:v]); got != want {
			t.Errorf("DocAt(%d) = %s, want %s", v, got, want)
		}
	}
	for _, v := range []int64{-1, 26, 1 << 62} {
		if _, err := b.DocAt(ctx, "d", v); !errors.Is(err, collab.ErrInvalidVersion) {
			t.Errorf("DocAt(%d): %v, want ErrInvalidVersion", v, err)
		}
	}
	if _, err := b.DocAt(ctx, "nothing", 0); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("DocAt of an unknown document: %v, want ErrNotFound", err)
	}
	if ok, _ := b.Exists(ctx, "nothing"); ok {
		t.Error("DocAt created the document")
	}
}

// TestDocAtPruned checks that the versions before the oldest kept step are
// gone, but for a checkpoint's.
func TestDocAtPruned(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	a := newAuthority(t, st, collab.Config{KeepSteps: 3})
	typeText(t, a, "d", "abcd")
	if _, err := a.Checkpoint(ctx, "d", "", "four", "ann"); err != nil {
		t.Fatal(err)
	}
	typeText2 := func(from int, s string) {
		for i, r := range s {
			mustSubmit(t, a, "d", collab.Submission{Version: int64(from + i), Steps: steps(insert(1+from+i, string(r)))})
		}
	}
	typeText2(4, "efgh")
	// A snapshot at 6 keeping 2 steps prunes up to 6; one at 8 keeping 2
	// then prunes nothing more (the bound 6 is the newest snapshot).
	for _, v := range []int64{6, 8} {
		if err := st.SaveSnapshot(ctx, "d", store.Snapshot{Version: v, Doc: []byte(docJSON(t, a, "d", v)), Meta: []byte(`{"comments":[]}`)}, 2); err != nil {
			t.Fatal(err)
		}
	}
	head, _ := st.Load(ctx, "d")
	if head.Oldest != 6 {
		t.Fatalf("Oldest %d, want 6", head.Oldest)
	}
	for v := int64(0); v <= 8; v++ {
		_, err := a.DocAt(ctx, "d", v)
		switch {
		case v == 4 || v >= 6:
			if err != nil {
				t.Errorf("DocAt(%d): %v", v, err)
			}
		case !errors.Is(err, collab.ErrHistoryGone):
			t.Errorf("DocAt(%d): %v, want ErrHistoryGone", v, err)
		}
	}
	if got := docJSON(t, a, "d", 4); got != paragraph("abcd") {
		t.Errorf("DocAt(4), the checkpoint: %s", got)
	}
	if _, err := a.StepLog(ctx, "d", 5, 10, 0, nil); !errors.Is(err, collab.ErrHistoryGone) {
		t.Errorf("StepLog(5): %v, want ErrHistoryGone", err)
	}
	if _, err := a.Restore(ctx, "d", "", 4, "ann"); err != nil {
		t.Errorf("Restore to the checkpoint's version: %v", err)
	}
	if got := string(mustGet(t, a, "d").DocJSON); got != paragraph("abcd") {
		t.Errorf("after Restore(4): %s", got)
	}
}

func TestStepLog(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	typeText(t, a, "d", "abcde")
	page, err := a.StepLog(ctx, "d", 1, 3, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if page.Version != 5 || page.Oldest != 0 || len(page.Steps) != 3 {
		t.Fatalf("StepLog(1, 3) = %+v", page)
	}
	for i, s := range page.Steps {
		v := int64(i + 2)
		if s.Version != v || string(s.JSON) != string(insert(int(v), string("abcde"[v-1]))) ||
			string(s.ClientID) != fmt.Sprint(100+(v-1)%3) || s.Author != fmt.Sprintf("user-%d", (v-1)%3) || s.Time.IsZero() {
			t.Errorf("step %d = {%d %s %s %q %v}", i, s.Version, s.JSON, s.ClientID, s.Author, s.Time)
		}
	}
	if page, err := a.StepLog(ctx, "d", 5, 3, 0, nil); err != nil || len(page.Steps) != 0 || page.Steps == nil {
		t.Errorf("StepLog(5) = %+v, %v; want an empty page", page, err)
	}
	if page, err := a.StepLog(ctx, "d", 3, 100, 0, nil); err != nil || len(page.Steps) != 2 {
		t.Errorf("StepLog(3, 100) = %d steps, %v; want 2", len(page.Steps), err)
	}
	if _, err := a.StepLog(ctx, "d", 6, 3, 0, nil); !errors.Is(err, collab.ErrInvalidVersion) {
		t.Errorf("StepLog(6): %v, want ErrInvalidVersion", err)
	}
	// A negative from is the oldest kept version.
	if page, err := a.StepLog(ctx, "d", -1, 3, 0, nil); err != nil || len(page.Steps) != 3 || page.Steps[0].Version != 1 {
		t.Errorf("StepLog(-1, 3) = %+v, %v; want steps 1 to 3", page, err)
	}
	if _, err := a.StepLog(ctx, "d", 0, 0, 0, nil); !errors.Is(err, collab.ErrInvalidRequest) {
		t.Errorf("StepLog with limit 0: %v, want ErrInvalidRequest", err)
	}
	if _, err := a.StepLog(ctx, "nothing", 0, 3, 0, nil); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("StepLog of an unknown document: %v, want ErrNotFound", err)
	}
}

func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	a := newAuthority(t, nil, collab.Config{Now: clk.Now})
	typeText(t, a, "d", "ab")
	if cp, err := a.Checkpoint(ctx, "d", "", "two", "ann"); err != nil || cp.Version != 2 || cp.Author != "ann" || !cp.Time.Equal(clk.Now()) {
		t.Fatalf("Checkpoint = %+v, %v", cp, err)
	}
	mustSubmit(t, a, "d", collab.Submission{Version: 2, Steps: steps(insert(3, "c"))})
	if _, err := a.Checkpoint(ctx, "d", "", "Three ✓", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Checkpoint(ctx, "d", "", "two", "bob"); !errors.Is(err, collab.ErrCheckpointExists) {
		t.Errorf("a taken name: %v, want ErrCheckpointExists", err)
	}
	for _, name := range []string{"", strings.Repeat("x", collab.MaxCheckpointName+1), "\xff"} {
		if _, err := a.Checkpoint(ctx, "d", "", name, ""); !errors.Is(err, collab.ErrInvalidRequest) {
			t.Errorf("name %q: %v, want ErrInvalidRequest", name, err)
		}
	}
	if _, err := a.Checkpoint(ctx, "nothing", "", "x", ""); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("Checkpoint of an unknown document: %v, want ErrNotFound", err)
	}
	list, err := a.Checkpoints(ctx, "d")
	if err != nil || len(list) != 2 || list[0].Name != "two" || list[0].Version != 2 || list[1].Name != "Three ✓" || list[1].Version != 3 {
		t.Fatalf("Checkpoints = %+v, %v", list, err)
	}
	if v, err := a.CheckpointVersion(ctx, "d", "two"); err != nil || v != 2 {
		t.Errorf("CheckpointVersion(two) = %d, %v", v, err)
	}
	if _, err := a.CheckpointVersion(ctx, "d", "four"); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("CheckpointVersion(four): %v, want ErrNotFound", err)
	}
	if _, err := a.Checkpoints(ctx, "nothing"); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("Checkpoints of an unknown document: %v, want ErrNotFound", err)
	}
}

func TestMaxCheckpoints(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{Limits: collab.Limits{MaxCheckpoints: 2}})
	typeText(t, a, "d", "ab")
	for _, name := range []string{"one", "two"} {
		if _, err := a.Checkpoint(ctx, "d", "", name, ""); err != nil {
			t.Fatal(err)
		}
	}
	var le *collab.LimitError
	if _, err := a.Checkpoint(ctx, "d", "", "three", ""); !errors.As(err, &le) || le.Limit != 2 || le.Value != 3 {
		t.Fatalf("a third checkpoint: %v, want a LimitError", err)
	}
	if list, _ := a.Checkpoints(ctx, "d"); len(list) != 2 {
		t.Errorf("%d checkpoints after the refusal, want 2", len(list))
	}
	// Another document has its own.
	typeText(t, a, "e", "x")
	if _, err := a.Checkpoint(ctx, "e", "", "one", ""); err != nil {
		t.Errorf("another document's checkpoint: %v", err)
	}
}

func TestRestore(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	typeText(t, a, "d", "hello world")
	mustSubmit(t, a, "d", collab.Submission{Version: 11, Steps: steps(del(1, 7))}) // "world"
	want := docJSON(t, a, "d", 5)                                                  // "hello"
	res, err := a.Restore(ctx, "d", "", 5, "ann")
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != 13 {
		t.Errorf("Restore's version %d, want 13: one new step", res.Version)
	}
	if got := string(mustGet(t, a, "d").DocJSON); got != want {
		t.Errorf("after Restore(5): %s, want %s", got, want)
	}
	page, err := a.StepLog(ctx, "d", 12, 10, 0, nil)
	if err != nil || len(page.Steps) != 1 {
		t.Fatalf("StepLog(12) = %+v, %v", page, err)
	}
	if s := page.Steps[0]; s.Author != "ann" || string(s.ClientID) != string(collab.RestoreClientID) {
		t.Errorf("the restore step: %s by %q as %s", s.JSON, s.Author, s.ClientID)
	}
	// The step replaces only what differs ("world" by "hello").
	if s := string(page.Steps[0].JSON); s != `{"stepType":"replace","from":1,"to":6,"slice":{"content":[{"type":"text","text":"hello"}]}}` {
		t.Errorf("the restore step: %s", s)
	}
	// Already equal: nothing is submitted.
	if res, err := a.Restore(ctx, "d", "", 5, "ann"); err != nil || res.Version != 13 {
		t.Errorf("Restore to an equal version = %+v, %v; want version 13", res, err)
	}
	// Back to the start: an empty paragraph.
	if _, err := a.Restore(ctx, "d", "", 0, ""); err != nil {
		t.Fatal(err)
	}
	if got := string(mustGet(t, a, "d").DocJSON); got != paragraph("") {
		t.Errorf("after Restore(0): %s", got)
	}
	for _, v := range []int64{-1, 100} {
		if _, err := a.Restore(ctx, "d", "", v, ""); !errors.Is(err, collab.ErrInvalidVersion) {
			t.Errorf("Restore(%d): %v, want ErrInvalidVersion", v, err)
		}
	}
	if _, err := a.Restore(ctx, "nothing", "", 0, ""); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("Restore of an unknown document: %v, want ErrNotFound", err)
	}
	if ok, _ := a.Exists(ctx, "nothing"); ok {
		t.Error("Restore created the document")
	}
}

// TestRestoreStructure restores across changes of structure: paragraphs
// split, joined and wrapped.
func TestRestoreStructure(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	typeText(t, a, "d", "abab")
	for i, step := range []string{
		`{"stepType":"replace","from":3,"to":3,"slice":{"content":[{"type":"paragraph"},{"type":"paragraph"}],"openStart":1,"openEnd":1}}`,
		`{"stepType":"replaceAround","from":0,"to":8,"gapFrom":0,"gapTo":8,"insert":1,"slice":{"content":[{"type":"blockquote"}]},"structure":true}`,
		`{"stepType":"addMark","from":2,"to":4,"mark":{"type":"em"}}`,
		insertJSON(3, "ab"),
	} {
		mustSubmit(t, a, "d", collab.Submission{Version: int64(4 + i), Steps: steps([]byte(step))})
	}
	for v := int64(8); v >= 0; v-- {
		if _, err := a.Restore(ctx, "d", "", v, ""); err != nil {
			t.Fatalf("Restore(%d): %v", v, err)
		}
		if got, want := string(mustGet(t, a, "d").DocJSON), docJSON(t, a, "d", v); got != want {
			t.Errorf("after Restore(%d): %s, want %s", v, got, want)
		}
	}
}

func insertJSON(pos int, text string) string { return string(insert(pos, text)) }

func TestAuthors(t *testing.T) {
	ctx := context.Background()
	a := newAuthority(t, nil, collab.Config{})
	mustGet(t, a, "d")
	for i, s := range []struct {
		step, author string
	}{
		{insertJSON(1, "hello"), "ann"},  // v1: <p>hello</p>
		{insertJSON(6, " world"), "bob"}, // v2: <p>hello world</p>
		{string(del(3, 5)), "cat"},       // v3: <p>heo world</p>
		{`{"stepType":"addMark","from":1,"to":10,"mark":{"type":"strong"}}`, "dan"},                                                                             // v4: formatting
		{`{"stepType":"replaceAround","from":0,"to":11,"gapFrom":0,"gapTo":11,"insert":1,"slice":{"content":[{"type":"blockquote"}]},"structure":true}`, "eve"}, // v5: wrapped
		{insertJSON(3, "XY"), ""}, // v6: inside ann's range, anonymous
	} {
		mustSubmit(t, a, "d", collab.Submission{Version: int64(i), Steps: steps([]byte(s.step)), ClientID: collab.ClientID(fmt.Sprint(10 + i)), Author: s.author})
	}
	au, err := a.Authors(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	// <blockquote><p>h X Y e o ␠ w o r l d</p></blockquote>
	want := "[0,1 eve/14] [1,2 /] [2,3 ann/10] [3,5 /15] [5,7 ann/10] [7,13 bob/11] [13,14 /] [14,15 eve/14]"
	var got []string
	for _, r := range au.Ranges {
		got = append(got, fmt.Sprintf("[%d,%d %s/%s]", r.From, r.To, r.Author, r.ClientID))
	}
	if strings.Join(got, " ") != want {
		t.Errorf("Authors:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	for _, r := range au.Ranges {
		if wantV := map[string]int64{"eve": 5, "ann": 1, "bob": 2, "": 0}[r.Author]; r.Version != wantV && !(r.Author == "" && r.Version == 6) {
			t.Errorf("range %d–%d by %q: version %d", r.From, r.To, r.Author, r.Version)
		}
	}
	if au.Version != 6 || au.Oldest != 0 {
		t.Errorf("Authors at version %d from %d, want 6 from 0", au.Version, au.Oldest)
	}
	if _, err := a.Authors(ctx, "nothing"); !errors.Is(err, collab.ErrNotFound) {
		t.Errorf("Authors of an unknown document: %v, want ErrNotFound", err)
	}
}
