package auth

import (
	"net"
	"net/http"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// closedPort returns the URL of a 127.0.0.1 port that nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// TestJWKSUnreachable: while the key set cannot be fetched, a token
// whose key is not known yet is answered 503 with Retry-After, not 401
// "unknown key"; tokens of the configured keys are still served.
func TestJWKSUnreachable(t *testing.T) {
	cfg := matrixConfig(t)
	cfg.JWKSURL = closedPort(t) + "/jwks.json"
	e := newEnv(t, cfg, false)
	k := privateKeys(t)
	claims := validClaims().with("iss", "iss", "aud", "aud", "docs", map[string]string{"d": "read"})
	tok := sign(t, jose.ES256, k.ec, "k1", claims)
	for i := range 2 { // the first fetches, the second is within JWKSMinRefresh
		w := e.do("GET", "/docs/d", "", tok)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" ||
			!strings.Contains(w.Body.String(), "key set is unavailable") {
			t.Errorf("request %d: %d, Retry-After %q: %s; want 503 with Retry-After", i, w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	}
	if w := e.do("GET", "/docs/d", "", sign(t, jose.HS256, testSecret, "", claims)); w.Code != 200 {
		t.Errorf("HS256 token while the key set is down: %d: %s", w.Code, w.Body)
	}
}
