package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
)

// Key is a key that verifies tokens. Its algorithm is fixed by the key:
// a token whose "alg" is another is never verified with it.
type Key struct {
	// ID is matched against a token's "kid" header ("" for a key
	// without an id, which is tried for tokens of its algorithm that
	// name no key it knows).
	ID string
	// Algorithm is the key's signature algorithm: HS256 for a secret,
	// RS256 (or RS384, RS512, PS256, PS384, PS512) for an RSA key,
	// ES256, ES384 or ES512 for an ECDSA key of the matching curve,
	// EdDSA for an Ed25519 key.
	Algorithm jose.SignatureAlgorithm
	// Public is the key: []byte (a secret), *rsa.PublicKey,
	// *ecdsa.PublicKey or ed25519.PublicKey.
	Public any
}

// MinSecretBytes is the shortest HS256 secret accepted.
const MinSecretBytes = 32

// minRSABits is the smallest RSA modulus accepted.
const minRSABits = 2048

// SecretKey returns the HS256 key of secret, which must be at least
// MinSecretBytes long.
func SecretKey(secret []byte) (Key, error) {
	if len(secret) < MinSecretBytes {
		return Key{}, fmt.Errorf("HS256 secret of %d bytes: want at least %d (e.g. openssl rand -base64 48)", len(secret), MinSecretBytes)
	}
	return Key{Algorithm: jose.HS256, Public: secret}, nil
}

// ParsePEM returns the public keys of the PEM blocks in data ("PUBLIC
// KEY", PKIX: RSA, ECDSA or Ed25519; "RSA PUBLIC KEY", PKCS #1;
// "CERTIFICATE", the certificate's key), each with its default
// algorithm: RS256, ES256 (ES384, ES512 for P-384, P-521) or EdDSA.
// Private keys are refused, so that a secret is never mistaken for a
// verification key.
func ParsePEM(data []byte) ([]Key, error) {
	var keys []Key
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		var pub any
		var err error
		switch block.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				pub = cert.PublicKey
			}
		default:
			if len(block.Type) >= 11 && block.Type[len(block.Type)-11:] == "PRIVATE KEY" {
				return nil, fmt.Errorf("PEM block %d is a %s: want the public key (openssl pkey -pubout)", n, block.Type)
			}
			return nil, fmt.Errorf("PEM block %d is a %s: want a PUBLIC KEY", n, block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", n, err)
		}
		alg, err := defaultAlgorithm(pub)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", n, err)
		}
		keys = append(keys, Key{Algorithm: alg, Public: pub})
	}
	if len(keys) == 0 {
		return nil, errors.New("no PEM public key found")
	}
	return keys, nil
}

// defaultAlgorithm returns the algorithm of a public key.
func defaultAlgorithm(pub any) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return "", fmt.Errorf("RSA key of %d bits: want at least %d", k.N.BitLen(), minRSABits)
		}
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("ECDSA key on curve %s: want P-256, P-384 or P-521", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("unsupported key type %T: want RSA, ECDSA or Ed25519", pub)
}

// check returns what is wrong with k: its algorithm must be one that its
// key type takes.
func (k Key) check() error {
	switch pub := k.Public.(type) {
	case []byte:
		if k.Algorithm != jose.HS256 {
			return fmt.Errorf("a secret verifies HS256, not %s", k.Algorithm)
		}
		if len(pub) < MinSecretBytes {
			return fmt.Errorf("HS256 secret of %d bytes: want at least %d", len(pub), MinSecretBytes)
		}
		return nil
	case *rsa.PublicKey:
		switch k.Algorithm {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			_, err := defaultAlgorithm(pub) // its size
			return err
		}
	default:
		alg, err := defaultAlgorithm(pub)
		if err != nil {
			return err
		}
		if alg == k.Algorithm {
			return nil
		}
	}
	return fmt.Errorf("a %T key does not verify %s", k.Public, k.Algorithm)
}

// jwkKey returns the Key of a JWKS entry, and false for an entry that
// verifies no signature (an encryption key, a secret, a private key, an
// unsupported type, or an "alg" its key does not take).
func jwkKey(j jose.JSONWebKey) (Key, bool) {
	if j.Use != "" && j.Use != "sig" || !j.IsPublic() || !j.Valid() {
		return Key{}, false
	}
	// IsPublic is false for a secret: no HS256 from a key set, so no
	// HS/RS confusion.
	k := Key{ID: j.KeyID, Public: j.Key}
	if j.Algorithm != "" {
		k.Algorithm = jose.SignatureAlgorithm(j.Algorithm)
	} else {
		alg, err := defaultAlgorithm(j.Key)
		if err != nil {
			return Key{}, false
		}
		k.Algorithm = alg
	}
	if k.check() != nil {
		return Key{}, false
	}
	return k, true
}
