package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/pmauthority/pmauthority/auth"
	"github.com/pmauthority/pmauthority/server"
)

// authFlags are the authentication flags of `pmauthority serve`.
type authFlags struct {
	secretFile     string
	publicKeys     stringsFlag
	jwksURL        string
	issuer         string
	audience       string
	clockSkew      time.Duration
	webhook        string
	webhookTimeout time.Duration
	refusalTTL     time.Duration
	webhookCalls   int
	webhookWait    time.Duration
	protectApply   bool
	insecureNoAuth bool
	maxToken       sizeFlag
	cacheSize      int
}

// register adds the flags to fs.
func (f *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.secretFile, "jwt-secret-file", "", "verify HS256 tokens with the secret in `FILE` (at least 32 bytes; trailing whitespace ignored)")
	fs.Var(&f.publicKeys, "jwt-public-key", "verify RS256, ES256 or EdDSA tokens with the PEM public key(s) in `FILE`; repeatable (key rotation)")
	fs.StringVar(&f.jwksURL, "jwks-url", "", "verify tokens with the keys of the JSON Web Key Set at `URL` (fetched when needed, cached, refetched on an unknown kid at most once a minute)")
	fs.StringVar(&f.issuer, "jwt-issuer", "", "require tokens' \"iss\" to be `ISSUER`")
	fs.StringVar(&f.audience, "jwt-audience", "", "require tokens' \"aud\" to include `AUDIENCE`")
	fs.DurationVar(&f.clockSkew, "jwt-clock-skew", auth.DefaultClockSkew, "leeway for tokens' exp, nbf and iat")
	fs.StringVar(&f.webhook, "auth-webhook", "", "instead of JWT keys, POST {token, doc, action} to `URL`, which answers {sub, name, role, ttl} (cached for ttl; a failing webhook denies, 403)")
	fs.DurationVar(&f.webhookTimeout, "auth-webhook-timeout", auth.DefaultWebhookTimeout, "time allowed for one call of --auth-webhook")
	fs.DurationVar(&f.refusalTTL, "auth-webhook-refusal-ttl", auth.DefaultWebhookRefusalTTL, "how long a token that --auth-webhook refused (401) is refused without asking again (0: not cached)")
	fs.IntVar(&f.webhookCalls, "auth-webhook-max-calls", auth.DefaultWebhookMaxCalls, "--auth-webhook calls in flight at once (requests for the same token, document and action share one); past it requests wait --auth-webhook-wait, then get 503")
	fs.DurationVar(&f.webhookWait, "auth-webhook-wait", auth.DefaultWebhookWait, "how long a request waits for a free --auth-webhook call before it is answered 503 with Retry-After")
	fs.BoolVar(&f.protectApply, "auth-apply", false, "with auth, require a valid token for the stateless apply endpoint (POST /, /v1/apply, /v1/schemas) too")
	f.maxToken = auth.DefaultMaxTokenBytes
	fs.Var(&f.maxToken, "max-token", "largest token `size` (bytes, or with KiB); a longer one is refused with 401")
	fs.IntVar(&f.cacheSize, "auth-cache", auth.DefaultCacheSize, "how many verified tokens (or webhook answers) are kept, so that requests with the same token are not verified again")
	fs.BoolVar(&f.insecureNoAuth, "insecure-no-auth", false, "serve a non-loopback --addr without any auth flag: anyone who reaches it may read, edit and create every document")
}

// enabled reports whether an auth flag that makes a policy is given.
func (f *authFlags) enabled() bool {
	return f.secretFile != "" || len(f.publicKeys) > 0 || f.jwksURL != "" || f.webhook != ""
}

// check checks the flags against each other and the address to listen
// on: without auth, a non-loopback address needs --insecure-no-auth.
func (f *authFlags) check(addr string) error {
	if f.clockSkew < 0 {
		return errors.New("--jwt-clock-skew must not be negative")
	}
	if f.webhookTimeout <= 0 {
		return errors.New("--auth-webhook-timeout must be positive")
	}
	if f.refusalTTL < 0 {
		return errors.New("--auth-webhook-refusal-ttl must not be negative")
	}
	if f.webhookCalls <= 0 {
		return errors.New("--auth-webhook-max-calls must be positive")
	}
	if f.webhookWait <= 0 {
		return errors.New("--auth-webhook-wait must be positive")
	}
	if f.maxToken <= 0 || f.maxToken > 1<<30 {
		return errors.New("--max-token must be positive (at most 1GiB)")
	}
	if f.cacheSize <= 0 {
		return errors.New("--auth-cache must be positive")
	}
	if f.webhook != "" && (f.secretFile != "" || len(f.publicKeys) > 0 || f.jwksURL != "") {
		return errors.New("--auth-webhook decides alone: give it without --jwt-secret-file, --jwt-public-key or --jwks-url")
	}
	if !f.enabled() {
		if f.issuer != "" || f.audience != "" || f.protectApply {
			return errors.New("--jwt-issuer, --jwt-audience and --auth-apply need a key: --jwt-secret-file, --jwt-public-key or --jwks-url")
		}
		if !f.insecureNoAuth && !loopbackAddr(addr) {
			return fmt.Errorf("refusing to serve %s without authentication: anyone who reaches it could read and change every document. "+
				"Give --jwt-secret-file, --jwt-public-key, --jwks-url or --auth-webhook (docs/auth.md), listen on a loopback address "+
				"(--addr 127.0.0.1:8080), or accept the risk with --insecure-no-auth", addr)
		}
	} else if f.insecureNoAuth {
		return errors.New("--insecure-no-auth contradicts the auth flags given")
	}
	return nil
}

