package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// applicationID marks a SQLite file as a pmauthority store ("pmau"), in
// PRAGMA application_id.
const applicationID = 0x706d6175

// schemaVersion is the version of the table layout below, kept in PRAGMA
// user_version. Change the layout only by adding a migration from the
// previous version.
const schemaVersion = 1

// Times are Unix nanoseconds. meta, json, client_id and doc are BLOBs so
// that they come back byte for byte; NULL stands for a nil slice.
const schemaSQL = `
CREATE TABLE docs (
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
);
`

// migrate creates the tables in an empty database and checks that a
// non-empty one is a pmauthority store this code can read.
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
	case version != 0:
		// Migrations from older versions go here.
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
	// Another process may have created the tables meanwhile.
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version != 0 {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			return err
		}
		return migrate(ctx, conn, path)
	}
	if _, err := conn.ExecContext(ctx, schemaSQL); err != nil {
		return err
	}
	pragmas := fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, schemaVersion)
	if _, err := conn.ExecContext(ctx, pragmas); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}
