package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/pmauthority/pmauthority/store/storetest"
)

// TestCommitObserver: Options.Observer is told every batch the writer
// commits, creations and appends alike.
func TestCommitObserver(t *testing.T) {
	rec := &storetest.CommitRecorder{}
	s := open(t, filepath.Join(t.TempDir(), "observed.db"), Options{Sync: SyncNormal, Observer: rec})
	defer closeStore(t, s)
	storetest.RunCommitObserver(t, s, rec, 8, 20, true)
}
