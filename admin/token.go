package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchyardhq/switchyard/internal/apierror"
)

// Defaults of VerifierConfig.
const (
	DefaultAudience     = "switchyard"
	DefaultAccountClaim = "account"
	DefaultRoleClaim    = "role"
	// OperatorRole is the role claim value that may manage every account.
	OperatorRole = "operator"
	// leeway absorbs clock differences between the token's issuer and
	// this node in exp, nbf and iat.
	leeway = 30 * time.Second
	// MinSecretBytes is the shortest HS256 secret accepted: shorter ones
	// can be brute-forced from a single token.
	MinSecretBytes = 32
)

// VerifierConfig says which tokens a Verifier accepts.
type VerifierConfig struct {
	// Secret verifies HS256 tokens, at least MinSecretBytes long. Nil:
	// HS256 tokens are refused.
	Secret []byte
	// JWKS, when not nil, verifies RS256 and ES256 tokens with the keys it
	// publishes. Nil: those are refused.
	JWKS *JWKS
	// Issuer, when not empty, must equal the token's iss.
	Issuer string
	// Audience must be among the token's aud. Default: DefaultAudience.
	Audience string
	// AccountClaim names the claim holding the account (a string) or
	// accounts (an array of strings) the token may manage. Default:
	// DefaultAccountClaim.
	AccountClaim string
	// RoleClaim names the claim holding the role (a string, or an array
	// of strings); OperatorRole may manage every account. Default:
	// DefaultRoleClaim.
	RoleClaim string
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// Verifier checks admin API tokens and says whom they speak for. It is
// safe for concurrent use.
type Verifier struct {
	cfg     VerifierConfig
	methods []string
	parser  *jwt.Parser
}

// NewVerifier checks cfg and returns a Verifier.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	if cfg.Secret == nil && cfg.JWKS == nil {
		return nil, errors.New("admin: a JWT secret or a JWKS URL is required")
	}
	if cfg.Secret != nil && len(cfg.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("admin: the JWT secret must be at least %d bytes long", MinSecretBytes)
	}
	cfg.Audience = orDefault(cfg.Audience, DefaultAudience)
	cfg.AccountClaim = orDefault(cfg.AccountClaim, DefaultAccountClaim)
	cfg.RoleClaim = orDefault(cfg.RoleClaim, DefaultRoleClaim)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := &Verifier{cfg: cfg}
	if cfg.Secret != nil {
		v.methods = append(v.methods, jwt.SigningMethodHS256.Alg())
	}
	if cfg.JWKS != nil {
		v.methods = append(v.methods, jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg())
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(v.methods),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(cfg.Now),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Principal is whom a verified token speaks for.
type Principal struct {
	// Subject is the token's sub.
	Subject string
	// Operator may manage every account.
	Operator bool
	// Accounts are the names of the accounts the token may manage, when
	// it is not an operator's.
	Accounts []string
}

// Role is "operator" or "account", as the audit log records it.
func (p Principal) Role() string {
	if p.Operator {
		return OperatorRole
	}
	return "account"
}

// MayManage reports whether p may act on the account named name.
func (p Principal) MayManage(name string) bool {
	return p.Operator || slices.Contains(p.Accounts, name)
}

// MayTopUp reports whether p may credit balances through the admin API.
// Adding funds needs authority over money, which only an operator has:
// the gateway takes no payments, so an account's own token crediting its
// balance would be money from nothing. A payment provider, once there is
// one, is where an account's top-up will come from, confirmed by the
// provider and not by this check.
func (p Principal) MayTopUp() bool { return p.Operator }

// TokenError is a refused token. SignatureValid tells refusals of
// tokens that some trusted key signed (expired, wrong audience, no
// account), which the audit log records, from forgeries and garbage,
// which it does not: anyone can send those, as many as they like.
type TokenError struct {
	Reason         string
	SignatureValid bool
	// Subject is the sub of a token whose signature was valid.
	Subject string
}

func (e *TokenError) Error() string { return "invalid token: " + e.Reason }

// Verify checks token (without "Bearer ") and returns its principal, or
// a *TokenError.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) { return v.key(ctx, t) })
	if err != nil {
		// jwt checks the signature before the claims: a claims error
		// means a trusted key signed the token.
		signed := errors.Is(err, jwt.ErrTokenInvalidClaims)
		sub, _ := claims["sub"].(string)
		if !signed {
			sub = ""
		}
		return Principal{}, &TokenError{Reason: reason(err), SignatureValid: signed, Subject: sub}
	}
	refuse := func(why string) (Principal, error) {
		sub, _ := claims["sub"].(string)
		return Principal{}, &TokenError{Reason: why, SignatureValid: true, Subject: sub}
	}
	sub, ok := claims["sub"].(string)
	if !ok || sub == "" {
		return refuse("the token has no sub claim")
	}
	p := Principal{Subject: sub}
	roles, ok := stringOrStrings(claims[v.cfg.RoleClaim])
	if !ok {
		return refuse(fmt.Sprintf("claim %q is not a string or an array of strings", v.cfg.RoleClaim))
	}
	p.Operator = slices.Contains(roles, OperatorRole)
	accounts, ok := stringOrStrings(claims[v.cfg.AccountClaim])
	if !ok {
		return refuse(fmt.Sprintf("claim %q is not a string or an array of strings", v.cfg.AccountClaim))
	}
	p.Accounts = slices.DeleteFunc(accounts, func(a string) bool { return a == "" })
	if !p.Operator && len(p.Accounts) == 0 {
		return refuse(fmt.Sprintf("the token names no account (claim %q) and is not an operator's (claim %q)",
			v.cfg.AccountClaim, v.cfg.RoleClaim))
	}
	return p, nil
}

