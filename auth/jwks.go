package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// The defaults of a JWKS's fetching (Config).
const (
	DefaultJWKSTimeout    = 5 * time.Second
	DefaultJWKSMinRefresh = time.Minute
	DefaultJWKSMaxAge     = time.Hour
	// MaxJWKSBytes bounds a key set's body.
	MaxJWKSBytes = 1 << 20
	// MaxJWKSKeys bounds the keys of a key set.
	MaxJWKSKeys = 100
)

// errNoSigningKey is a key set that answers, but without a key this
// server verifies with: its tokens' keys are unknown, not unavailable.
var errNoSigningKey = errors.New("no signature key this server verifies with")

// jwks is a JSON Web Key Set fetched from a URL: fetched when first
// needed, again once older than maxAge or when a token names a key it
// lacks, but never twice within minRefresh, so that tokens with made-up
// key ids cannot make it hammer the URL.
type jwks struct {
	url        string
	client     *http.Client
	timeout    time.Duration
	minRefresh time.Duration
	maxAge     time.Duration
	now        func() time.Time

	keys atomic.Pointer[jwksKeys]

	mu      sync.Mutex // serializes fetches; guards tried and failed
	tried   time.Time  // the last fetch's start (zero: never)
	failed  error      // why the last fetch failed (nil: it succeeded)
	fetches atomic.Int64
}

// jwksKeys are the keys of one successful fetch.
type jwksKeys struct {
	keys    []Key
	fetched time.Time
}

// current returns the keys, fetching them first when they were never
// fetched or are older than maxAge (as far as the rate allows).
func (j *jwks) current(ctx context.Context) ([]Key, error) {
	k := j.keys.Load()
	if k != nil && j.now().Sub(k.fetched) < j.maxAge {
		return k.keys, nil
	}
	return j.refresh(ctx)
}

// refresh fetches the keys unless the last fetch started less than
// minRefresh ago, and returns the keys it has then, with the error of the
// last fetch when it failed. A failed fetch keeps the keys of the last
// one that succeeded.
func (j *jwks) refresh(ctx context.Context) ([]Key, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	err := j.failed
	if j.tried.IsZero() || now.Sub(j.tried) >= j.minRefresh {
		j.tried = now
		var keys []Key
		if keys, err = j.fetch(ctx); err == nil {
			j.keys.Store(&jwksKeys{keys: keys, fetched: now})
		}
		j.failed = err
	} else if err != nil {
		err = fmt.Errorf("%w (%v ago; fetched again at most every %v)", err, now.Sub(j.tried).Round(time.Millisecond), j.minRefresh)
	}
	if k := j.keys.Load(); k != nil {
		return k.keys, err
	}
	return nil, err
}

// fetch gets the key set, within the timeout whatever ctx says (a
// request that goes away does not spoil the fetch for the others).
func (j *jwks) fetch(ctx context.Context) ([]Key, error) {
	j.fetches.Add(1)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, fmt.Errorf("key set %s: %w", j.url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("key set %s: status %s", j.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("key set %s: %w", j.url, err)
	}
	if len(body) > MaxJWKSBytes {
		return nil, fmt.Errorf("key set %s: larger than %d bytes", j.url, MaxJWKSBytes)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("key set %s: not a JWKS: %w", j.url, err)
	}
	if len(set.Keys) > MaxJWKSKeys {
		return nil, fmt.Errorf("key set %s: %d keys, more than %d", j.url, len(set.Keys), MaxJWKSKeys)
	}
	var keys []Key
	for _, raw := range set.Keys {
		// A key of a type or algorithm this package does not verify with
		// is skipped, not an error: a set may serve other programs too.
		var jk jose.JSONWebKey
		if jk.UnmarshalJSON(raw) != nil {
			continue
		}
		if k, ok := jwkKey(jk); ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("key set %s: %w", j.url, errNoSigningKey)
	}
	return keys, nil
}
