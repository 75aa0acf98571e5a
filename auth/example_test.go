package auth_test

import (
	"context"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/pmauthority/pmauthority/auth"
)

// mint is how an app's backend (in Go) makes a token for pmauthority:
// docs/auth.md shows it.
func mint(secret []byte, sub, name string, docs map[string]string, ttl time.Duration) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	now := time.Now()
	claims := jwt.Claims{Subject: sub, IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(ttl))}
	extra := map[string]any{"name": name, "docs": docs}
	return jwt.Signed(signer).Claims(claims).Claims(extra).Serialize()
}

// A backend mints a token; pmauthority's Verifier accepts it.
func Example_mint() {
	secret := []byte("a secret of at least thirty-two bytes, from a file")
	tok, err := mint(secret, "alice", "Alice", map[string]string{"team-a.*": "edit", "handbook": "read"}, time.Hour)
	if err != nil {
		panic(err)
	}
	key, err := auth.SecretKey(secret)
	if err != nil {
		panic(err)
	}
	v, err := auth.NewVerifier(auth.Config{Keys: []auth.Key{key}})
	if err != nil {
		panic(err)
	}
	c, err := v.Verify(context.Background(), tok)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Subject, c.Name, c.Docs.Role("team-a.notes"), c.Docs.Role("handbook"), c.Docs.Role("other"))
	// Output: alice Alice edit read none
}
