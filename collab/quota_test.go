package collab_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/apply"
	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/memstore"
)

// storeSize returns the Size of id in st.
func storeSize(t *testing.T, st store.Sizer, id string) int64 {
	t.Helper()
	n, err := st.Size(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDocStorageQuota fills a document up to MaxDocStorage: the
// submission and the checkpoint that would go over it are refused with a
// QuotaError naming the flag, nothing changes, and deleting the document
// frees its bytes.
func TestDocStorageQuota(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	const limit = 20_000
	a := newAuthority(t, st, collab.Config{Limits: collab.Limits{MaxDocStorage: limit}})
	text := strings.Repeat("x", 1000)
	version := int64(0)
	var err error
	for version < 100 {
		_, err = a.Submit(ctx, "d", "alice", collab.Submission{Version: version, Steps: steps(insert(1, text)), ClientID: collab.ClientID("1")})
		if err != nil {
			break
		}
		version++
	}
	var qe *collab.QuotaError
	if !errors.As(err, &qe) || !errors.Is(err, collab.ErrStorageQuota) || !strings.Contains(err.Error(), "Limits.MaxDocStorage") || qe.RetryAfter != 0 {
		t.Fatalf("after %d steps: %v, want a QuotaError naming Limits.MaxDocStorage", version, err)
	}
	if version < 5 {
		t.Fatalf("refused after %d steps of 1 KB under a quota of %d bytes", version, limit)
	}
	size := storeSize(t, st, "d")
	if size > limit {
		t.Errorf("the document holds %d bytes, over the quota of %d", size, limit)
	}
	if got := mustGet(t, a, "d"); got.Version != version {
		t.Errorf("version %d after the refusal, want %d", got.Version, version)
	}
	// A checkpoint copies the document: too much now.
	if _, err := a.Checkpoint(ctx, "d", "alice", "full", ""); !errors.Is(err, collab.ErrStorageQuota) {
		t.Errorf("a checkpoint of the full document: %v, want ErrStorageQuota", err)
	}
	if list, _ := a.Checkpoints(ctx, "d"); len(list) != 0 || storeSize(t, st, "d") != size {
		t.Errorf("after the refused checkpoint: %d checkpoints, %d bytes (was %d)", len(list), storeSize(t, st, "d"), size)
	}
	// Other documents have their own quota.
	mustSubmit(t, a, "e", collab.Submission{Version: 0, Steps: steps(insert(1, text)), ClientID: collab.ClientID("1")})
	if err := a.Delete(ctx, "d"); err != nil {
		t.Fatalf("Delete of the full document: %v", err)
	}
	// The document made again under its id (at the version after the
	// deleted one's) starts with an empty quota.
	again := mustGet(t, a, "d").Version
	mustSubmit(t, a, "d", collab.Submission{Version: again, Steps: steps(insert(1, text)), ClientID: collab.ClientID("1")})
}

// TestDocStorageQuotaAfterReload checks that the quota counts what the
// store holds, not what this Authority appended: a document filled by
// one Authority is full for the next.
func TestDocStorageQuotaAfterReload(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	text := strings.Repeat("y", 4000)
	a := newAuthority(t, st, collab.Config{})
	for v := range int64(5) {
		mustSubmit(t, a, "d", collab.Submission{Version: v, Steps: steps(insert(1, text)), ClientID: collab.ClientID("1")})
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := newAuthority(t, st, collab.Config{Limits: collab.Limits{MaxDocStorage: storeSize(t, st, "d") + 1000}})
	if _, err := b.Submit(ctx, "d", "bob", collab.Submission{Version: 5, Steps: steps(insert(1, text)), ClientID: collab.ClientID("2")}); !errors.Is(err, collab.ErrStorageQuota) {
		t.Fatalf("a step over the quota after a reload: %v, want ErrStorageQuota", err)
	}
	mustSubmit(t, b, "d", collab.Submission{Version: 5, Steps: steps(insert(1, "z")), ClientID: collab.ClientID("2")})
}

// TestClientStorageQuota checks MaxClientStorage: one client that stored
// its quota in several documents is refused (with when to try again),
// another is not, and the quota refills over a day.
func TestClientStorageQuota(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	const limit = 10_000
	a := newAuthority(t, nil, collab.Config{Now: clk.Now, Limits: collab.Limits{MaxClientStorage: limit}})
	text := strings.Repeat("m", 1000)
	var err error
	n := 0
	for ; n < 50; n++ {
		id := "doc-" + string(rune('a'+n%5))
		_, err = a.Submit(ctx, id, "mallory", collab.Submission{Version: mustGet(t, a, id).Version, Steps: steps(insert(1, text)), ClientID: collab.ClientID("7")})
		if err != nil {
			break
		}
	}
	var qe *collab.QuotaError
	if !errors.As(err, &qe) || !strings.Contains(err.Error(), "Limits.MaxClientStorage") || qe.RetryAfter <= 0 {
		t.Fatalf("after %d submissions: %v, want a QuotaError naming Limits.MaxClientStorage with a RetryAfter", n, err)
	}
	if n < 5 || n > 10 {
		t.Errorf("refused after %d submissions of about 1 KB under a quota of %d", n, limit)
	}
	if _, err := a.Checkpoint(ctx, "doc-a", "mallory", "cp", ""); !errors.Is(err, collab.ErrStorageQuota) {
		t.Errorf("mallory's checkpoint: %v, want ErrStorageQuota", err)
	}
	// Others go on, in the same documents.
	mustSubmit(t, a, "doc-a", collab.Submission{Version: mustGet(t, a, "doc-a").Version, Steps: steps(insert(1, text)), ClientID: collab.ClientID("8")})
	if _, err := a.Checkpoint(ctx, "doc-a", "alice", "cp", ""); err != nil {
		t.Errorf("alice's checkpoint: %v", err)
	}
	clk.Advance(qe.RetryAfter + time.Second)
	if _, err := a.Submit(ctx, "doc-b", "mallory", collab.Submission{Version: mustGet(t, a, "doc-b").Version, Steps: steps(insert(1, text)), ClientID: collab.ClientID("7")}); err != nil {
		t.Errorf("after the wait it was told: %v", err)
	}
}

// TestCheckpointsShareStorage takes the reproduction to the
// Authority: 100 checkpoints of an unchanged document of 2 MiB store one
// copy, within a quota of three.
func TestCheckpointsShareStorage(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	text := strings.Repeat("z", 2<<20)
	a := newAuthority(t, st, collab.Config{Limits: collab.Limits{Limits: apply.Limits{MaxDocBytes: 4 << 20}, MaxDocStorage: 3 * (2 << 20)}})
	mustSubmit(t, a, "big", collab.Submission{Version: 0, Steps: steps(insert(1, text)), ClientID: collab.ClientID("1")})
	before := storeSize(t, st, "big")
	for i := range 100 {
		if _, err := a.Checkpoint(ctx, "big", "alice", "cp-"+strings.Repeat("i", i+1), "alice"); err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
	}
	if grown := storeSize(t, st, "big") - before; grown > 2<<20+100_000 {
		t.Errorf("100 checkpoints of an unchanged document of 2 MiB grew the store by %d bytes, want one copy", grown)
	}
	// A checkpoint at a new version is a copy of its own: over the quota.
	mustSubmit(t, a, "big", collab.Submission{Version: 1, Steps: steps(insert(1, "a")), ClientID: collab.ClientID("1")})
	if _, err := a.Checkpoint(ctx, "big", "alice", "new", "alice"); !errors.Is(err, collab.ErrStorageQuota) {
		t.Errorf("a checkpoint at a new version over the quota: %v, want ErrStorageQuota", err)
	}
}