// key returns the key that verifies t. jwt has already checked that the
// algorithm is one of v.methods, and each algorithm gets only its own
// kind of key: an HS256 token is never checked against a public key.
func (v *Verifier) key(ctx context.Context, t *jwt.Token) (any, error) {
	switch t.Method.(type) {
	case *jwt.SigningMethodHMAC:
		if v.cfg.Secret == nil {
			return nil, errors.New("HS256 is not accepted")
		}
		return v.cfg.Secret, nil
	case *jwt.SigningMethodRSA, *jwt.SigningMethodECDSA:
		if v.cfg.JWKS == nil {
			return nil, errors.New("no JWKS is configured")
		}
		kid, _ := t.Header["kid"].(string)
		return v.cfg.JWKS.Key(ctx, kid, t.Method.Alg())
	}
	return nil, fmt.Errorf("algorithm %s is not accepted", t.Method.Alg())
}

// reason is a short, safe description of a parse failure.
func reason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "the signature is invalid or the algorithm is not accepted"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "no trusted key verifies the token"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token lacks a required claim (exp)"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "the token was issued in the future"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "the token is not meant for this audience"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "the token's issuer is not trusted"
	}
	return "the token is invalid"
}

// stringOrStrings reads a claim that is absent, a string or an array of
// strings.
func stringOrStrings(v any) ([]string, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// invalidToken is the 401 every refused token gets.
func invalidToken(message string) *apierror.Error {
	return apierror.New(http.StatusUnauthorized, apierror.TypeAuthentication, "invalid_token", message)
}

// MintConfig is a token to mint with Mint.
type MintConfig struct {
	Secret       []byte
	Subject      string
	Operator     bool
	Account      string // with Operator false
	TTL          time.Duration
	Issuer       string // "": no iss claim
	Audience     string // default DefaultAudience
	AccountClaim string // default DefaultAccountClaim
	RoleClaim    string // default DefaultRoleClaim
	Now          time.Time
}

// Mint returns an HS256 token that a Verifier with the same secret,
// issuer, audience and claim names accepts.
func Mint(c MintConfig) (string, error) {
	if len(c.Secret) < MinSecretBytes {
		return "", fmt.Errorf("the JWT secret must be at least %d bytes long", MinSecretBytes)
	}
	if c.Subject == "" {
		return "", errors.New("a token needs a subject")
	}
	if c.TTL <= 0 {
		return "", errors.New("a token needs a positive lifetime")
	}
	if c.Operator == (c.Account != "") {
		return "", errors.New("a token is either an operator's or one account's")
	}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	claims := jwt.MapClaims{
		"sub": c.Subject,
		"aud": orDefault(c.Audience, DefaultAudience),
		"iat": c.Now.Unix(),
		"exp": c.Now.Add(c.TTL).Unix(),
	}
	if c.Issuer != "" {
		claims["iss"] = c.Issuer
	}
	if c.Operator {
		claims[orDefault(c.RoleClaim, DefaultRoleClaim)] = OperatorRole
	} else {
		claims[orDefault(c.AccountClaim, DefaultAccountClaim)] = c.Account
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(c.Secret)
}
