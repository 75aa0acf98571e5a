package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pmauthority/pmauthority/server"
)

// The defaults of the webhook (Config).
const (
	DefaultWebhookTimeout = 5 * time.Second
	DefaultWebhookMaxTTL  = 5 * time.Minute
	// DefaultWebhookRefusalTTL is how long a token the webhook refused
	// (401) is refused without asking again.
	DefaultWebhookRefusalTTL = 5 * time.Second
	// DefaultWebhookMaxCalls bounds the webhook calls in flight at once.
	DefaultWebhookMaxCalls = 64
	// DefaultWebhookWait is how long a call waits for one of those.
	DefaultWebhookWait = time.Second
	// maxWebhookAnswer bounds the webhook's answer, in bytes.
	maxWebhookAnswer = 64 << 10
)

// errWebhook is the error of a failed webhook call (it denies: 403).
var errWebhook = fmt.Errorf("%w: the auth webhook failed", server.ErrForbidden)

// webhook asks an app's endpoint who a token is and what role it has on
// a document, caching the answers for their ttl and its refusals of a
// token for refusalTTL. Concurrent requests for the same answer share one
// call, and at most cap(slots) calls are in flight: a call that waits
// longer than wait for a slot fails with an error matching
// ErrUnavailable.
type webhook struct {
	url        string
	client     *http.Client
	maxBytes   int
	timeout    time.Duration
	maxTTL     time.Duration
	refusalTTL time.Duration
	wait       time.Duration
	now        func() time.Time
	log        *slog.Logger
	answers    *lru[hookKey, hookAnswer]
	refusals   *lru[[sha256.Size]byte, time.Time] // refused tokens, until
	slots      chan struct{}

	mu       sync.Mutex
	inflight map[flightKey]*flight
}

// flightKey is what concurrent requests share a call by.
type flightKey struct {
	hookKey
	action server.Action
}

// flight is a call of the webhook that requests wait for.
type flight struct {
	done chan struct{} // closed when ans and err are set
	ans  hookAnswer
	err  error
}

// hookKey is what an answer is cached by.
type hookKey struct {
	token [sha256.Size]byte
	doc   string
}

// hookAnswer is the webhook's answer for a token and a document.
type hookAnswer struct {
	sub, name string
	role      Role
	until     time.Time // cached until (zero: not cached, ttl 0)
}

// hookIdentity is a principal that the webhook authenticated: its token
// and the answer for the document of its request ("" for none), which
// holds until the answer's ttl runs out (for the whole request when its
// ttl was 0).
type hookIdentity struct {
	token string
	key   [sha256.Size]byte
	doc   string
	role  Role
	until time.Time // zero with ttl 0
}

// newWebhook returns the webhook of cfg (with its defaults).
func newWebhook(cfg Config) (*webhook, error) {
	if !strings.HasPrefix(cfg.Webhook, "https://") && !strings.HasPrefix(cfg.Webhook, "http://") {
		return nil, fmt.Errorf("auth webhook %s: want an http:// or https:// URL", quote(cfg.Webhook))
	}
	return &webhook{url: cfg.Webhook, client: cfg.HTTPClient, maxBytes: cfg.MaxTokenBytes, timeout: cfg.WebhookTimeout, maxTTL: cfg.WebhookMaxTTL,
		refusalTTL: cfg.WebhookRefusalTTL, wait: cfg.WebhookWait, now: cfg.Now, log: cfg.Logger,
		answers: newLRU[hookKey, hookAnswer](cfg.CacheSize), refusals: newLRU[[sha256.Size]byte, time.Time](cfg.CacheSize),
		slots: make(chan struct{}, cfg.WebhookMaxCalls), inflight: map[flightKey]*flight{}}, nil
}

// authenticate asks the webhook about c's token and the document of c's
// request, action "". The principal expires when the answer's ttl runs
// out (a WebSocket asks again then); an answer with ttl 0 holds for the
// request, and for a WebSocket until WebhookMaxTTL.
func (w *webhook) authenticate(ctx context.Context, c server.Credentials) (server.Principal, error) {
	if len(c.Token) > w.maxBytes {
		err := fmt.Errorf("%w (%d bytes, at most %d)", ErrTokenTooLong, len(c.Token), w.maxBytes)
		return server.Principal{Data: &session{err: err}}, nil
	}
	var doc string
	if c.Request != nil {
		doc = c.Request.PathValue("id")
	}
	id := &hookIdentity{token: c.Token, key: sha256.Sum256([]byte(c.Token)), doc: doc}
	ans, err := w.answer(ctx, id, doc, "")
	switch {
	case ctx.Err() != nil:
		return server.Principal{}, ctx.Err()
	case err != nil:
		return server.Principal{Data: &session{err: err}}, nil
	}
	id.role, id.until = ans.role, ans.until
	expires := ans.until
	if expires.IsZero() {
		expires = w.now().Add(w.maxTTL)
	}
	return server.Principal{ID: ans.sub, Name: ans.name, Expires: expires, Data: &session{hook: id}}, nil
}

// authorize grants sub a on doc when the webhook's role is at least
// need. The role of the principal's own document is asked again once
// its answer's ttl has run out.
func (w *webhook) authorize(ctx context.Context, sub string, id *hookIdentity, doc string, a server.Action, need Role) error {
	role := id.role
	if doc != id.doc || !id.until.IsZero() && !w.now().Before(id.until) {
		ans, err := w.answer(ctx, id, doc, a)
		if err != nil {
			return err
		}
		role = ans.role
	}
	if role < need {
		return forbidden(sub, doc, a, role)
	}
	return nil
}

// mayList reports whether the principal may list the documents: its
// role without a document (GET /docs asks the webhook with doc "").
func (w *webhook) mayList(id *hookIdentity) bool {
	return id.doc == "" && id.role >= RoleRead
}

