package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Claims are what a verified token says.
type Claims struct {
	// Subject is the principal ("sub").
	Subject string
	// Name is its display name ("name", "" when absent).
	Name string
	// Docs are the roles it has per document ("docs").
	Docs Grants
	// Expires is when the token expires ("exp").
	Expires time.Time
	// NotBefore and IssuedAt are "nbf" and "iat" (zero when absent).
	NotBefore, IssuedAt time.Time
	// Issuer and Audience are "iss" and "aud" (empty when absent).
	Issuer   string
	Audience []string
}

// The defaults of a Verifier (Config).
const (
	DefaultClockSkew     = 30 * time.Second
	DefaultMaxTokenBytes = 8 << 10
	// maxClaimBytes bounds "sub" and "name".
	maxClaimBytes = 256
)

// Verifier verifies tokens with a Config's keys. It is safe for
// concurrent use.
type Verifier struct {
	keys     []Key // the fixed keys
	set      *jwks // nil without a JWKS URL
	algs     []jose.SignatureAlgorithm
	issuer   string
	audience string
	skew     time.Duration
	maxBytes int
	now      func() time.Time
	log      *slog.Logger
}

// asymmetric are the algorithms that keys of a JWKS may have.
var asymmetric = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// NewVerifier returns a Verifier of cfg's keys (Keys, JWKSURL), with its
// issuer, audience, clock skew and token limit.
func NewVerifier(cfg Config) (*Verifier, error) {
	cfg = cfg.withDefaults()
	v := &Verifier{
		keys:     cfg.Keys,
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		skew:     cfg.ClockSkew,
		maxBytes: cfg.MaxTokenBytes,
		now:      cfg.Now,
		log:      cfg.Logger,
	}
	for i, k := range cfg.Keys {
		if err := k.check(); err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		if !slices.Contains(v.algs, k.Algorithm) {
			v.algs = append(v.algs, k.Algorithm)
		}
	}
	if cfg.JWKSURL != "" {
		if !strings.HasPrefix(cfg.JWKSURL, "https://") && !strings.HasPrefix(cfg.JWKSURL, "http://") {
			return nil, fmt.Errorf("JWKS URL %s: want an http:// or https:// URL", quote(cfg.JWKSURL))
		}
		v.set = &jwks{url: cfg.JWKSURL, client: cfg.HTTPClient, timeout: cfg.JWKSTimeout,
			minRefresh: cfg.JWKSMinRefresh, maxAge: cfg.JWKSMaxAge, now: cfg.Now}
		for _, a := range asymmetric {
			if !slices.Contains(v.algs, a) {
				v.algs = append(v.algs, a)
			}
		}
	}
	if len(v.algs) == 0 {
		return nil, errors.New("no key to verify tokens with: give a secret, a public key or a JWKS URL")
	}
	return v, nil
}

// header is the part of a token's header that chooses its key.
type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
}

// Verify checks token (a JWS in compact form): its size, its signature
// with the key its header chooses, its times with the clock skew, its
// issuer and audience when configured, and its claims ("sub" and "exp"
// required, "docs" well-formed). Its errors wrap one of ErrNoToken …
// ErrWrongAudience.
func (v *Verifier) Verify(ctx context.Context, token string) (*Claims, error) {
	switch {
	case token == "":
		return nil, ErrNoToken
	case len(token) > v.maxBytes:
		return nil, fmt.Errorf("%w (%d bytes, at most %d)", ErrTokenTooLong, len(token), v.maxBytes)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%w: want a signed JWT, three base64url parts joined by dots (found %d parts)", ErrMalformed, len(parts))
	}
	rawHeader, err := base64.RawURLEncoding.DecodeString(parts[0])
	var h header
	if err == nil {
		err = json.Unmarshal(rawHeader, &h)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the header is not base64url JSON", ErrMalformed)
	}
	alg := jose.SignatureAlgorithm(h.Alg)
	if !slices.Contains(v.algs, alg) {
		return nil, fmt.Errorf("%w: %s (this server takes %s)", ErrAlgorithm, quote(h.Alg), algNames(v.algs))
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{alg})
	if err != nil {
		return nil, fmt.Errorf("%w: not a compact JWS", ErrMalformed)
	}
	keys, err := v.candidates(ctx, alg, h.Kid)
	if err != nil {
		return nil, err
	}
	var tc tokenClaims
	verified := false
	for _, k := range keys {
		err := tok.Claims(k.Public, &tc)
		if err == nil {
			verified = true
			break
		}
		if !errors.Is(err, jose.ErrCryptoFailure) {
			// The signature held (or the key cannot take the
			// algorithm, which candidates excludes): the claims are
			// not JSON of the right types.
			return nil, fmt.Errorf("%w: %s", ErrInvalidClaims, claimsProblem(err))
		}
	}
	if !verified {
		return nil, ErrBadSignature
	}
	return v.check(&tc)
}

