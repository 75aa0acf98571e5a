package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/pmauthority/pmauthority/server"
)

// Config configures a Policy. Give it keys (Keys, JWKSURL) to verify
// JWTs, or a Webhook to ask; zero fields take the defaults.
type Config struct {
	// Keys verify tokens: SecretKey for HS256, ParsePEM for public keys
	// (several for a rotation).
	Keys []Key
	// JWKSURL is the URL of a JSON Web Key Set to verify tokens with
	// besides Keys (its keys' "kid" chosen by the tokens' "kid").
	JWKSURL string
	// JWKSTimeout bounds one fetch of the key set (0 means
	// DefaultJWKSTimeout).
	JWKSTimeout time.Duration
	// JWKSMinRefresh is the least time between two fetches of the key
	// set, however many tokens name unknown keys (0 means
	// DefaultJWKSMinRefresh).
	JWKSMinRefresh time.Duration
	// JWKSMaxAge is how long fetched keys are used before the set is
	// fetched again (0 means DefaultJWKSMaxAge).
	JWKSMaxAge time.Duration
	// Issuer and Audience, when set, must be a token's "iss" and one of
	// its "aud".
	Issuer, Audience string
	// ClockSkew is the leeway given to "exp", "nbf" and "iat" (0 means
	// DefaultClockSkew; negative, none).
	ClockSkew time.Duration
	// MaxTokenBytes bounds a token's length (0 means
	// DefaultMaxTokenBytes); a longer one is refused with 401.
	MaxTokenBytes int
	// CacheSize bounds how many verified tokens (or webhook answers) are
	// kept, so that requests with the same token are not verified again
	// (0 means DefaultCacheSize).
	CacheSize int

	// Webhook is the URL of an app's endpoint that decides instead of
	// tokens' claims (see Policy); it excludes Keys and JWKSURL.
	Webhook string
	// WebhookTimeout bounds one call of the webhook (0 means
	// DefaultWebhookTimeout).
	WebhookTimeout time.Duration
	// WebhookMaxTTL caps the "ttl" of the webhook's answers (0 means
	// DefaultWebhookMaxTTL); a WebSocket whose answer had ttl 0 asks
	// again after it.
	WebhookMaxTTL time.Duration
	// WebhookRefusalTTL is how long a token that the webhook refused
	// (401, or no "sub") is refused without asking again (0 means
	// DefaultWebhookRefusalTTL; negative, not at all).
	WebhookRefusalTTL time.Duration
	// WebhookMaxCalls bounds the webhook calls in flight at once
	// (requests for the same token, document and action share one); 0
	// means DefaultWebhookMaxCalls.
	WebhookMaxCalls int
	// WebhookWait is how long a call waits for a free one of those
	// before its request is answered 503 with Retry-After (0 means
	// DefaultWebhookWait).
	WebhookWait time.Duration

	// ProtectApply requires a valid token (of any role) for the
	// stateless apply endpoint and its schema list (server.ActionApply),
	// which are otherwise open.
	ProtectApply bool

	// HTTPClient fetches the key set and calls the webhook (nil means a
	// client of its own).
	HTTPClient *http.Client
	// Logger gets the refusals (INFO, never with the token) and the
	// failures of the key set and the webhook (WARN); nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock (nil means time.Now).
	Now func() time.Time
}

// DefaultCacheSize is the default Config.CacheSize.
const DefaultCacheSize = 10_000

// withDefaults returns cfg with its zero fields set to the defaults.
func (cfg Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.JWKSTimeout, DefaultJWKSTimeout)
	def(&cfg.JWKSMinRefresh, DefaultJWKSMinRefresh)
	def(&cfg.JWKSMaxAge, DefaultJWKSMaxAge)
	def(&cfg.WebhookTimeout, DefaultWebhookTimeout)
	def(&cfg.WebhookMaxTTL, DefaultWebhookMaxTTL)
	def(&cfg.WebhookRefusalTTL, DefaultWebhookRefusalTTL)
	def(&cfg.WebhookWait, DefaultWebhookWait)
	if cfg.WebhookMaxCalls <= 0 {
		cfg.WebhookMaxCalls = DefaultWebhookMaxCalls
	}
	switch {
	case cfg.ClockSkew == 0:
		cfg.ClockSkew = DefaultClockSkew
	case cfg.ClockSkew < 0:
		cfg.ClockSkew = 0
	}
	if cfg.MaxTokenBytes <= 0 {
		cfg.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a key set or a webhook answers itself
		}}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// Policy is a server.Policy of tokens. Authenticate verifies the token
