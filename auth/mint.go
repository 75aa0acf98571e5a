package auth

import (
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Mint returns an HS256 token of claims signed with secret (at least
// MinSecretBytes long), for development and tests: claims.Subject and
// claims.Expires are required.
func Mint(secret []byte, claims Claims) (string, error) {
	if _, err := SecretKey(secret); err != nil {
		return "", err
	}
	if claims.Subject == "" {
		return "", errors.New(`a token needs a subject ("sub")`)
	}
	if claims.Expires.IsZero() {
		return "", errors.New(`a token needs an expiry ("exp")`)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	std := jwt.Claims{Subject: claims.Subject, Expiry: jwt.NewNumericDate(claims.Expires),
		Issuer: claims.Issuer, Audience: claims.Audience}
	if !claims.NotBefore.IsZero() {
		std.NotBefore = jwt.NewNumericDate(claims.NotBefore)
	}
	if !claims.IssuedAt.IsZero() {
		std.IssuedAt = jwt.NewNumericDate(claims.IssuedAt)
	}
	extra := struct {
		Name string `json:"name,omitempty"`
		Docs Grants `json:"docs"`
	}{claims.Name, claims.Docs}
	if extra.Docs == nil {
		extra.Docs = Grants{}
	}
	tok, err := jwt.Signed(signer).Claims(std).Claims(extra).Serialize()
	if err != nil {
		return "", fmt.Errorf("minting a token: %w", err)
	}
	return tok, nil
}

// NewClaims returns the claims of a token for sub, named name, granting
// grants, issued now and valid for ttl.
func NewClaims(sub, name string, grants Grants, now time.Time, ttl time.Duration) Claims {
	now = now.Truncate(time.Second)
	return Claims{Subject: sub, Name: name, Docs: grants, IssuedAt: now, Expires: now.Add(ttl)}
}