// candidates returns the keys to try for a token of alg naming kid (see
// pick). With a JWKS it fetches the set when it is stale, and again (as
// far as the rate allows) when no key has the token's kid, or none has
// its algorithm. When no key is found and the set's last fetch failed,
// the error matches ErrUnavailable (503): the key may be a new one.
func (v *Verifier) candidates(ctx context.Context, alg jose.SignatureAlgorithm, kid string) ([]Key, error) {
	keys, named := pick(v.keys, alg, kid)
	var err error
	if v.set != nil && !named {
		var set []Key
		set, err = v.set.current(ctx)
		keys, named = pick(append(slices.Clip(v.keys), set...), alg, kid)
		if !named && (kid != "" || len(keys) == 0) {
			set, err = v.set.refresh(ctx)
			keys, _ = pick(append(slices.Clip(v.keys), set...), alg, kid)
		}
		if err != nil {
			v.log.Warn("auth: JWKS unavailable", "err", err)
		}
	}
	switch {
	case len(keys) > 0:
		return keys, nil
	case err != nil && !errors.Is(err, errNoSigningKey):
		// The key set may have the key, but cannot be fetched.
		return nil, &unavailableError{fmt.Sprintf("cannot verify the token: no %s key%s known, and the key set is unavailable: try again later", alg, kidText(kid))}
	case kid != "":
		return nil, fmt.Errorf("%w: no %s key with id %s", ErrUnknownKey, alg, quote(kid))
	}
	return nil, fmt.Errorf("%w: no %s key", ErrUnknownKey, alg)
}

// kidText is " with id KID" for a kid, "" for none.
func kidText(kid string) string {
	if kid == "" {
		return ""
	}
	return " with id " + quote(kid)
}

// pick returns the keys of alg whose ID is kid, reporting true, when
// there are some; else those of alg without an ID (all those of alg when
// kid is empty), to be tried in turn.
func pick(all []Key, alg jose.SignatureAlgorithm, kid string) ([]Key, bool) {
	var byID, rest []Key
	for _, k := range all {
		switch {
		case k.Algorithm != alg:
		case kid != "" && k.ID == kid:
			byID = append(byID, k)
		case kid == "" || k.ID == "":
			rest = append(rest, k)
		}
	}
	if len(byID) > 0 {
		return byID, true
	}
	return rest, false
}

// tokenClaims are the claims a token is decoded into.
type tokenClaims struct {
	jwt.Claims
	Name string `json:"name"`
	Docs Grants `json:"docs"`
}

// check checks verified claims.
func (v *Verifier) check(tc *tokenClaims) (*Claims, error) {
	switch {
	case tc.Expiry == nil:
		return nil, fmt.Errorf(`%w: "exp" is required`, ErrInvalidClaims)
	case tc.Subject == "":
		return nil, fmt.Errorf(`%w: "sub" is required`, ErrInvalidClaims)
	case len(tc.Subject) > maxClaimBytes:
		return nil, fmt.Errorf(`%w: "sub" is longer than %d bytes`, ErrInvalidClaims, maxClaimBytes)
	case len(tc.Name) > maxClaimBytes:
		return nil, fmt.Errorf(`%w: "name" is longer than %d bytes`, ErrInvalidClaims, maxClaimBytes)
	}
	now := v.now()
	c := &Claims{Subject: tc.Subject, Name: tc.Name, Docs: tc.Docs, Expires: tc.Expiry.Time(),
		Issuer: tc.Issuer, Audience: tc.Audience}
	if tc.NotBefore != nil {
		c.NotBefore = tc.NotBefore.Time()
	}
	if tc.IssuedAt != nil {
		c.IssuedAt = tc.IssuedAt.Time()
	}
	var aud []string
	if v.audience != "" {
		aud = []string{v.audience}
	}
	err := tc.ValidateWithLeeway(jwt.Expected{Issuer: v.issuer, AnyAudience: aud, Time: now}, v.skew)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, jwt.ErrExpired):
		return nil, fmt.Errorf("%w at %s (clock skew %v)", ErrExpired, c.Expires.UTC().Format(time.RFC3339), v.skew)
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, fmt.Errorf("%w: not before %s (clock skew %v)", ErrNotYetValid, c.NotBefore.UTC().Format(time.RFC3339), v.skew)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, fmt.Errorf("%w: issued in the future, at %s (clock skew %v)", ErrNotYetValid, c.IssuedAt.UTC().Format(time.RFC3339), v.skew)
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, fmt.Errorf("%w: want %s", ErrWrongIssuer, quote(v.issuer))
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, fmt.Errorf("%w: want %s", ErrWrongAudience, quote(v.audience))
	}
	return nil, fmt.Errorf("%w: %s", ErrInvalidClaims, claimsProblem(err))
}

// claimsProblem describes an error decoding claims without quoting them.
func claimsProblem(err error) string {
	msg := err.Error()
	if s, ok := strings.CutPrefix(msg, "go-jose/go-jose/jwt: "); ok {
		return s
	}
	if strings.HasPrefix(msg, `"docs"`) {
		return msg // Grants' own errors quote at most a pattern
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return "claim " + quote(ute.Field) + " has the wrong type"
	}
	return "the payload is not a JSON object of claims"
}

// algNames lists algorithms for a message.
func algNames(algs []jose.SignatureAlgorithm) string {
	names := make([]string, len(algs))
	for i, a := range algs {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}
