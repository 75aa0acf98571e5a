package auth

import "github.com/pmauthority/pmauthority/server"

// tokenError is why a token is refused. It wraps
// server.ErrUnauthenticated, which the server answers with 401.
type tokenError string

func (e tokenError) Error() string { return string(e) }

func (e tokenError) Unwrap() error { return server.ErrUnauthenticated }

// The reasons a token is refused; the errors of Verify wrap one of them
// (with details that never include the token), and each wraps
// server.ErrUnauthenticated.
var (
	ErrNoToken       error = tokenError("missing token")
	ErrTokenTooLong  error = tokenError("invalid token: too long")
	ErrMalformed     error = tokenError("invalid token: malformed")
	ErrAlgorithm     error = tokenError("invalid token: signature algorithm not accepted")
	ErrUnknownKey    error = tokenError("invalid token: unknown key")
	ErrBadSignature  error = tokenError("invalid token: bad signature")
	ErrInvalidClaims error = tokenError("invalid token: invalid claims")
	ErrExpired       error = tokenError("invalid token: expired")
	ErrNotYetValid   error = tokenError("invalid token: not yet valid")
	ErrWrongIssuer   error = tokenError("invalid token: wrong issuer")
	ErrWrongAudience error = tokenError("invalid token: wrong audience")
	ErrRefused       error = tokenError("invalid token: refused by the auth webhook")
)
