package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// BackupOptions configures Backup and Restore.
type BackupOptions struct {
	// Progress, when not nil, is called about every ProgressEvery while
	// the copy is written, with the bytes written so far and the size of
	// the store being copied (the copy ends up smaller when the store has
	// free pages).
	Progress func(written, total int64)
	// ProgressEvery is how often Progress is called (default 1 s).
	ProgressEvery time.Duration
}

// BackupInfo describes a copy that Backup or Restore wrote.
type BackupInfo struct {
	// Bytes is the size of the copy.
	Bytes int64
	// Docs is the number of documents it holds, and Steps the number of
	// their steps.
	Docs, Steps int64
}

// Backup writes a consistent copy of the store in the SQLite file at path
// to the file to, which must not exist: SQLite's VACUUM INTO reads the
// store in one read transaction, so that servers keep writing meanwhile
// and the copy holds every commit up to one moment, none after. The copy
// is written to a temporary file beside to, checked (PRAGMA quick_check,
// the pmauthority application id, a layout this code reads), synced, and
// only then linked to its name, so that to is either absent or complete.
// The copy is a store that Open takes as it is.
func Backup(ctx context.Context, path, to string, opts BackupOptions) (BackupInfo, error) {
	info, err := backup(ctx, path, to, opts)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("store: backup of %s to %s: %w", path, to, err)
	}
	return info, nil
}

func backup(ctx context.Context, path, to string, opts BackupOptions) (BackupInfo, error) {
	if err := checkStore(ctx, path, false); err != nil {
		return BackupInfo{}, err
	}
	if _, err := os.Lstat(to); err == nil {
		return BackupInfo{}, fmt.Errorf("%s exists: %w", to, fs.ErrExist)
	}
	tmp, info, err := copyStore(ctx, path, to, opts)
	if err != nil {
		return BackupInfo{}, err
	}
	defer os.Remove(tmp)
	// A link, unlike a rename, fails when to has appeared meanwhile.
	if err := os.Link(tmp, to); err != nil {
		return BackupInfo{}, err
	}
	return info, syncDir(filepath.Dir(to))
}

// Restore copies the store in the SQLite file from (a copy that Backup
// wrote, or any store) to the file at path, as Backup does. When path (or
// its write-ahead log) exists, Restore fails with fs.ErrExist, unless
// force is set: it then replaces the store at path, removing its
// write-ahead log. No server may have the store at path open: a server
// would keep writing to the files it opened (and refuse writes once it
// notices the replacement), so that Restore first checks that it can
// lock the store at path exclusively.
func Restore(ctx context.Context, from, path string, force bool, opts BackupOptions) (BackupInfo, error) {
	info, err := restore(ctx, from, path, force, opts)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("store: restore of %s from %s: %w", path, from, err)
	}
	return info, nil
}

func restore(ctx context.Context, from, path string, force bool, opts BackupOptions) (BackupInfo, error) {
	if err := checkStore(ctx, from, true); err != nil {
		return BackupInfo{}, err
	}
	exists := false
	for _, p := range []string{path, path + "-wal"} {
		if _, err := os.Lstat(p); err == nil {
			exists = true
		}
	}
	if exists && !force {
		return BackupInfo{}, fmt.Errorf("%s holds a store: %w (force replaces it)", path, fs.ErrExist)
	}
	if exists {
		if err := checkUnused(ctx, path); err != nil {
			return BackupInfo{}, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return BackupInfo{}, err
	}
	tmp, info, err := copyStore(ctx, from, path, opts)
	if err != nil {
		return BackupInfo{}, err
	}
	defer os.Remove(tmp)
	if exists {
		// The old log must go first: SQLite would apply it to the new
		// file.
		for _, p := range []string{path + "-wal", path + "-shm"} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return BackupInfo{}, err
			}
		}
		err = os.Rename(tmp, path)
	} else {
		err = os.Link(tmp, path)
	}
	if err != nil {
		return BackupInfo{}, err
	}
	return info, syncDir(filepath.Dir(path))
}