// of a request or a WebSocket hello (cached until it expires); Authorize
// grants an action by the role the token's "docs" claim gives on the
// document:
//
//	server.ActionRead     read (without a document: GET /docs, any valid
//	                      token, which lists only what it may read)
//	server.ActionComment  comment
//	server.ActionSuggest  suggest
//	server.ActionEdit     edit
//	server.ActionCreate   edit
//	server.ActionAdmin    admin
//	server.ActionApply    open; a valid token with Config.ProtectApply
//	server.ActionPage     open
//	server.ActionHealth   open
//
// A request without a token, or with one that fails verification, is
// anonymous: the open actions are granted to it, and the others refused
// with the token's error (401, ErrNoToken when there is none). A valid
// token without the role is refused with server.ErrForbidden (403).
//
// With Config.Webhook the webhook decides instead of claims: Policy
// POSTs {"token", "doc", "action"} to it and takes {"sub", "name",
// "role", "ttl"} back (role on doc, ttl in seconds to cache the answer;
// see docs/auth.md). Its principals expire when the answer's ttl runs
// out (Principal.Expires: a WebSocket asks again then), its refusals of
// a token are cached for Config.WebhookRefusalTTL, and at most
// Config.WebhookMaxCalls calls are in flight (past them, after
// Config.WebhookWait, an error matching ErrUnavailable: 503).
type Policy struct {
	verifier     *Verifier // nil with a webhook
	hook         *webhook  // nil without
	sessions     *lru[[sha256.Size]byte, *session]
	protectApply bool
	skew         time.Duration
	log          *slog.Logger
	now          func() time.Time
}

// session is what a token authenticated: the server.Principal's Data.
type session struct {
	claims *Claims
	err    error         // why the token was refused (claims nil)
	hook   *hookIdentity // with a webhook: the token's identity
}

