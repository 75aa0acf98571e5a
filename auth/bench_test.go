package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/pmauthority/pmauthority/server"
)

// BenchmarkVerify verifies a token of each algorithm, without the cache.
func BenchmarkVerify(b *testing.B) {
	k := privateKeys(b)
	for _, bc := range []struct {
		name string
		key  Key
		tok  string
	}{
		{"HS256", secretKey(b), sign(b, jose.HS256, testSecret, "", validClaims())},
		{"RS256", mustKeys(b, pemOf(b, &k.rsa.PublicKey))[0], sign(b, jose.RS256, k.rsa, "", validClaims())},
		{"ES256", mustKeys(b, pemOf(b, &k.ec.PublicKey))[0], sign(b, jose.ES256, k.ec, "", validClaims())},
		{"EdDSA", mustKeys(b, pemOf(b, k.ed.Public()))[0], sign(b, jose.EdDSA, k.ed, "", validClaims())},
	} {
		b.Run(bc.name, func(b *testing.B) {
			v, err := NewVerifier(Config{Keys: []Key{bc.key}, Now: func() time.Time { return testNow }})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := v.Verify(context.Background(), bc.tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRequest answers GET /docs/d without auth (AllowAll) and with
// a Policy and a cached RS256 token: the cost of auth per request.
func BenchmarkRequest(b *testing.B) {
	k := privateKeys(b)
	tok := sign(b, jose.RS256, k.rsa, "", validClaims().with("iss", "iss", "aud", "aud", "docs", map[string]string{"d": "read"}))
	e := newEnv(b, matrixConfig(b), false)
	open, err := server.New(server.Config{Collab: e.collab, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		h     http.Handler
		token string
	}{{"open", open, ""}, {"auth", e.srv, tok}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				r := httptest.NewRequest("GET", "/docs/d", nil)
				if bc.token != "" {
					r.Header.Set("Authorization", "Bearer "+bc.token)
				}
				w := httptest.NewRecorder()
				bc.h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code, w.Body)
				}
			}
		})
	}
}
