package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// applicationID marks a SQLite file as a pmauthority store ("pmau"), in
// PRAGMA application_id.
const applicationID = 0x706d6175

// layouts[i] takes the tables from layout version i (kept in PRAGMA
// user_version; 0 is an empty file) to version i+1. A new file runs them
// all, so that it is laid out exactly as an upgraded one. Change the
// layout only by adding an entry.
//
// Times are Unix nanoseconds. meta, json, client_id, commit_rec and doc
// are BLOBs so that they come back byte for byte; NULL stands for a nil
// slice (and, in commit_rec, for an empty one).
var layouts = []string{
	// 1: documents, their steps and snapshots.
	`CREATE TABLE docs (
		id      TEXT PRIMARY KEY,
		schema  TEXT NOT NULL,
		version INTEGER NOT NULL,
		oldest  INTEGER NOT NULL,
		meta    BLOB,
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL
	);
	CREATE TABLE steps (
		doc_id    TEXT NOT NULL,
		version   INTEGER NOT NULL,
		json      BLOB,
		client_id BLOB,
		time      INTEGER NOT NULL,
		PRIMARY KEY (doc_id, version)
	) WITHOUT ROWID;
	CREATE TABLE snapshots (
		doc_id  TEXT NOT NULL,
		version INTEGER NOT NULL,
		doc     BLOB,
		time    INTEGER NOT NULL,
		PRIMARY KEY (doc_id, version)
	);`,
	// 2: the step log, where Append writes in commit order (see fold).
	`CREATE TABLE log (
		seq       INTEGER PRIMARY KEY,
		doc_id    TEXT NOT NULL,
		version   INTEGER NOT NULL,
		json      BLOB,
		client_id BLOB,
		time      INTEGER NOT NULL
	);`,
	// 3: the metadata as a base (meta_bases: the metadata at a version
	// with the entries up to seq folded in) and a log of entries after
	// it, numbered by docs.meta_seq. Before, docs.meta was replaced whole
	// and referred to the latest version. The base has a table of its
	// own so that an Append, which updates the document's row, does not
	// rewrite it.
	`ALTER TABLE docs ADD COLUMN meta_seq INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE meta_bases (
		doc_id  TEXT PRIMARY KEY,
		version INTEGER NOT NULL,
		seq     INTEGER NOT NULL,
		meta    BLOB
	);
	INSERT INTO meta_bases (doc_id, version, seq, meta) SELECT id, version, 0, meta FROM docs;
	ALTER TABLE docs DROP COLUMN meta;
	CREATE TABLE meta_log (
		doc_id  TEXT NOT NULL,
		seq     INTEGER NOT NULL,
		version INTEGER NOT NULL,
		json    BLOB,
		PRIMARY KEY (doc_id, seq)
	);`,
	// 4: the author of each step (the principal that submitted it; NULL
	// for none, as for every step written before).
	`ALTER TABLE steps ADD COLUMN author TEXT;
	ALTER TABLE log ADD COLUMN author TEXT;`,
	// 5: named checkpoints, each with the document at its version (kept
	// from pruning). Snapshots from docs.oldest on are kept from now on.
	`CREATE TABLE checkpoints (
		doc_id  TEXT NOT NULL,
		name    TEXT NOT NULL,
		version INTEGER NOT NULL,
		doc     BLOB,
		author  TEXT,
		time    INTEGER NOT NULL,
		PRIMARY KEY (doc_id, name)
	);`,
	// 6: the last version of each deleted document, by id, so that a
	// document created again under its id starts after it.
	`CREATE TABLE tombstones (
		id      TEXT PRIMARY KEY,
		version INTEGER NOT NULL
	) WITHOUT ROWID;`,
	// 7: the commit record of each step (store.Step.Commit; NULL for
	// none, as for every step written before).
	`ALTER TABLE steps ADD COLUMN commit_rec BLOB;
	ALTER TABLE log ADD COLUMN commit_rec BLOB;`,
}

// schemaVersion is the layout version this code reads and writes.
var schemaVersion = int64(len(layouts))

// migrate creates the tables in an empty database, upgrades those of an
// older layout, and checks that the file is a pmauthority store this code
// can read.
func migrate(ctx context.Context, conn *sql.Conn, path string) (err error) {
	var appID, version, tables int64
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return err
	}
	switch {
	case appID != applicationID && (appID != 0 || tables != 0):
		return fmt.Errorf("store: %s is not a pmauthority store (application_id %#x)", path, appID)
	case version > schemaVersion:
		return fmt.Errorf("store: %s has schema version %d, newer than the %d this pmauthority knows: use a newer pmauthority", path, version, schemaVersion)
	case version == schemaVersion:
		return nil
	case version < 0:
		return fmt.Errorf("store: %s has unknown schema version %d", path, version)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	// Another process may have migrated meanwhile.
	var now int64
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&now); err != nil {
		return err
	}
	if now != version {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			return err
		}
		return migrate(ctx, conn, path)
	}
	for _, layout := range layouts[version:] {
		if _, err := conn.ExecContext(ctx, layout); err != nil {
			return fmt.Errorf("store: %s: upgrading the tables: %w", path, err)
		}
	}
	pragmas := fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, schemaVersion)
	if _, err := conn.ExecContext(ctx, pragmas); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}
