package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/pmauthority/pmauthority/server"
)

// mustKeys returns the keys of a PEM.
func mustKeys(t testing.TB, pemData []byte) []Key {
	t.Helper()
	ks, err := ParsePEM(pemData)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func secretKey(t testing.TB) Key {
	t.Helper()
	k, err := SecretKey(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestVerifyFailures: every way a token fails, with the reason, without
// echoing the token, as a 401.
func TestVerifyFailures(t *testing.T) {
	k := privateKeys(t)
	rsaPEM := pemOf(t, &k.rsa.PublicKey)
	secretOnly := Config{Keys: []Key{secretKey(t)}}
	rsaOnly := Config{Keys: mustKeys(t, rsaPEM)}
	both := Config{Keys: append(mustKeys(t, rsaPEM), secretKey(t))}
	withIss := Config{Keys: []Key{secretKey(t)}, Issuer: "https://issuer.example", Audience: "pmauthority"}
	valid := validClaims()
	hs := func(c claims) string { return sign(t, jose.HS256, testSecret, "", c) }
	good := hs(valid)
	tampered := func() string {
		parts := strings.Split(good, ".")
		other := strings.Split(hs(valid.with("sub", "mallory")), ".")
		return parts[0] + "." + other[1] + "." + parts[2]
	}()
	tests := []struct {
		name  string
		cfg   Config
		token string
		want  error
	}{
		{"no token", secretOnly, "", ErrNoToken},
		{"garbage", secretOnly, "garbage", ErrMalformed},
		{"garbage with dots", secretOnly, "a.b.c", ErrMalformed},
		{"JWE-like five parts", secretOnly, "a.b.c.d.e", ErrMalformed},
		{"JSON serialization", secretOnly, `{"payload":"e30","signatures":[]}`, ErrMalformed},
		{"header not JSON", secretOnly, "bm90IGpzb24.e30.c2ln", ErrMalformed},
		{"bad base64 signature", secretOnly, strings.Split(good, ".")[0] + "." + strings.Split(good, ".")[1] + ".!!!", ErrMalformed},
		{"alg none", secretOnly, unsigned(t, `{"alg":"none","typ":"JWT"}`, valid), ErrAlgorithm},
		{"alg none, RSA key", rsaOnly, unsigned(t, `{"alg":"none"}`, valid), ErrAlgorithm},
		{"alg missing", secretOnly, unsigned(t, `{"typ":"JWT"}`, valid), ErrAlgorithm},
		{"HS256 with the RSA public key as secret", rsaOnly, sign(t, jose.HS256, rsaPEM, "", valid), ErrAlgorithm},
		{"HS256 with the RSA public key as secret, secret configured too", both, sign(t, jose.HS256, rsaPEM, "", valid), ErrBadSignature},
		{"ES256 for an RSA key", rsaOnly, sign(t, jose.ES256, k.ec, "", valid), ErrAlgorithm},
		{"wrong secret", secretOnly, sign(t, jose.HS256, []byte("another secret of at least 32 bytes!!"), "", valid), ErrBadSignature},
		{"another RSA key", rsaOnly, sign(t, jose.RS256, k.rsa2, "", valid), ErrBadSignature},
		{"payload swapped", secretOnly, tampered, ErrBadSignature},
		{"expired", secretOnly, hs(valid.with("exp", testNow.Add(-31*time.Second).Unix())), ErrExpired},
		{"nbf in the future", secretOnly, hs(valid.with("nbf", testNow.Add(time.Minute).Unix())), ErrNotYetValid},
		{"iat in the future", secretOnly, hs(valid.with("iat", testNow.Add(time.Minute).Unix())), ErrNotYetValid},
		{"no exp", secretOnly, hs(valid.with("exp", nil)), ErrInvalidClaims},
		{"no sub", secretOnly, hs(valid.with("sub", nil)), ErrInvalidClaims},
		{"sub not a string", secretOnly, hs(valid.with("sub", 7)), ErrInvalidClaims},
		{"exp not a number", secretOnly, hs(valid.with("exp", "tomorrow")), ErrInvalidClaims},
		{"docs not an object", secretOnly, hs(valid.with("docs", []string{"a"})), ErrInvalidClaims},
		{"docs unknown role", secretOnly, hs(valid.with("docs", map[string]string{"a": "owner"})), ErrInvalidClaims},
		{"docs star inside", secretOnly, hs(valid.with("docs", map[string]string{"a*b": "read"})), ErrInvalidClaims},
		{"sub too long", secretOnly, hs(valid.with("sub", strings.Repeat("a", 257))), ErrInvalidClaims},
		{"no issuer", withIss, hs(valid.with("aud", "pmauthority")), ErrWrongIssuer},
		{"wrong issuer", withIss, hs(valid.with("iss", "https://evil.example", "aud", "pmauthority")), ErrWrongIssuer},
		{"wrong audience", withIss, hs(valid.with("iss", "https://issuer.example", "aud", "other")), ErrWrongAudience},
		{"no audience", withIss, hs(valid.with("iss", "https://issuer.example")), ErrWrongAudience},
		{"too long", Config{Keys: []Key{secretKey(t)}, MaxTokenBytes: 100}, good, ErrTokenTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Now = func() time.Time { return testNow }
			v, err := NewVerifier(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.Verify(context.Background(), tt.token)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %+v, %v; want %v", c, err, tt.want)
			}
			if !errors.Is(err, server.ErrUnauthenticated) {
				t.Errorf("%v does not wrap server.ErrUnauthenticated", err)
			}
			if tt.token != "" && strings.Contains(err.Error(), tt.token) {
				t.Errorf("the error %q echoes the token", err)
			}
			if parts := strings.Split(tt.token, "."); len(parts) == 3 && len(parts[1]) > 8 && strings.Contains(err.Error(), parts[1]) {
				t.Errorf("the error %q echoes the token's payload", err)
			}
		})
	}
}

// TestVerifyAccepts: each key type, rotation, the clock skew, issuer and
// audience.
func TestVerifyAccepts(t *testing.T) {
	k := privateKeys(t)
	valid := validClaims()
	rotation := append(mustKeys(t, pemOf(t, &k.rsa.PublicKey)), mustKeys(t, pemOf(t, &k.rsa2.PublicKey))...)
	tests := []struct {
		name  string
		cfg   Config
		token string
	}{
		{"HS256", Config{Keys: []Key{secretKey(t)}}, sign(t, jose.HS256, testSecret, "", valid)},
		{"RS256", Config{Keys: mustKeys(t, pemOf(t, &k.rsa.PublicKey))}, sign(t, jose.RS256, k.rsa, "", valid)},
		{"ES256", Config{Keys: mustKeys(t, pemOf(t, &k.ec.PublicKey))}, sign(t, jose.ES256, k.ec, "", valid)},
		{"EdDSA", Config{Keys: mustKeys(t, pemOf(t, k.ed.Public()))}, sign(t, jose.EdDSA, k.ed, "", valid)},
		{"rotation: the second key", Config{Keys: rotation}, sign(t, jose.RS256, k.rsa2, "", valid)},
		{"rotation: a kid no key has", Config{Keys: rotation}, sign(t, jose.RS256, k.rsa2, "k9", valid)},
		{"HS256 beside an RSA key", Config{Keys: append(rotation, secretKey(t))}, sign(t, jose.HS256, testSecret, "", valid)},
		{"expired within the skew", Config{Keys: []Key{secretKey(t)}}, sign(t, jose.HS256, testSecret, "", valid.with("exp", testNow.Add(-29*time.Second).Unix()))},
		{"nbf within the skew", Config{Keys: []Key{secretKey(t)}}, sign(t, jose.HS256, testSecret, "", valid.with("nbf", testNow.Add(29*time.Second).Unix()))},
		{"issuer and audience", Config{Keys: []Key{secretKey(t)}, Issuer: "i", Audience: "a"},
			sign(t, jose.HS256, testSecret, "", valid.with("iss", "i", "aud", []string{"x", "a"}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Now = func() time.Time { return testNow }
			v, err := NewVerifier(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.Verify(context.Background(), tt.token)
			if err != nil {
				t.Fatal(err)
			}
			if c.Subject != "alice" || c.Name != "Alice" || c.Docs.Role("team-a.x") != RoleEdit || c.Docs.Role("handbook") != RoleRead {
				t.Errorf("claims %+v", c)
			}
		})
	}
	t.Run("skew configured", func(t *testing.T) {
		v, err := NewVerifier(Config{Keys: []Key{secretKey(t)}, ClockSkew: -1, Now: func() time.Time { return testNow }})
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.Verify(context.Background(), sign(t, jose.HS256, testSecret, "", valid.with("exp", testNow.Add(-time.Second).Unix())))
		if !errors.Is(err, ErrExpired) {
			t.Errorf("no skew: %v, want expired", err)
		}
	})
}

// jwksServer serves a key set that a test may change, counting fetches.
type jwksServer struct {
	*httptest.Server
	set     atomic.Pointer[[]byte]
	fetches atomic.Int64
}

func newJWKSServer(t *testing.T, set []byte) *jwksServer {
	s := &jwksServer{}
	s.set.Store(&set)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write(*s.set.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

// TestJWKS: keys chosen by kid, the set fetched once, refreshed on an
// unknown kid at most once per JWKSMinRefresh, and after JWKSMaxAge.
func TestJWKS(t *testing.T) {
	k := privateKeys(t)
	srv := newJWKSServer(t, jwksOf(t, "k1", &k.rsa.PublicKey, "k2", &k.ec.PublicKey))
	clk := &clock{now: testNow}
	v, err := NewVerifier(Config{JWKSURL: srv.URL, Now: clk.Now, JWKSMinRefresh: time.Minute, JWKSMaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	verify := func(tok string) error {
		_, err := v.Verify(ctx, tok)
		return err
	}
	valid := func(alg jose.SignatureAlgorithm, key any, kid string) string {
		c := validClaims().with("exp", testNow.Add(3*time.Hour).Unix())
		return sign(t, alg, key, kid, c)
	}
	if err := verify(valid(jose.RS256, k.rsa, "k1")); err != nil {
		t.Fatal(err)
	}
	if err := verify(valid(jose.ES256, k.ec, "k2")); err != nil {
		t.Fatal(err)
	}
	if err := verify(valid(jose.ES256, k.ec, "")); err != nil {
		t.Fatalf("no kid: %v", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
	// k1's key under k2's id: the kid chooses the key, so it fails.
	if err := verify(valid(jose.RS256, k.rsa, "k2")); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("RS256 named k2 (an ES256 key): %v, want unknown key", err)
	}
	// Unknown kids: no refresh within JWKSMinRefresh of the first fetch,
	// then one, then none until JWKSMinRefresh passed again.
	if err := verify(valid(jose.RS256, k.rsa2, "k3")); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown kid: %v", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
	clk.advance(time.Minute)
	for i := range 5 {
		if err := verify(valid(jose.RS256, k.rsa2, "k3")); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("unknown kid %d: %v", i, err)
		}
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after unknown kids, want 2 (one refresh)", n)
	}
	// The key is published: found at the next refresh allowed.
	set := jwksOf(t, "k1", &k.rsa.PublicKey, "k3", &k.rsa2.PublicKey)
	srv.set.Store(&set)
	clk.advance(30 * time.Second)
	if err := verify(valid(jose.RS256, k.rsa2, "k3")); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("within the refresh interval: %v, want unknown key", err)
	}
	clk.advance(31 * time.Second)
	if err := verify(valid(jose.RS256, k.rsa2, "k3")); err != nil {
		t.Errorf("after the refresh interval: %v", err)
	}
	if n := srv.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3", n)
	}
	// Removed keys go after JWKSMaxAge.
	set = jwksOf(t, "k3", &k.rsa2.PublicKey)
	srv.set.Store(&set)
	if err := verify(valid(jose.RS256, k.rsa, "k1")); err != nil {
		t.Errorf("k1 before max age: %v", err)
	}
	clk.advance(time.Hour)
	if err := verify(valid(jose.RS256, k.rsa, "k1")); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("k1 after max age, removed from the set: %v", err)
	}
}

// TestJWKSBad: a set that cannot be read makes tokens of keys not known
// yet unavailable (503), one without a signature key gives unknown keys
// (with the set's failure logged), and neither is fetched again within
// the interval.
func TestJWKSBad(t *testing.T) {
	k := privateKeys(t)
	many := make([]any, 0, 2*(MaxJWKSKeys+1))
	for i := range MaxJWKSKeys + 1 {
		many = append(many, "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), &k.ec.PublicKey)
	}
	big := append([]byte(`{"keys":[],"pad":"`), strings.Repeat("x", MaxJWKSBytes)...)
	big = append(big, `"}`...)
	encOnly, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{KeyID: "k1", Key: &k.ec.PublicKey, Use: "enc"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		set  []byte
		want error
	}{
		{"not JSON", []byte("<html>"), ErrUnavailable},
		{"too many keys", jwksOf(t, many...), ErrUnavailable},
		{"too large", big, ErrUnavailable},
		{"secret only", []byte(`{"keys":[{"kty":"oct","k":"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY","kid":"k1"}]}`), ErrUnknownKey},
		{"encryption key only", encOnly, ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newJWKSServer(t, tt.set)
			v, err := NewVerifier(Config{JWKSURL: srv.URL, Now: func() time.Time { return testNow }, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				tok := sign(t, jose.ES256, k.ec, "k1", validClaims())
				if _, err := v.Verify(context.Background(), tok); !errors.Is(err, tt.want) {
					t.Fatalf("Verify: %v, want %v", err, tt.want)
				}
			}
			if n := srv.fetches.Load(); n != 1 {
				t.Errorf("%d fetches, want 1", n)
			}
		})
	}
}

// TestJWKSTimeout: a key set that does not answer fails after
// JWKSTimeout, and the token is unavailable, not refused.
func TestJWKSTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	k := privateKeys(t)
	v, err := NewVerifier(Config{JWKSURL: srv.URL, JWKSTimeout: 50 * time.Millisecond, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, jose.ES256, k.ec, "k1", validClaims())); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Verify: %v, want unavailable", err)
	}
}

// TestConfigErrors: configurations that cannot work are refused.
func TestConfigErrors(t *testing.T) {
	k := privateKeys(t)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"nothing", Config{}, "no key"},
		{"short secret", Config{Keys: []Key{{Algorithm: jose.HS256, Public: []byte("short")}}}, "at least 32"},
		{"secret as RS256", Config{Keys: []Key{{Algorithm: jose.RS256, Public: testSecret}}}, "verifies HS256"},
		{"RSA key as HS256", Config{Keys: []Key{{Algorithm: jose.HS256, Public: &k.rsa.PublicKey}}}, "does not verify HS256"},
		{"EC key as EdDSA", Config{Keys: []Key{{Algorithm: jose.EdDSA, Public: &k.ec.PublicKey}}}, "does not verify EdDSA"},
		{"JWKS not http", Config{JWKSURL: "file:///etc/passwd"}, "http"},
		{"webhook and keys", Config{Webhook: "http://x", Keys: []Key{secretKey(t)}}, "without JWT keys"},
		{"webhook not http", Config{Webhook: "x"}, "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestParsePEM: the key types and what is refused.
func TestParsePEM(t *testing.T) {
	k := privateKeys(t)
	two := append(pemOf(t, &k.rsa.PublicKey), pemOf(t, k.ed.Public())...)
	ks, err := ParsePEM(two)
	if err != nil || len(ks) != 2 || ks[0].Algorithm != jose.RS256 || ks[1].Algorithm != jose.EdDSA {
		t.Errorf("two keys: %+v, %v", ks, err)
	}
	ks, err = ParsePEM(pemOf(t, &k.ec.PublicKey))
	if err != nil || len(ks) != 1 || ks[0].Algorithm != jose.ES256 {
		t.Errorf("EC: %+v, %v", ks, err)
	}
	for name, data := range map[string][]byte{
		"empty":   nil,
		"private": []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
		"bad DER": []byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
	} {
		if _, err := ParsePEM(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
