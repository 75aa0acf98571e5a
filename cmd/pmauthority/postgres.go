package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/store/postgres"
)

// postgresURLEnv is the environment variable that gives --postgres-url
// when the flag is not set, keeping a password off the command line.
const postgresURLEnv = "PMA_POSTGRES_URL"

// postgresOpenTimeout bounds connecting and migrating at start.
const postgresOpenTimeout = 30 * time.Second

// postgresFlags are the flags of --store postgres.
type postgresFlags struct {
	url              string
	pool             int
	statementTimeout time.Duration
}

// register defines the flags on fs.
func (f *postgresFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "postgres-url", "", "`URL` of the PostgreSQL database of --store postgres (postgres://user@host:5432/db?sslmode=verify-full, or key=value words as libpq takes). Default: the environment variable "+postgresURLEnv+", which keeps a password off the command line")
	fs.IntVar(&f.pool, "postgres-pool", 10, "most connections to PostgreSQL of --store postgres (one more listens for the other servers' changes)")
	fs.DurationVar(&f.statementTimeout, "postgres-statement-timeout", 30*time.Second, "a PostgreSQL statement of --store postgres running longer is cancelled and its request answers 503 (0: no limit)")
}

// check checks the flags, taking the URL from the environment when the
// flag is not set; used tells whether --store is postgres.
func (f *postgresFlags) check(used bool) error {
	if f.pool <= 0 {
		return errors.New("--postgres-pool must be positive")
	}
	if f.statementTimeout < 0 {
		return errors.New("--postgres-statement-timeout must not be negative")
	}
	if f.url == "" {
		f.url = os.Getenv(postgresURLEnv)
	}
	if used && f.url == "" {
		return fmt.Errorf("--store postgres needs the database's URL: --postgres-url or the environment variable %s", postgresURLEnv)
	}
	return nil
}

// open opens the PostgreSQL store, its commits told to obs (when not
// nil), returning a description of the database without its password.
func (f *postgresFlags) open(logger *slog.Logger, obs store.CommitObserver) (store.Store, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), postgresOpenTimeout)
	defer cancel()
	st, err := postgres.Open(ctx, f.url, postgres.Options{
		MaxConns:         int32(min(f.pool, 1<<20)),
		StatementTimeout: f.statementTimeout,
		Logger:           logger,
		Observer:         obs,
	})
	if err != nil {
		return nil, "", fmt.Errorf("--store postgres: %w", err)
	}
	return st, st.Where(), nil
}