// checkStore checks that path is a pmauthority store of a layout this
// code reads, opening it read-only when readOnly (a copy, which has no
// write-ahead log), without creating it when it does not exist.
func checkStore(ctx context.Context, path string, readOnly bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", path)
	}
	params := []string{"_pragma=busy_timeout(5000)", "_query_only=1"}
	if readOnly {
		params = append(params, "mode=ro")
	}
	db, err := sql.Open("sqlite", dsn(path, params...))
	if err != nil {
		return err
	}
	defer db.Close()
	return checkLayout(ctx, db, path)
}

// checkLayout checks the application id and the layout version of db.
func checkLayout(ctx context.Context, db *sql.DB, path string) error {
	var appID, version int64
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if appID != applicationID {
		return fmt.Errorf("%s is not a pmauthority store (application_id %#x)", path, appID)
	}
	if version > schemaVersion {
		return fmt.Errorf("%s has schema version %d, newer than the %d this pmauthority knows: use a newer pmauthority", path, version, schemaVersion)
	}
	return nil
}

// copyStore writes a copy of the store at path to a new temporary file
// beside dest and checks it (checkCopy), returning the file's name for
// the caller to rename or remove.
func copyStore(ctx context.Context, path, dest string, opts BackupOptions) (string, BackupInfo, error) {
	tmp, err := vacuumInto(ctx, path, dest, opts)
	if err != nil {
		return "", BackupInfo{}, err
	}
	info, err := checkCopy(ctx, tmp)
	if err != nil {
		os.Remove(tmp)
		return "", BackupInfo{}, fmt.Errorf("checking the copy: %w", err)
	}
	return tmp, info, nil
}

// vacuumInto writes a copy of the store at path to a new temporary file
// beside dest, calling opts.Progress meanwhile, and returns its name.
func vacuumInto(ctx context.Context, path, dest string, opts BackupOptions) (string, error) {
	// VACUUM INTO writes to a file that does not exist or is empty.
	f, err := os.CreateTemp(filepath.Dir(dest), filepath.Base(dest)+".partial-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	db, err := sql.Open("sqlite", dsn(path, "_pragma=busy_timeout(5000)"))
	if err != nil {
		return "", err
	}
	defer db.Close()
	if opts.Progress != nil {
		var total int64
		if fi, err := os.Stat(path); err == nil {
			total = fi.Size()
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			total += fi.Size()
		}
		every := opts.ProgressEvery
		if every <= 0 {
			every = time.Second
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					if fi, err := os.Stat(tmp); err == nil {
						opts.Progress(fi.Size(), total)
					}
				}
			}
		}()
	}
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return "", err
	}
	ok = true
	return tmp, nil
}

// checkCopy checks the copy at path, syncs it and returns what it holds.
func checkCopy(ctx context.Context, path string) (BackupInfo, error) {
	var info BackupInfo
	db, err := sql.Open("sqlite", dsn(path, "mode=ro"))
	if err != nil {
		return info, err
	}
	defer db.Close()
	if err := checkLayout(ctx, db, path); err != nil {
		return info, err
	}
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return info, err
	}
	if check != "ok" {
		return info, fmt.Errorf("quick_check: %s", check)
	}
	var steps, logged int64
	err = db.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM docs), (SELECT count(*) FROM steps), (SELECT count(*) FROM log)").
		Scan(&info.Docs, &steps, &logged)
	if err != nil {
		return info, err
	}
	info.Steps = steps + logged
	f, err := os.Open(path)
	if err != nil {
		return info, err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return info, err
	}
	fi, err := f.Stat()
	if err != nil {
		return info, err
	}
	info.Bytes = fi.Size()
	return info, nil
}

// checkUnused checks that no connection has the store at path open, by
// locking it exclusively for a moment.
func checkUnused(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", dsn(path, "_pragma=busy_timeout(0)", "_pragma=locking_mode(EXCLUSIVE)"))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "BEGIN EXCLUSIVE; ROLLBACK"); err != nil {
		return fmt.Errorf("%s is in use (stop the server first): %w", path, err)
	}
	return nil
}

// syncDir syncs the directory dir, so that a new name in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
