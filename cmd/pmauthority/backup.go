package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pmauthority/pmauthority/internal/bytesize"
	"github.com/pmauthority/pmauthority/store/sqlite"
)

const backupUsage = `usage: pmauthority backup [--data ./pmauthority-data] --to FILE

Writes a consistent copy of the SQLite store in --data (the file
pmauthority.db) to FILE, while a server may be running on it and writing:
the copy holds every step committed up to one moment and none after, each
document's log contiguous. FILE must not exist; it appears only once the
copy is complete and checked. The copy is a store: verify it with
pmauthority verify --data DIR after restoring it into DIR, or serve it the
same way (see pmauthority restore).

flags:
`

const restoreUsage = `usage: pmauthority restore --from FILE [--data ./pmauthority-data] [--force]

Copies a backup (FILE, written by pmauthority backup) into --data as its
store, pmauthority.db, for pmauthority serve --data to use. It refuses a
--data that holds a store unless --force, which replaces it; a server must
not be running on --data (restore checks that it can lock the store).

flags:
`

// runBackup runs `pmauthority backup`.
func runBackup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var data, to string
	var progress time.Duration
	fs.StringVar(&data, "data", "./pmauthority-data", "`directory` of the SQLite store to copy (as serve --data)")
	fs.StringVar(&to, "to", "", "the copy's `FILE` (must not exist)")
	fs.DurationVar(&progress, "progress", 2*time.Second, "how often to report progress on stderr while copying")
	fs.Usage = func() {
		fmt.Fprint(stderr, backupUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if to == "" {
		fmt.Fprintln(stderr, "pmauthority backup: --to is required")
		return 2
	}
	if progress <= 0 {
		fmt.Fprintln(stderr, "pmauthority backup: --progress must be positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	info, err := sqlite.Backup(ctx, filepath.Join(data, "pmauthority.db"), to, sqlite.BackupOptions{
		Progress:      progressPrinter(stderr, "pmauthority backup", start),
		ProgressEvery: progress,
	})
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "backed up %d documents, %d steps (%s) to %s in %v\n", info.Docs, info.Steps, bytesize.Format(info.Bytes), to, since(start))
	return 0
}

// runRestore runs `pmauthority restore`.
func runRestore(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var data, from string
	var force bool
	var progress time.Duration
	fs.StringVar(&from, "from", "", "the backup `FILE` to restore")
	fs.StringVar(&data, "data", "./pmauthority-data", "`directory` of the SQLite store to write (created if missing)")
	fs.BoolVar(&force, "force", false, "replace the store in --data when there is one")
	fs.DurationVar(&progress, "progress", 2*time.Second, "how often to report progress on stderr while copying")
	fs.Usage = func() {
		fmt.Fprint(stderr, restoreUsage)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if from == "" {
		fmt.Fprintln(stderr, "pmauthority restore: --from is required")
		return 2
	}
	if progress <= 0 {
		fmt.Fprintln(stderr, "pmauthority restore: --progress must be positive")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	path := filepath.Join(data, "pmauthority.db")
	info, err := sqlite.Restore(ctx, from, path, force, sqlite.BackupOptions{
		Progress:      progressPrinter(stderr, "pmauthority restore", start),
		ProgressEvery: progress,
	})
	if errors.Is(err, os.ErrExist) {
		fmt.Fprintf(stderr, "pmauthority restore: %s holds a store: stop its server, then use --force to replace it\n", path)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, "pmauthority restore:", err)
		return 1
	}
	fmt.Fprintf(stdout, "restored %d documents, %d steps (%s) from %s into %s in %v\n", info.Docs, info.Steps, bytesize.Format(info.Bytes), from, path, since(start))
	return 0
}

// parseFlags parses args with fs, returning false with the exit status
// when the command is not to run (-h: 0, bad flags: 2).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "pmauthority %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, false
	}
	return 0, true
}

// progressPrinter returns a BackupOptions.Progress that reports on w.
func progressPrinter(w io.Writer, prefix string, start time.Time) func(written, total int64) {
	return func(written, total int64) {
		fmt.Fprintf(w, "%s: %s written (the store is %s) after %v\n", prefix, bytesize.Format(written), bytesize.Format(total), since(start))
	}
}

// since returns the time since start, rounded for a message.
func since(start time.Time) time.Duration {
	return time.Since(start).Round(time.Millisecond)
}
