package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pmauthority/pmauthority/store"
)

var _ store.Scanner = (*Store)(nil)

// Scan implements store.Scanner in one read-only REPEATABLE READ
// transaction, so that the head and the steps are of one state of the
// database while other nodes write.
func (s *Store) Scan(ctx context.Context, id string, fn func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
	if err := s.begin(ctx); err != nil {
		return fmt.Errorf("store: scan %q: %w", id, err)
	}
	defer s.mu.RUnlock()
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return scan(ctx, tx, id, fn)
	})
	if err != nil {
		return fmt.Errorf("store: scan %q: %w", id, dbErr(ctx, err))
	}
	return nil
}

func scan(ctx context.Context, tx pgx.Tx, id string, fn func(store.Head, []store.Snapshot, iter.Seq2[store.Step, error]) error) error {
	var h store.Head
	var schema []byte
	bid := []byte(id)
	err := tx.QueryRow(ctx, `
		SELECT schema_name, version, meta, meta_version, meta_base, meta_seq, snap_version, snap_doc, oldest
		FROM pma_docs WHERE id = $1`, bid).
		Scan(&schema, &h.Version, &h.Meta, &h.MetaVersion, &h.MetaBase, &h.MetaSeq, &h.Snapshot.Version, &h.Snapshot.Doc, &h.Oldest)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return err
	}
	h.Schema = string(schema)
	rows, err := tx.Query(ctx, "SELECT version, doc FROM pma_snapshots WHERE doc_id = $1 AND version < $2 ORDER BY version",
		bid, h.Snapshot.Version)
	if err != nil {
		return err
	}
	older, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Snapshot, error) {
		var snap store.Snapshot
		err := row.Scan(&snap.Version, &snap.Doc)
		return snap, err
	})
	if err != nil {
		return err
	}
	steps := func(yield func(store.Step, error) bool) {
		rows, err := tx.Query(ctx, `
			SELECT version, json, client_id, author, time, commit_rec FROM pma_steps
			WHERE doc_id = $1 AND version > $2 ORDER BY version`, []byte(id), h.Oldest)
		if err != nil {
			yield(store.Step{}, dbErr(ctx, err))
			return
		}
		defer rows.Close()
		for rows.Next() {
			var st store.Step
			var author []byte
			var t int64
			if err := rows.Scan(&st.Version, &st.JSON, &st.ClientID, &author, &t, &st.Commit); err != nil {
				yield(store.Step{}, dbErr(ctx, err))
				return
			}
			st.Author, st.Time, st.Commit = string(author), time.Unix(0, t), record(st.Commit)
			if !yield(st, nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(store.Step{}, dbErr(ctx, err))
		}
	}
	return fn(h, older, steps)
}