// cachedRole returns the role of id on doc as far as it is known without
// a call.
func (w *webhook) cachedRole(id *hookIdentity, doc string) Role {
	if doc == id.doc && (id.until.IsZero() || w.now().Before(id.until)) {
		return id.role
	}
	if ans, ok := w.answers.get(hookKey{id.key, doc}); ok && w.now().Before(ans.until) {
		return ans.role
	}
	return RoleNone
}

// answer returns the webhook's answer for id's token on doc, cached or
// asked, with a as the action.
func (w *webhook) answer(ctx context.Context, id *hookIdentity, doc string, a server.Action) (hookAnswer, error) {
	if until, ok := w.refusals.get(id.key); ok {
		if w.now().Before(until) {
			return hookAnswer{}, ErrRefused
		}
		w.refusals.remove(id.key)
	}
	k := hookKey{id.key, doc}
	if ans, ok := w.answers.get(k); ok {
		if w.now().Before(ans.until) {
			return ans, nil
		}
		w.answers.remove(k)
	}
	ans, err := w.share(ctx, flightKey{k, a}, id.token)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, server.ErrUnauthenticated) && !errors.Is(err, ErrUnavailable) {
			w.log.Warn("auth: webhook failed: denied", "doc", doc, "action", string(a), "err", err)
			err = errWebhook
		}
		return hookAnswer{}, err
	}
	return ans, nil
}

// share returns the answer of the call for k, joining the one in flight
// if there is one, else making it. The call runs on its own, within the
// timeout, whatever ctx says (a request that goes away does not spoil it
// for the others); ctx ends only the wait.
func (w *webhook) share(ctx context.Context, k flightKey, token string) (hookAnswer, error) {
	w.mu.Lock()
	f, ok := w.inflight[k]
	if !ok {
		f = &flight{done: make(chan struct{})}
		w.inflight[k] = f
		go w.fly(k, f, token)
	}
	w.mu.Unlock()
	select {
	case <-f.done:
		return f.ans, f.err
	case <-ctx.Done():
		return hookAnswer{}, ctx.Err()
	}
}

// fly makes the call of f once a slot is free (or fails with a
// ErrUnavailable after wait), and caches its answer for its ttl, or the
// token's refusal for refusalTTL.
func (w *webhook) fly(k flightKey, f *flight, token string) {
	defer func() {
		w.mu.Lock()
		delete(w.inflight, k)
		w.mu.Unlock()
		close(f.done)
	}()
	t := time.NewTimer(w.wait)
	select {
	case w.slots <- struct{}{}:
		t.Stop()
	case <-t.C:
		f.err = &unavailableError{fmt.Sprintf("auth webhook busy: %d calls in flight, none free within %v (auth.Config.WebhookMaxCalls): try again later",
			cap(w.slots), w.wait)}
		return
	}
	ans, ttl, err := w.ask(context.Background(), token, k.doc, k.action)
	<-w.slots
	switch {
	case errors.Is(err, ErrRefused):
		if w.refusalTTL > 0 {
			w.refusals.put(k.token, w.now().Add(w.refusalTTL))
		}
	case err == nil && ttl > 0:
		ans.until = w.now().Add(ttl)
		w.answers.put(k.hookKey, ans)
	}
	f.ans, f.err = ans, err
}

// ask POSTs {"token", "doc", "action"} to the webhook and reads its
// answer {"sub", "name", "role", "ttl"}. A 401, or an answer without
// "sub", is an invalid token; any other status but 200 a failure.
func (w *webhook) ask(ctx context.Context, token, doc string, a server.Action) (hookAnswer, time.Duration, error) {
	body, err := json.Marshal(struct {
		Token  string `json:"token"`
		Doc    string `json:"doc"`
		Action string `json:"action"`
	}{token, doc, string(a)})
	if err != nil {
		return hookAnswer{}, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return hookAnswer{}, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return hookAnswer{}, 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookAnswer+1))
	switch {
	case err != nil:
		return hookAnswer{}, 0, err
	case resp.StatusCode == http.StatusUnauthorized:
		return hookAnswer{}, 0, ErrRefused
	case resp.StatusCode != http.StatusOK:
		return hookAnswer{}, 0, fmt.Errorf("status %s", resp.Status)
	case len(data) > maxWebhookAnswer:
		return hookAnswer{}, 0, fmt.Errorf("answer larger than %d bytes", maxWebhookAnswer)
	}
	var out struct {
		Sub  string   `json:"sub"`
		Name string   `json:"name"`
		Role string   `json:"role"`
		TTL  *float64 `json:"ttl"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return hookAnswer{}, 0, fmt.Errorf("answer is not {sub, name, role, ttl}: %w", err)
	}
	if out.Sub == "" {
		return hookAnswer{}, 0, ErrRefused
	}
	if len(out.Sub) > maxClaimBytes || len(out.Name) > maxClaimBytes {
		return hookAnswer{}, 0, fmt.Errorf("answer's sub or name longer than %d bytes", maxClaimBytes)
	}
	role := RoleNone
	if out.Role != "" && out.Role != "none" {
		if role, err = ParseRole(out.Role); err != nil {
			return hookAnswer{}, 0, fmt.Errorf("answer: %w", err)
		}
	}
	var ttl time.Duration
	if out.TTL != nil {
		if *out.TTL < 0 || math.IsNaN(*out.TTL) {
			return hookAnswer{}, 0, errors.New(`answer's "ttl" must be a number of seconds, at least 0`)
		}
		ttl = min(time.Duration(min(*out.TTL, 1e9)*float64(time.Second)), w.maxTTL)
	}
	return hookAnswer{sub: out.Sub, name: out.Name, role: role}, ttl, nil
}
