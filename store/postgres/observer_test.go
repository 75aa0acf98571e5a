package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/pmauthority/pmauthority/internal/pgtest"
	"github.com/pmauthority/pmauthority/store/storetest"
)

// TestCommitObserver: Options.Observer is told every batch of Appends
// (Create commits on its own, unobserved).
func TestCommitObserver(t *testing.T) {
	rec := &storetest.CommitRecorder{}
	s, err := Open(context.Background(), pgtest.URL(t), Options{MaxConns: 8, StatementTimeout: time.Minute, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RunCommitObserver(t, s, rec, 8, 20, false)
}
