// Package auth is pmauthority's token authentication: a server.Policy
// that verifies JSON Web Tokens (HS256 with a shared secret; RS256, ES256
// and EdDSA with PEM public keys or a JWKS URL) or asks an app's webhook,
// and grants each principal a role per document from the token's "docs"
// claim.
//
// A token's claims are "sub" (the principal, required), "name" (its
// display name, optional), "exp" (required), "nbf" and "iat" (honoured
// with a clock skew), "iss" and "aud" (checked when configured) and
// "docs", an object from document-id pattern to role:
//
//	{"sub": "alice", "name": "Alice", "exp": 1767225600,
//	 "docs": {"team-a.*": "edit", "handbook": "read"}}
//
// A pattern is a document id, a prefix ending in "*" ("*" alone: every
// document), or "=" and a document id, which matches that id only ("=*"
// is the document named "*"); the highest role among the patterns
// matching a document applies. The
// roles, each including the ones before, are read, comment, suggest,
// edit and admin. docs/auth.md is the contract for the backends that mint tokens.
package auth
