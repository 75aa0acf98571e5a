package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// quiet is a logger that discards.
var quiet = slog.New(slog.DiscardHandler)

// testNow is the tests' clock.
var testNow = time.Unix(1_800_000_000, 0)

// testSecret is the tests' HS256 secret.
var testSecret = []byte("0123456789abcdef0123456789abcdef-test")

// testKeys are private keys of each type, made once.
type testKeys struct {
	rsa, rsa2 *rsa.PrivateKey
	ec        *ecdsa.PrivateKey
	ed        ed25519.PrivateKey
}

var (
	keysOnce sync.Once
	keys     testKeys
)

func privateKeys(t testing.TB) testKeys {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		if keys.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if keys.rsa2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if keys.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if _, keys.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
			panic(err)
		}
	})
	return keys
}

// pemOf returns the PKIX PEM of a public key.
func pemOf(t testing.TB, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// claims are a token's claims, as JSON.
type claims map[string]any

// validClaims returns claims of alice valid at testNow, editing team-a.*.
func validClaims() claims {
	return claims{"sub": "alice", "name": "Alice", "exp": testNow.Add(time.Hour).Unix(),
		"iat": testNow.Unix(), "docs": map[string]string{"team-a.*": "edit", "handbook": "read"}}
}

// with returns a copy of c with the given keys set (a nil value deletes).
func (c claims) with(kv ...any) claims {
	out := claims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// sign returns the token of c signed with key by alg, with kid when set.
func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, c claims) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsigned returns a token of c with the header h and an empty
// signature (alg none).
func unsigned(t testing.TB, h string, c claims) string {
	t.Helper()
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(h)) + "." + enc(payload) + "."
}

// jwksOf returns a JWKS of the public keys, with their ids.
func jwksOf(t testing.TB, kv ...any) []byte {
	t.Helper()
	var set jose.JSONWebKeySet
	for i := 0; i < len(kv); i += 2 {
		set.Keys = append(set.Keys, jose.JSONWebKey{KeyID: kv[i].(string), Key: kv[i+1], Use: "sig"})
	}
	data, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
