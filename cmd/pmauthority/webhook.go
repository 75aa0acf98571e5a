package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/pmauthority/pmauthority/collab"
	"github.com/pmauthority/pmauthority/store"
	"github.com/pmauthority/pmauthority/webhook"
)

// webhookFlags are the change-notice flags of `pmauthority serve`.
type webhookFlags struct {
	url, secretFile     string
	includeDoc          bool
	debounce, maxDelay  time.Duration
	timeout, maxBackoff time.Duration
	maxPending          int
}

// register adds the flags to fs.
func (f *webhookFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "webhook", "", "after changes are durable, POST {\"doc\", \"version\", \"updated\"} per document to `URL`, debounced, signed (X-Pmauthority-Signature: sha256=HMAC of the body; and Standard Webhooks' webhook-id, webhook-timestamp, webhook-signature), retried with back-off (docs/operations.md)")
	fs.StringVar(&f.secretFile, "webhook-secret-file", "", "the HMAC-SHA256 key of --webhook's signatures is in `FILE` (required with --webhook; trailing whitespace ignored)")
	fs.BoolVar(&f.includeDoc, "webhook-include-doc", false, "add the document's JSON to each --webhook notice (\"document\")")
	fs.DurationVar(&f.debounce, "webhook-debounce", webhook.DefaultDebounce, "send a document's --webhook notice once it has not changed for this long")
	fs.DurationVar(&f.maxDelay, "webhook-max-delay", webhook.DefaultMaxDelay, "send a document's --webhook notice at most this long after its first unsent change, even while it keeps changing")
	fs.DurationVar(&f.timeout, "webhook-timeout", webhook.DefaultTimeout, "time allowed for one --webhook delivery; a failed one is retried after 1s, then twice as long each time")
	fs.DurationVar(&f.maxBackoff, "webhook-max-backoff", webhook.DefaultMaxBackoff, "longest wait between two attempts at a --webhook notice")
	fs.IntVar(&f.maxPending, "webhook-max-pending", webhook.DefaultMaxPending, "most documents with a --webhook notice not yet delivered; a change to one more is dropped and logged")
}

// check checks the flags against each other.
func (f *webhookFlags) check() error {
	if f.url == "" {
		if f.secretFile != "" || f.includeDoc {
			return errors.New("--webhook-secret-file and --webhook-include-doc need --webhook")
		}
		return nil
	}
	if f.secretFile == "" {
		return errors.New("--webhook needs --webhook-secret-file: its notices are signed")
	}
	for name, v := range map[string]time.Duration{"webhook-debounce": f.debounce, "webhook-max-delay": f.maxDelay,
		"webhook-timeout": f.timeout, "webhook-max-backoff": f.maxBackoff} {
		if v <= 0 {
			return fmt.Errorf("--%s must be positive", name)
		}
	}
	if f.maxPending <= 0 {
		return errors.New("--webhook-max-pending must be positive")
	}
	return nil
}

// config returns the webhook configuration of the flags, reading the
// secret file (nil without --webhook).
func (f *webhookFlags) config(logger *slog.Logger) (*webhook.Config, error) {
	if f.url == "" {
		return nil, nil
	}
	secret, err := os.ReadFile(f.secretFile)
	if err != nil {
		return nil, fmt.Errorf("--webhook-secret-file: %w", err)
	}
	secret = bytes.TrimRight(secret, " \t\r\n")
	if len(secret) == 0 {
		return nil, fmt.Errorf("--webhook-secret-file: %s is empty", f.secretFile)
	}
	cfg := &webhook.Config{URL: f.url, Secret: secret, Debounce: f.debounce, MaxDelay: f.maxDelay,
		Timeout: f.timeout, MaxBackoff: f.maxBackoff, MaxPending: f.maxPending, Logger: logger}
	// New checks the URL.
	s, err := webhook.New(*cfg)
	if err != nil {
		return nil, err
	}
	s.Close(context.Background())
	return cfg, nil
}

// openWebhook starts the Sender of cfg, or returns nil for none; with
// includeDoc its notices carry the document, read from the authority
// that *auth points to once it is open or, once it is closed (the
// notices delivered on the way out), from the snapshot that closing it
// left in st.
func openWebhook(cfg *webhook.Config, includeDoc bool, auth **collab.Authority, st store.Store) (*webhook.Sender, error) {
	if cfg == nil {
		return nil, nil
	}
	c := *cfg
	if includeDoc {
		c.Document = func(ctx context.Context, id string) (int64, []byte, error) {
			a := *auth
			// Get would create a document deleted meanwhile.
			ok, err := a.Exists(ctx, id)
			if errors.Is(err, collab.ErrClosed) {
				h, err := st.Load(ctx, id)
				if err != nil {
					return 0, nil, err
				}
				if h.Snapshot.Version != h.Version {
					return 0, nil, fmt.Errorf("document %q: no snapshot at its version %d", id, h.Version)
				}
				return h.Version, h.Snapshot.Doc, nil
			}
			if err != nil || !ok {
				if err == nil {
					err = fmt.Errorf("document %q: %w", id, collab.ErrNotFound)
				}
				return 0, nil, err
			}
			state, err := a.Get(ctx, id, "")
			return state.Version, state.DocJSON, err
		}
	}
	return webhook.New(c)
}

// redactURL returns u with the password of its user info, if any, hidden.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Redacted()
}
