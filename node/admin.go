package node

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/switchyardhq/switchyard/admin"
)

// Environment variables of the admin API, read when the config leaves a
// field empty. The CLI's `admin token` reads the same ones.
const (
	EnvAdminJWTSecret = "SWITCHYARD_ADMIN_JWT_SECRET"
	EnvAdminJWKSURL   = "SWITCHYARD_ADMIN_JWKS_URL"
	EnvAdminIssuer    = "SWITCHYARD_ADMIN_ISSUER"
	EnvAdminAudience  = "SWITCHYARD_ADMIN_AUDIENCE"
	adminSecretFile   = "admin_jwt_secret"
)

// ErrAdminUnconfigured: with PostgreSQL, no secret is generated, and
// without one or a JWKS no token can be verified.
var ErrAdminUnconfigured = errors.New("set " + EnvAdminJWTSecret + " (or jwt_secret) or " + EnvAdminJWKSURL +
	" (or jwks_url): with PostgreSQL no secret is generated")

// ErrNoAdminSecret is the CLI's error when it has no secret to sign an
// admin token with.
var ErrNoAdminSecret = errors.New("no admin JWT secret: set " + EnvAdminJWTSecret + ", or use the embedded store, which generates one")

// AdminVerifier is how the admin API verifies tokens, the part of
// switchyard_admin's config that the module embeds.
type AdminVerifier struct {
	// Secret that verifies HS256 tokens (and that `switchyard admin
	// token` signs them with), at least 32 bytes. Default:
	// $SWITCHYARD_ADMIN_JWT_SECRET; with the embedded store and neither
	// set, a secret generated once and kept in data_dir/admin_jwt_secret
	// (mode 0600). With PostgreSQL and neither set, HS256 tokens are
	// refused and jwks_url is required.
	JWTSecret string `json:"jwt_secret,omitempty"`

	// URL of a JSON Web Key Set whose RSA and P-256 keys verify RS256
	// and ES256 tokens, as an SSO provider publishes them. Keys are
	// cached for an hour and fetched again when a token names an unknown
	// key id, at most every 30 seconds. Default: $SWITCHYARD_ADMIN_JWKS_URL,
	// else none (RS256 and ES256 tokens are refused).
	JWKSURL string `json:"jwks_url,omitempty"`

	// Required iss claim. Default: $SWITCHYARD_ADMIN_ISSUER, else none
	// (iss is not checked).
	Issuer string `json:"issuer,omitempty"`

	// Value the aud claim must hold. Default: $SWITCHYARD_ADMIN_AUDIENCE,
	// else "switchyard".
	Audience string `json:"audience,omitempty"`

	// Claim naming the account (a string) or accounts (an array) a token
	// may manage. Default: "account".
	AccountClaim string `json:"account_claim,omitempty"`

	// Claim holding the role; the value "operator" (alone or in an
	// array) may manage every account. Default: "role".
	RoleClaim string `json:"role_claim,omitempty"`
}

// Validate refuses a jwks_url that is not an http(s) URL; one with a
// placeholder is checked once resolved.
func (v AdminVerifier) Validate() error {
	if v.JWKSURL != "" && !strings.Contains(v.JWKSURL, "{") {
		if u, err := url.Parse(v.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("jwks_url %q: want an http(s) URL", v.JWKSURL)
		}
	}
	return nil
}

// VerifierConfig resolves v's fields: config, then environment, then
// defaults. The error is ErrAdminUnconfigured when no token could be
// verified.
func (s Settings) VerifierConfig(v AdminVerifier, expand func(string) string) (admin.VerifierConfig, error) {
	cfg := admin.VerifierConfig{
		Issuer:       Value(expand, v.Issuer, EnvAdminIssuer),
		Audience:     Value(expand, v.Audience, EnvAdminAudience),
		AccountClaim: v.AccountClaim,
		RoleClaim:    v.RoleClaim,
	}
	if jwksURL := Value(expand, v.JWKSURL, EnvAdminJWKSURL); jwksURL != "" {
		jwks, err := admin.NewJWKS(admin.JWKSConfig{URL: jwksURL})
		if err != nil {
			return cfg, err
		}
		cfg.JWKS = jwks
	}
	secret, err := s.AdminSecret(expand, v.JWTSecret)
	if err != nil {
		return cfg, err
	}
	cfg.Secret = secret
	if cfg.Secret == nil && cfg.JWKS == nil {
		return cfg, ErrAdminUnconfigured
	}
	return cfg, nil
}

// AdminSecret is the HS256 secret of the admin API: configured, from the
// environment, or in embedded mode the one kept in the data dir, created
// on first use. Nil when none is configured with PostgreSQL.
func (s Settings) AdminSecret(expand func(string) string, configured string) ([]byte, error) {
	if v, from := ValueFrom(expand, configured, "jwt_secret", EnvAdminJWTSecret); v != "" {
		if len(v) < admin.MinSecretBytes {
			return nil, fmt.Errorf("%s must be at least %d characters long", from, admin.MinSecretBytes)
		}
		return []byte(v), nil
	}
	if !s.Embedded() {
		return nil, nil
	}
	secret, err := s.secret(adminSecretFile)
	if err != nil {
		return nil, fmt.Errorf("admin JWT secret %s: %v", filepath.Join(s.DataDir, adminSecretFile), err)
	}
	return secret, nil
}

// MintConfig is what `switchyard admin token` signs with, as the server
// finds it: the secret, the issuer and the audience.
func (s Settings) MintConfig(expand func(string) string) (admin.MintConfig, error) {
	secret, err := s.AdminSecret(expand, "")
	if err != nil {
		return admin.MintConfig{}, err
	}
	if secret == nil {
		return admin.MintConfig{}, ErrNoAdminSecret
	}
	return admin.MintConfig{
		Secret:   secret,
		Issuer:   Value(expand, "", EnvAdminIssuer),
		Audience: Value(expand, "", EnvAdminAudience),
	}, nil
}