// loopbackAddr reports whether addr (host:port) listens on loopback
// only: a loopback IP address or localhost.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// policy returns the policy of the flags (nil without auth), and logs
// the warning of --insecure-no-auth.
func (f *authFlags) policy(logger *slog.Logger) (server.Policy, error) {
	if !f.enabled() {
		if f.insecureNoAuth {
			logger.Warn("serving without authentication (--insecure-no-auth): anyone who reaches the server may read, edit and create every document")
		}
		return nil, nil
	}
	cfg := auth.Config{
		JWKSURL:         f.jwksURL,
		Issuer:          f.issuer,
		Audience:        f.audience,
		ClockSkew:       f.clockSkew,
		Webhook:         f.webhook,
		WebhookTimeout:  f.webhookTimeout,
		WebhookMaxCalls: f.webhookCalls,
		WebhookWait:     f.webhookWait,
		ProtectApply:    f.protectApply,
		MaxTokenBytes:   int(f.maxToken),
		CacheSize:       f.cacheSize,
		Logger:          logger,
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = -1 // none, for auth.Config
	}
	cfg.WebhookRefusalTTL = f.refusalTTL
	if cfg.WebhookRefusalTTL == 0 {
		cfg.WebhookRefusalTTL = -1 // not cached, for auth.Config
	}
	if f.secretFile != "" {
		secret, err := readSecret(f.secretFile)
		if err != nil {
			return nil, fmt.Errorf("--jwt-secret-file: %w", err)
		}
		k, err := auth.SecretKey(secret)
		if err != nil {
			return nil, fmt.Errorf("--jwt-secret-file %s: %w", f.secretFile, err)
		}
		cfg.Keys = append(cfg.Keys, k)
	}
	for _, file := range f.publicKeys {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--jwt-public-key: %w", err)
		}
		ks, err := auth.ParsePEM(data)
		if err != nil {
			return nil, fmt.Errorf("--jwt-public-key %s: %w", file, err)
		}
		cfg.Keys = append(cfg.Keys, ks...)
	}
	p, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// readSecret reads a secret file, without its trailing whitespace.
func readSecret(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return bytes.TrimRight(data, " \t\r\n"), nil
}

const tokenUsage = `usage: pmauthority token --secret-file FILE --sub ID [--name NAME] [--doc PATTERN=ROLE]… [--ttl 1h]

Prints an HS256 token for serve --jwt-secret-file FILE, for development
and tests. A PATTERN is a document id or a prefix ending in * (e.g.
team-a.*); a ROLE is read, comment, suggest, edit or admin.

flags:
`

// runToken runs `pmauthority token`.
func runToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		secretFile, sub, name, issuer, audience string
		docs                                    stringsFlag
		ttl                                     time.Duration
	)
	fs.StringVar(&secretFile, "secret-file", "", "sign with the HS256 secret in `FILE` (as serve --jwt-secret-file reads it)")
	fs.StringVar(&sub, "sub", "", "the principal's `ID` (the token's \"sub\")")
	fs.StringVar(&name, "name", "", "the principal's display `NAME`")
	fs.Var(&docs, "doc", "grant `PATTERN=ROLE` (e.g. team-a.*=edit, handbook=read); repeatable")
	fs.DurationVar(&ttl, "ttl", time.Hour, "how long the token is valid")
	fs.StringVar(&issuer, "issuer", "", "the token's \"iss\"")
	fs.StringVar(&audience, "audience", "", "the token's \"aud\"")
	fs.Usage = func() {
		fmt.Fprint(stderr, tokenUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "pmauthority token:", err)
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case secretFile == "":
		return fail(errors.New("--secret-file is required"))
	case sub == "":
		return fail(errors.New("--sub is required"))
	case ttl <= 0:
		return fail(errors.New("--ttl must be positive"))
	}
	var grants auth.Grants
	for _, d := range docs {
		g, err := auth.ParseGrant(d)
		if err != nil {
			return fail(fmt.Errorf("--doc: %w", err))
		}
		grants = append(grants, g)
	}
	secret, err := readSecret(secretFile)
	if err != nil {
		return fail(err)
	}
	claims := auth.NewClaims(sub, name, grants, time.Now(), ttl)
	claims.Issuer = issuer
	if audience != "" {
		claims.Audience = []string{audience}
	}
	tok, err := auth.Mint(secret, claims)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintln(stdout, tok)
	return 0
}
