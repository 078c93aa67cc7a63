package admin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/switchyardhq/switchyard/internal/fakeclock"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef-test")

var t0 = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

func claims(over map[string]any) jwt.MapClaims {
	c := jwt.MapClaims{"sub": "ops@example.com", "aud": "switchyard", "exp": t0.Add(time.Hour).Unix(), "iat": t0.Unix(), "account": "alice"}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func hs256(t *testing.T, secret []byte, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func signed(t *testing.T, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unsigned is a token with alg "none", built by hand as an attacker would.
func unsigned(c jwt.MapClaims) string {
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(b) + "."
}

// jwksServer publishes keys and lets the test rotate them.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	doc     []byte
	fetches atomic.Int32
}

func newJWKSServer(t *testing.T) *jwksServer {
	s := &jwksServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(s.doc)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) publish(keys ...map[string]string) {
	b, _ := json.Marshal(map[string]any{"keys": keys})
	s.mu.Lock()
	s.doc = b
	s.mu.Unlock()
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(kid string, k *rsa.PrivateKey) map[string]string {
	return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PrivateKey) map[string]string {
	return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256",
		"x": b64(k.X.FillBytes(make([]byte, 32))), "y": b64(k.Y.FillBytes(make([]byte, 32)))}
}

var (
	keysOnce sync.Once
	rsaKey1  *rsa.PrivateKey
	rsaKey2  *rsa.PrivateKey
	ecKey1   *ecdsa.PrivateKey
)

func genKeys(t *testing.T) {
	keysOnce.Do(func() {
		var err error
		if rsaKey1, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if rsaKey2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if ecKey1, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
}

func TestVerifyRefusesBadTokens(t *testing.T) {
	genKeys(t)
	srv := newJWKSServer(t)
	srv.publish(rsaJWK("r1", rsaKey1), ecJWK("e1", ecKey1))
	clock := fakeclock.New(t0)
	jwks, err := NewJWKS(JWKSConfig{URL: srv.URL, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	both, err := NewVerifier(VerifierConfig{Secret: testSecret, JWKS: jwks, Issuer: "https://idp.example", Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	rsOnly, err := NewVerifier(VerifierConfig{JWKS: jwks, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	hsOnly, err := NewVerifier(VerifierConfig{Secret: testSecret, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey1.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	iss := map[string]any{"iss": "https://idp.example"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{"iss": "https://idp.example"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	tests := []struct {
		name     string
		v        *Verifier
		token    string
		signedOK bool // a trusted key signed it: the refusal is audited
	}{
		{"garbage", both, "not-a-jwt", false},
		{"expired", both, hs256(t, testSecret, claims(with(map[string]any{"exp": t0.Add(-time.Minute).Unix()}))), true},
		{"missing exp", both, hs256(t, testSecret, claims(with(map[string]any{"exp": nil}))), true},
		{"not yet valid", both, hs256(t, testSecret, claims(with(map[string]any{"nbf": t0.Add(time.Hour).Unix()}))), true},
		{"wrong signature", both, hs256(t, []byte("another-secret-another-secret-another"), claims(iss)), false},
		{"alg none", both, unsigned(claims(iss)), false},
		{"alg none, HS only", hsOnly, unsigned(claims(nil)), false},
		{"wrong audience", both, hs256(t, testSecret, claims(with(map[string]any{"aud": "other"}))), true},
		{"wrong issuer", both, hs256(t, testSecret, claims(map[string]any{"iss": "https://evil.example"})), true},
		{"no issuer", both, hs256(t, testSecret, claims(nil)), true},
		{"no sub", both, hs256(t, testSecret, claims(with(map[string]any{"sub": nil}))), true},
		{"no account, no role", both, hs256(t, testSecret, claims(with(map[string]any{"account": nil}))), true},
		{"account not a string", both, hs256(t, testSecret, claims(with(map[string]any{"account": 7}))), true},
		{"HS256 signed with the RSA public key, RS-only verifier", rsOnly, hs256(t, pubPEM, claims(nil)), false},
		{"HS256 signed with the RSA public key, both", both, hs256(t, pubPEM, claims(iss)), false},
		{"RS256 on an HS-only verifier", hsOnly, signed(t, jwt.SigningMethodRS256, rsaKey1, "r1", claims(nil)), false},
		{"RS256 by an unknown key", rsOnly, signed(t, jwt.SigningMethodRS256, rsaKey2, "r1", claims(nil)), false},
		{"RS256 with an unknown kid", rsOnly, signed(t, jwt.SigningMethodRS256, rsaKey2, "r9", claims(nil)), false},
		{"ES256 claiming the RSA kid", rsOnly, signed(t, jwt.SigningMethodES256, ecKey1, "r1", claims(nil)), false},
		{"RS384 is not accepted", rsOnly, signed(t, jwt.SigningMethodRS384, rsaKey1, "r1", claims(nil)), false},
		{"HS512 is not accepted", hsOnly, signed(t, jwt.SigningMethodHS512, testSecret, "", claims(nil)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.v.Verify(t.Context(), tt.token)
			var te *TokenError
			if !errors.As(err, &te) {
				t.Fatalf("Verify = %+v, %v; want a *TokenError", p, err)
			}
			if te.SignatureValid != tt.signedOK {
				t.Errorf("SignatureValid = %v (%s), want %v", te.SignatureValid, te.Reason, tt.signedOK)
			}
		})
	}

	// The same verifiers accept good tokens of each kind.
	good := []struct {
		name  string
		v     *Verifier
		token string
	}{
		{"HS256", both, hs256(t, testSecret, claims(iss))},
		{"RS256", rsOnly, signed(t, jwt.SigningMethodRS256, rsaKey1, "r1", claims(nil))},
		{"ES256", rsOnly, signed(t, jwt.SigningMethodES256, ecKey1, "e1", claims(nil))},
		{"expired within the leeway", hsOnly, hs256(t, testSecret, claims(map[string]any{"exp": t0.Add(-10 * time.Second).Unix()}))},
	}
	for _, g := range good {
		t.Run("accepts "+g.name, func(t *testing.T) {
			p, err := g.v.Verify(t.Context(), g.token)
			if err != nil || p.Subject != "ops@example.com" || p.Operator || !p.MayManage("alice") || p.MayManage("bob") {
				t.Errorf("Verify = %+v, %v; want alice's principal", p, err)
			}
		})
	}
}

func TestVerifyRolesAndClaims(t *testing.T) {
	v, err := NewVerifier(VerifierConfig{Secret: testSecret, AccountClaim: "https://example.com/tenants", RoleClaim: "roles",
		Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(t.Context(), hs256(t, testSecret, claims(map[string]any{"account": nil, "roles": []any{"viewer", "operator"}})))
	if err != nil || !p.Operator || !p.MayManage("anyone") || p.Role() != "operator" {
		t.Errorf("operator in a roles array: %+v, %v", p, err)
	}
	p, err = v.Verify(t.Context(), hs256(t, testSecret, claims(map[string]any{"account": nil, "https://example.com/tenants": []any{"a", "b"}})))
	if err != nil || p.Operator || !p.MayManage("a") || !p.MayManage("b") || p.MayManage("c") || p.Role() != "account" {
		t.Errorf("accounts in a custom claim: %+v, %v", p, err)
	}
	// The default claim name means nothing once another is configured.
	if _, err := v.Verify(t.Context(), hs256(t, testSecret, claims(nil))); err == nil {
		t.Error("a token naming its account in the default claim was accepted by a verifier configured for another")
	}
	if _, err := v.Verify(t.Context(), hs256(t, testSecret, claims(map[string]any{"roles": "operator", "role": nil}))); err != nil {
		t.Errorf("operator as a string role: %v", err)
	}
}

func TestJWKSRotation(t *testing.T) {
	genKeys(t)
	srv := newJWKSServer(t)
	srv.publish(rsaJWK("k1", rsaKey1))
	clock := fakeclock.New(t0)
	jwks, _ := NewJWKS(JWKSConfig{URL: srv.URL, Now: clock.Now, MinRefresh: 30 * time.Second, MaxAge: time.Hour})
	v, _ := NewVerifier(VerifierConfig{JWKS: jwks, Now: clock.Now})
	ok := func(token string) error {
		_, err := v.Verify(t.Context(), token)
		return err
	}
	old := signed(t, jwt.SigningMethodRS256, rsaKey1, "k1", claims(nil))
	if err := ok(old); err != nil {
		t.Fatalf("token of the published key: %v", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("%d fetches after the first token, want 1", n)
	}
	for range 5 {
		_ = ok(old)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Errorf("%d fetches for cached keys, want 1", n)
	}

	// The provider rotates: k2 replaces k1.
	srv.publish(rsaJWK("k2", rsaKey2))
	fresh := signed(t, jwt.SigningMethodRS256, rsaKey2, "k2", claims(nil))
	if err := ok(fresh); err == nil {
		t.Error("a new kid was accepted before MinRefresh allowed a fetch")
	}
	clock.Advance(30 * time.Second)
	if err := ok(fresh); err != nil {
		t.Fatalf("token of the rotated-in key after MinRefresh: %v", err)
	}
	if err := ok(old); err == nil {
		t.Error("token of the rotated-out key still accepted after the refresh")
	}
	// Forged kids do not turn into fetches.
	before := srv.fetches.Load()
	for i := range 20 {
		_ = ok(signed(t, jwt.SigningMethodRS256, rsaKey2, "forged"+string(rune('a'+i)), claims(nil)))
	}
	if n := srv.fetches.Load() - before; n != 0 {
		t.Errorf("%d fetches for forged kids within MinRefresh, want 0", n)
	}

	// A provider that is down keeps the cached keys in use past MaxAge.
	srv.mu.Lock()
	srv.doc = []byte("<html>down</html>")
	srv.mu.Unlock()
	clock.Advance(2 * time.Hour)
	later := signed(t, jwt.SigningMethodRS256, rsaKey2, "k2", claims(map[string]any{"exp": t0.Add(3 * time.Hour).Unix()}))
	if err := ok(later); err != nil {
		t.Errorf("cached key refused while the provider is down: %v", err)
	}
}

func TestParseJWKSRefusesWeakKeys(t *testing.T) {
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for name, doc := range map[string]any{
		"short RSA":      map[string]any{"keys": []any{rsaJWK("s", small)}},
		"off the curve":  map[string]any{"keys": []any{map[string]string{"kty": "EC", "crv": "P-256", "kid": "x", "x": b64([]byte{1}), "y": b64([]byte{2})}}},
		"nothing usable": map[string]any{"keys": []any{map[string]string{"kty": "oct", "k": "c2VjcmV0"}}},
	} {
		b, _ := json.Marshal(doc)
		if _, err := parseJWKS(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestMintRoundTrip(t *testing.T) {
	v, _ := NewVerifier(VerifierConfig{Secret: testSecret, Issuer: "me", Audience: "aud1"})
	tok, err := Mint(MintConfig{Secret: testSecret, Subject: "cli", Operator: true, TTL: time.Hour, Issuer: "me", Audience: "aud1"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := v.Verify(t.Context(), tok); err != nil || !p.Operator || p.Subject != "cli" {
		t.Errorf("minted operator token: %+v, %v", p, err)
	}
	tok, _ = Mint(MintConfig{Secret: testSecret, Subject: "cli", Account: "alice", TTL: time.Hour, Issuer: "me", Audience: "aud1"})
	if p, err := v.Verify(t.Context(), tok); err != nil || p.Operator || !p.MayManage("alice") {
		t.Errorf("minted account token: %+v, %v", p, err)
	}
	tok, _ = Mint(MintConfig{Secret: testSecret, Subject: "cli", Account: "alice", TTL: time.Hour, Audience: "aud1"})
	if _, err := v.Verify(t.Context(), tok); err == nil {
		t.Error("a token without the configured issuer was accepted")
	}
	for _, bad := range []MintConfig{
		{Secret: []byte("short"), Subject: "s", Operator: true, TTL: time.Hour},
		{Secret: testSecret, Subject: "s", TTL: time.Hour},
		{Secret: testSecret, Subject: "s", Operator: true, Account: "a", TTL: time.Hour},
		{Secret: testSecret, Subject: "s", Operator: true},
	} {
		if _, err := Mint(bad); err == nil {
			t.Errorf("Mint(%+v) succeeded", bad)
		}
	}
	if !strings.HasPrefix(tok, "eyJ") {
		t.Errorf("token %q is not a JWS", tok)
	}
}