// New returns the Policy of cfg.
func New(cfg Config) (*Policy, error) {
	cfg = cfg.withDefaults()
	p := &Policy{
		sessions:     newLRU[[sha256.Size]byte, *session](cfg.CacheSize),
		protectApply: cfg.ProtectApply,
		skew:         cfg.ClockSkew,
		log:          cfg.Logger,
		now:          cfg.Now,
	}
	if cfg.Webhook != "" {
		if len(cfg.Keys) > 0 || cfg.JWKSURL != "" {
			return nil, errors.New("an auth webhook decides alone: give it without JWT keys")
		}
		var err error
		if p.hook, err = newWebhook(cfg); err != nil {
			return nil, err
		}
		return p, nil
	}
	var err error
	if p.verifier, err = NewVerifier(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// Authenticate returns the principal of c's token: the anonymous
// server.Principal when there is none, else one whose ID and Name are
// the token's "sub" and "name" and whose Expires is its "exp". A token
// that fails verification gives a principal that Authorize refuses, with
// the failure, every action but the open ones. Authenticate returns no
// error but the context's.
func (p *Policy) Authenticate(ctx context.Context, c server.Credentials) (server.Principal, error) {
	if c.Token == "" {
		return server.Principal{}, nil
	}
	if p.hook != nil {
		return p.hook.authenticate(ctx, c)
	}
	key := sha256.Sum256([]byte(c.Token))
	if s, ok := p.sessions.get(key); ok {
		if p.now().Before(s.claims.Expires.Add(p.skew)) {
			return s.principal(), nil
		}
		p.sessions.remove(key)
	}
	claims, err := p.verifier.Verify(ctx, c.Token)
	if err != nil {
		if ctx.Err() != nil {
			return server.Principal{}, ctx.Err()
		}
		return server.Principal{Data: &session{err: err}}, nil
	}
	s := &session{claims: claims}
	p.sessions.put(key, s)
	return s.principal(), nil
}

// principal returns the server.Principal of a verified token.
func (s *session) principal() server.Principal {
	return server.Principal{ID: s.claims.Subject, Name: s.claims.Name, Expires: s.claims.Expires, Data: s}
}

// required returns the role that action a needs, false for the open
// actions (ok: false for an unknown action, which nobody may do).
func (p *Policy) required(a server.Action) (r Role, needed, ok bool) {
	switch a {
	case server.ActionRead:
		return RoleRead, true, true
	case server.ActionComment:
		return RoleComment, true, true
	case server.ActionSuggest:
		return RoleSuggest, true, true
	case server.ActionEdit, server.ActionCreate:
		return RoleEdit, true, true
	case server.ActionAdmin:
		return RoleAdmin, true, true
	case server.ActionApply:
		return RoleNone, p.protectApply, true
	case server.ActionPage, server.ActionHealth:
		return RoleNone, false, true
	}
	return RoleNone, true, false
}

// Authorize grants pr action a on the document docID ("" for routes of
// no one document) by the role its token gives there (see Policy).
func (p *Policy) Authorize(ctx context.Context, pr server.Principal, docID string, a server.Action) error {
	need, needed, known := p.required(a)
	if !needed {
		return nil
	}
	s, _ := pr.Data.(*session)
	var err error
	switch {
	case !known:
		err = fmt.Errorf("%w: unknown action %s", server.ErrForbidden, quote(string(a)))
	case s == nil:
		err = ErrNoToken
	case s.err != nil:
		err = s.err
	case s.hook != nil:
		err = p.hook.authorize(ctx, pr.ID, s.hook, docID, a, need)
	case !p.now().Before(s.claims.Expires.Add(p.skew)):
		err = fmt.Errorf("%w at %s", ErrExpired, s.claims.Expires.UTC().Format(time.RFC3339))
	case need == RoleNone || docID == "" && (a == server.ActionRead || a == server.ActionCreate):
		// A valid token: the apply endpoint, the list of documents
		// (MayRead filters it), or POST /docs before its body names the
		// document (authorized for it then).
	default:
		if got := s.claims.Docs.Role(docID); got < need {
			err = forbidden(pr.ID, docID, a, got)
		}
	}
	if err != nil && ctx.Err() == nil {
		p.log.Info("auth: refused", "sub", pr.ID, "doc", docID, "action", string(a), "reason", err.Error())
	}
	return err
}

// forbidden is the error of a principal whose role on docID is too low
// for a.
func forbidden(sub, docID string, a server.Action, got Role) error {
	if got == RoleNone {
		return fmt.Errorf("%w: %s has no role on document %s (%s needs a token granting it)", server.ErrForbidden, quote(sub), quote(docID), a)
	}
	return fmt.Errorf("%w: %s has role %s on document %s, which does not allow %s", server.ErrForbidden, quote(sub), got, quote(docID), a)
}

// MayRead reports whether pr may read the document docID (GET /docs
// lists only those: server.ReadFilter).
func (p *Policy) MayRead(pr server.Principal, docID string) bool {
	s, _ := pr.Data.(*session)
	switch {
	case s == nil || s.err != nil:
		return false
	case s.hook != nil:
		return p.hook.mayList(s.hook)
	}
	return s.claims.Docs.Role(docID) >= RoleRead
}

// RoleOf returns the role pr has on the document docID (RoleNone for an
// anonymous or refused principal, and with a webhook for a document it
// was not asked about yet).
func (p *Policy) RoleOf(pr server.Principal, docID string) Role {
	s, _ := pr.Data.(*session)
	switch {
	case s == nil || s.err != nil:
		return RoleNone
	case s.hook != nil:
		return p.hook.cachedRole(s.hook, docID)
	}
	return s.claims.Docs.Role(docID)
}
