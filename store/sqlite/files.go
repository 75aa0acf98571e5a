package sqlite

import (
	"fmt"
	"os"
	"sync"
)

// files watches the identity of the database file and its write-ahead
// log. SQLite keeps writing to the files it opened: when an operator
// deletes or replaces one of them under a running server, writes would
// still be acknowledged, into a file that no longer exists at its path, and
// be lost at the next restart. So every batch of writes checks first that
// both paths still name the files opened, and once they do not, every
// write fails (and Check says why) until the store is reopened.
type files struct {
	db, wal string
	dbInfo  os.FileInfo
	walInfo os.FileInfo

	mu  sync.Mutex
	err error // sticky: the first change seen
	// walOnly is set with err when the database file is still the one
	// opened and only the write-ahead log changed.
	walOnly bool
	// rescued is set once the writer copied the open log into the
	// database file (Store.rescue).
	rescued bool
}

// watchFiles records the identity of the files at path and path-wal, which
// the store has just opened.
func watchFiles(path string) (*files, error) {
	f := &files{db: path, wal: path + "-wal"}
	var err error
	if f.dbInfo, err = os.Stat(f.db); err != nil {
		return nil, err
	}
	if f.walInfo, err = os.Stat(f.wal); err != nil {
		return nil, fmt.Errorf("the write-ahead log: %w", err)
	}
	return f, nil
}

// check returns nil while both paths name the files opened, and an error
// saying which was deleted or replaced otherwise (and ever after).
func (f *files) check() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	for _, file := range []struct {
		what, path string
		info       os.FileInfo
	}{{"database file", f.db, f.dbInfo}, {"write-ahead log", f.wal, f.walInfo}} {
		now, err := os.Stat(file.path)
		switch {
		case err != nil:
			f.err = fmt.Errorf("store: the %s %s was deleted while open (%v): writes refused until the server restarts", file.what, file.path, err)
		case !os.SameFile(now, file.info):
			f.err = fmt.Errorf("store: the %s %s was replaced while open: writes refused until the server restarts", file.what, file.path)
		}
		if f.err != nil {
			f.walOnly = file.path == f.wal
			return f.err
		}
	}
	return nil
}
