package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"

	sqlite3 "modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"

	"github.com/pmauthority/pmauthority/store"
)

// DefaultReserve is Options.Reserve's default, 16 MiB: more than the
// write-ahead log holds between two automatic checkpoints (1000 pages,
// 4 MiB) and a large batch, which is what a checkpoint after a Delete on
// a full disk may add to the database file.
const DefaultReserve = 16 << 20

// reserveEvery is how many batches the writer lets pass between tries to
// allocate its reserve again when it has none (see writer.maintain).
const reserveEvery = 64

// The reserve is a file of Options.Reserve bytes next to the database
// (its path plus "-reserve"), allocated on disk. Every write needs room
// on disk, a delete too: for its frames in the write-ahead log, and for
// the pages that checkpointing the log adds to the database file. So on
// a full disk a Delete would fail like the writes it is meant to make
// room for. A Delete that fails for a full disk removes the reserve and
// runs again alone. After every Delete the writer gives the pages it
// freed back to the file system (shrink), with the reserve's room if it
// needs more, and then allocates the reserve again, as it tries every
// reserveEvery batches while it has none.
//
// Files made before auto_vacuum was set (PRAGMA auto_vacuum is NONE)
// cannot shrink without a VACUUM: for them the writer only checkpoints
// the log after a Delete, so that the next writes start it over and fill
// the freed pages within the room the log's file has.

// reserve allocates w's reserve when it has none. It fails quietly: a
// store without its reserve works, only a Delete on a full disk needs it.
func (w *writer) reserve() {
	if w.reserved || w.reserveSize <= 0 {
		return
	}
	f, err := os.OpenFile(w.reservePath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	err = allocate(f, w.reserveSize)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(w.reservePath)
		return
	}
	w.reserved = true
}

// releaseReserve removes w's reserve, giving its room to the file system.
func (w *writer) releaseReserve() {
	if err := os.Remove(w.reservePath); err == nil || errors.Is(err, os.ErrNotExist) {
		w.reserved = false
	}
}

// diskFull reports whether err is SQLite's "database or disk is full".
func diskFull(err error) bool {
	var serr *sqlite3.Error
	return errors.As(err, &serr) && serr.Code()&0xff == sqlitelib.SQLITE_FULL
}

// deleteOnFullDisk runs Delete's operation alone, after removing the
// reserve, for a Delete that failed for a full disk.
func (s *Store) deleteOnFullDisk(ctx context.Context, id string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed.Load() {
		return store.ErrClosed
	}
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := s.files.check(); err != nil {
		return err
	}
	w.releaseReserve()
	errs := make([]error, 1)
	w.commit([]*op{{ctx: ctx, run: deleteOp(id)}}, errs)
	if errs[0] != nil {
		w.reserve()
		return fmt.Errorf("with the reserve released: %w", errs[0])
	}
	return nil
}

// settle runs after a Delete: it gives the pages that the delete freed
// back to the file system, or with an older file checkpoints the whole
// write-ahead log, using the reserve's room if it needs it, and then
// allocates the reserve again if it can.
func (s *Store) settle() {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed.Load() {
		return
	}
	w := s.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.files.check() != nil {
		return
	}
	if w.incremental {
		w.shrink(shrinkSteps)
	} else if err := w.checkpointAll("RESTART"); diskFull(err) && w.reserved {
		w.releaseReserve()
		_ = w.checkpointAll("RESTART") // readers in other processes may keep it from finishing
	}
	w.reserve()
}

// settle takes at most shrinkSteps steps of shrink, and maintain one per
// batch for the rest; a step that finds no room for its frames in the
// write-ahead log moves fewer pages, down to minShrink.
const (
	shrinkSteps = 8
	minShrink   = 8
)

// shrink gives free pages of the database back to the file system, in at
// most steps steps: each moves the pages in use from the end of the file
// into free ones and cuts off the free end (PRAGMA incremental_vacuum),
// then checkpoints the write-ahead log, truncating it. A step takes all
// the free pages, or half as many again and again when the log has no
// room for the moves, after releasing the reserve. It clears
// w.shrinking once no page is free, and when it fails (the next Delete
// tries again).
func (w *writer) shrink(steps int) {
	ctx := context.Background()
	w.shrinking = false
	for range steps {
		var free int64
		if err := w.conn.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
			return
		}
		if free == 0 {
			return
		}
		for n := free; ; {
			_, err := w.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", n))
			if err == nil {
				break
			}
			switch {
			case !diskFull(err):
				return
			case w.reserved:
				w.releaseReserve()
			case n <= minShrink:
				return
			default:
				n /= 2
			}
		}
		err := w.checkpointAll("TRUNCATE")
		if diskFull(err) && w.reserved {
			w.releaseReserve()
			err = w.checkpointAll("TRUNCATE")
		}
		if err != nil {
			return
		}
	}
	w.shrinking = true // more pages than steps took
}

// checkpointAll copies the whole write-ahead log into the database with
// new readers held off, by a checkpoint of mode RESTART or TRUNCATE (see
// boundWAL).
func (w *writer) checkpointAll(mode string) error {
	w.readers.Lock()
	defer w.readers.Unlock()
	var busy, logged, moved int
	err := w.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logged, &moved)
	if err == nil && busy != 0 {
		err = errors.New("checkpoint busy")
	}
	return err
}

// writeZeros writes n zero bytes to f from its start, and syncs it.
func writeZeros(f *os.File, n int64) error {
	buf := make([]byte, 64<<10)
	for off := int64(0); off < n; off += int64(len(buf)) {
		if _, err := f.WriteAt(buf[:min(int64(len(buf)), n-off)], off); err != nil {
			return err
		}
	}
	return f.Sync()
}
