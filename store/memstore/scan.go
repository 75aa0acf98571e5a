package memstore

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/pmauthority/pmauthority/store"
)

var _ store.Scanner = (*Store)(nil)

// Scan implements store.Scanner. It copies the document's head and steps,
// so that fn runs without holding the store's lock.
func (s *Store) Scan(ctx context.Context, id string, fn func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
	s.mu.RLock()
	d, err := s.lookup(ctx, id)
	var head store.Head
	var older []store.Snapshot
	var steps []store.Step
	if err == nil {
		head, steps = d.head(), slices.Clone(d.steps)
		for _, sn := range d.snaps[:len(d.snaps)-1] {
			older = append(older, store.Snapshot{Version: sn.Version, Doc: clone(sn.Doc)})
		}
	}
	s.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("store: scan %q: %w", id, err)
	}
	return fn(head, older, func(yield func(store.Step, error) bool) {
		for _, st := range steps {
			st.JSON, st.ClientID, st.Commit = clone(st.JSON), clone(st.ClientID), clone(st.Commit)
			if !yield(st, nil) {
				return
			}
		}
	})
}
