package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"iter"

	"github.com/pmauthority/pmauthority/store"
)

var _ store.Scanner = (*Store)(nil)

// Scan implements store.Scanner: one read transaction reads the head, as
// Load does, and then the step rows of both the steps table and the log
// that Append writes to.
func (s *Store) Scan(ctx context.Context, id string, fn func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if err := s.scan(ctx, id, fn); err != nil {
		return fmt.Errorf("store: scan %q: %w", id, s.readErr(err))
	}
	return nil
}

func (s *Store) scan(ctx context.Context, id string, fn func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
	s.readers.RLock()
	defer s.readers.RUnlock()
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	h, err := loadHead(ctx, tx, id)
	if err != nil {
		return err
	}
	older, err := olderSnapshots(ctx, tx, id, h.Snapshot.Version)
	if err != nil {
		return err
	}
	steps := func(yield func(store.Step, error) bool) {
		rows, err := tx.QueryContext(ctx, `
			SELECT version, json, client_id, author, time, commit_rec FROM steps WHERE doc_id = ?1 AND version > ?2
			UNION ALL
			SELECT version, json, client_id, author, time, commit_rec FROM log WHERE doc_id = ?1 AND version > ?2
			ORDER BY version`, id, h.Oldest)
		if err != nil {
			yield(store.Step{}, err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			st, err := scanStep(rows)
			if err != nil {
				yield(store.Step{}, err)
				return
			}
			if !yield(st, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(store.Step{}, err)
		}
	}
	return fn(h, older, steps)
}

// olderSnapshots returns the snapshots of id before version.
func olderSnapshots(ctx context.Context, tx *sql.Tx, id string, version int64) ([]store.Snapshot, error) {
	rows, err := tx.QueryContext(ctx, "SELECT version, doc FROM snapshots WHERE doc_id = ? AND version < ? ORDER BY version", id, version)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var older []store.Snapshot
	for rows.Next() {
		var snap store.Snapshot
		if err := rows.Scan(&snap.Version, &snap.Doc); err != nil {
			return nil, err
		}
		older = append(older, snap)
	}
	return older, rows.Err()
}
