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
	"time"

	"github.com/pmauthority/pmauthority/server"
)

// The defaults of the webhook (Config).
const (
	DefaultWebhookTimeout = 5 * time.Second
	DefaultWebhookMaxTTL  = 5 * time.Minute
	// maxWebhookAnswer bounds the webhook's answer, in bytes.
	maxWebhookAnswer = 64 << 10
)

// errWebhook is the error of a failed webhook call (it denies: 403).
var errWebhook = fmt.Errorf("%w: the auth webhook failed", server.ErrForbidden)

// webhook asks an app's endpoint who a token is and what role it has on
// a document, caching the answers for their ttl.
type webhook struct {
	url      string
	client   *http.Client
	maxBytes int
	timeout  time.Duration
	maxTTL   time.Duration
	now      func() time.Time
	log      *slog.Logger
	answers  *lru[hookKey, hookAnswer]
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
	until     time.Time // cached until
}

// hookIdentity is a principal that the webhook authenticated: its token
// and the answer for the document of its request ("" for none).
type hookIdentity struct {
	token string
	key   [sha256.Size]byte
	doc   string
	role  Role
}

// newWebhook returns the webhook of cfg (with its defaults).
func newWebhook(cfg Config) (*webhook, error) {
	if !strings.HasPrefix(cfg.Webhook, "https://") && !strings.HasPrefix(cfg.Webhook, "http://") {
		return nil, fmt.Errorf("auth webhook %s: want an http:// or https:// URL", quote(cfg.Webhook))
	}
	return &webhook{url: cfg.Webhook, client: cfg.HTTPClient, maxBytes: cfg.MaxTokenBytes, timeout: cfg.WebhookTimeout, maxTTL: cfg.WebhookMaxTTL,
		now: cfg.Now, log: cfg.Logger, answers: newLRU[hookKey, hookAnswer](cfg.CacheSize)}, nil
}

// authenticate asks the webhook about c's token and the document of c's
// request, action "".
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
	id.role = ans.role
	return server.Principal{ID: ans.sub, Name: ans.name, Data: &session{hook: id}}, nil
}

// authorize grants sub a on doc when the webhook's role is at least
// need.
func (w *webhook) authorize(ctx context.Context, sub string, id *hookIdentity, doc string, a server.Action, need Role) error {
	role := id.role
	if doc != id.doc {
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
	if doc == id.doc {
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
	k := hookKey{id.key, doc}
	if ans, ok := w.answers.get(k); ok {
		if w.now().Before(ans.until) {
			return ans, nil
		}
		w.answers.remove(k)
	}
	ans, ttl, err := w.ask(ctx, id.token, doc, a)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, server.ErrUnauthenticated) {
			w.log.Warn("auth: webhook failed: denied", "doc", doc, "action", string(a), "err", err)
			err = errWebhook
		}
		return hookAnswer{}, err
	}
	if ttl > 0 {
		ans.until = w.now().Add(ttl)
		w.answers.put(k, ans)
	}
	return ans, nil
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
