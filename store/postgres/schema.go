package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions in order: migrations[i] brings a
// database from version i to i+1. A migration, once released, is never
// changed; a change of the schema is a new one at the end.
//
// Strings are bytea, not text: the store keeps the bytes it is given
// (a Go string need not be UTF-8 and may hold NUL). Times are Unix
// nanoseconds, kept exactly.
var migrations = []string{
	// 1: documents, their steps and their metadata entries. The latest
	// snapshot and the metadata base live in the document's row.
	`CREATE TABLE pma_docs (
		id           bytea PRIMARY KEY,
		schema_name  bytea  NOT NULL,
		version      bigint NOT NULL,
		oldest       bigint NOT NULL DEFAULT 0,
		meta         bytea,
		meta_version bigint NOT NULL DEFAULT 0,
		meta_base    bigint NOT NULL DEFAULT 0,
		meta_seq     bigint NOT NULL DEFAULT 0,
		snap_version bigint NOT NULL DEFAULT 0,
		snap_doc     bytea,
		updated      bigint NOT NULL
	);
	CREATE TABLE pma_steps (
		doc_id    bytea  NOT NULL,
		version   bigint NOT NULL,
		json      bytea  NOT NULL,
		client_id bytea,
		author    bytea  NOT NULL,
		time      bigint NOT NULL,
		PRIMARY KEY (doc_id, version)
	);
	CREATE TABLE pma_meta_entries (
		doc_id  bytea  NOT NULL,
		seq     bigint NOT NULL,
		version bigint NOT NULL,
		json    bytea  NOT NULL,
		PRIMARY KEY (doc_id, seq)
	);`,
	// 2: the snapshots older than the latest (which stays in the
	// document's row), from the oldest kept step on: the bases that the
	// kept steps replay from (SnapshotAt, Scan); and the named
	// checkpoints with the document at their version.
	`CREATE TABLE pma_snapshots (
		doc_id  bytea  NOT NULL,
		version bigint NOT NULL,
		doc     bytea,
		PRIMARY KEY (doc_id, version)
	);
	CREATE TABLE pma_checkpoints (
		doc_id  bytea  NOT NULL,
		name    bytea  NOT NULL,
		version bigint NOT NULL,
		doc     bytea,
		author  bytea  NOT NULL,
		time    bigint NOT NULL,
		PRIMARY KEY (doc_id, name)
	);`,
	// 3: the last version of each deleted document, by id, so that a
	// document created again under its id starts after it.
	`CREATE TABLE pma_tombstones (
		id      bytea  PRIMARY KEY,
		version bigint NOT NULL
	);`,
	// 4: the commit record of each step (store.Step.Commit), NULL for
	// none (for a nil or empty Commit, and on every step written before).
	`ALTER TABLE pma_steps ADD COLUMN commit_rec bytea;`,
}

// migrateLock is the key of the transaction-level advisory lock that
// serializes the migrations of processes starting at once.
const migrateLock int64 = 0x706d615f6d696772 // "pma_migr"

// migrate brings the database's schema to the latest version, in one
// transaction under an advisory lock, so that several processes starting
// at once apply each migration once.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS pma_migrations (
			version int PRIMARY KEY,
			applied timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM pma_migrations").Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("the database's schema is at version %d, newer than this program's %d: upgrade the program", have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO pma_migrations (version) VALUES ($1)", v); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
		}
		return nil
	})
}
