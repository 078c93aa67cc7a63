package admin

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// Defaults of JWKSConfig.
const (
	DefaultJWKSMaxAge     = time.Hour
	DefaultJWKSMinRefresh = 30 * time.Second
	DefaultJWKSTimeout    = 10 * time.Second
	// maxJWKSBytes bounds the key set document; real ones are a few KiB.
	maxJWKSBytes = 1 << 20
)

// JWKSConfig says where a JWKS finds its keys and how often it looks.
type JWKSConfig struct {
	// URL of the JSON Web Key Set (RFC 7517). Required.
	URL string
	// MaxAge is how long fetched keys are used before they are fetched
	// again. Default: DefaultJWKSMaxAge.
	MaxAge time.Duration
	// MinRefresh is the shortest time between two fetches, however many
	// tokens name unknown key ids: a flood of forged kids cannot turn
	// into a flood of requests to the identity provider. Default:
	// DefaultJWKSMinRefresh.
	MinRefresh time.Duration
	// Client fetches the set. Default: a client with DefaultJWKSTimeout.
	Client *http.Client
	// Now is the clock. Default: time.Now.
	Now func() time.Time
}

// JWKS is a cached JSON Web Key Set: the RSA and P-256 keys an identity
// provider signs tokens with. Keys are fetched on first use, again after
// MaxAge, and again when a token names a key id the cache lacks (a key
// rotation), at most once per MinRefresh. It is safe for concurrent use.
type JWKS struct {
	cfg JWKSConfig

	mu      sync.Mutex // held while fetching, so one fetch runs at a time
	keys    map[string]jwk
	fetched time.Time // last successful fetch
	tried   time.Time // last attempt
	lastErr error
}

// jwk is one usable key of the set.
type jwk struct {
	key any    // *rsa.PublicKey or *ecdsa.PublicKey
	alg string // "" when the set does not say
}

// NewJWKS returns a key set that fetches from cfg.URL when first used.
func NewJWKS(cfg JWKSConfig) (*JWKS, error) {
	if cfg.URL == "" {
		return nil, errors.New("admin: JWKS URL is empty")
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultJWKSMaxAge
	}
	if cfg.MinRefresh <= 0 {
		cfg.MinRefresh = DefaultJWKSMinRefresh
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: DefaultJWKSTimeout}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &JWKS{cfg: cfg}, nil
}

// Key returns the public key with id kid for algorithm alg ("RS256" or
// "ES256"). An empty kid matches a set holding exactly one key of the
// algorithm's type.
func (s *JWKS) Key(ctx context.Context, kid, alg string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	stale := s.keys == nil || now.Sub(s.fetched) >= s.cfg.MaxAge
	if stale && s.mayTry(now) {
		s.refresh(ctx, now)
	}
	if k, ok := s.find(kid, alg); ok {
		return k, nil
	}
	// An unknown kid may be a key the provider has just rotated in.
	if s.mayTry(now) {
		s.refresh(ctx, now)
		if k, ok := s.find(kid, alg); ok {
			return k, nil
		}
	}
	if s.keys == nil && s.lastErr != nil {
		return nil, fmt.Errorf("fetching the JWKS: %w", s.lastErr)
	}
	return nil, fmt.Errorf("no %s key with id %q in the JWKS", alg, kid)
}

func (s *JWKS) mayTry(now time.Time) bool {
	return s.tried.IsZero() || now.Sub(s.tried) >= s.cfg.MinRefresh
}

// refresh fetches the set. On failure the keys already held stay in use,
// so an identity provider that is briefly down locks no one out; the
// next attempt waits MinRefresh.
func (s *JWKS) refresh(ctx context.Context, now time.Time) {
	s.tried = now
	keys, err := s.fetch(ctx)
	if err != nil {
		s.lastErr = err
		return
	}
	s.keys, s.fetched, s.lastErr = keys, now, nil
}

func (s *JWKS) find(kid, alg string) (any, bool) {
	want := keyTypeFor(alg)
	if kid != "" {
		k, ok := s.keys[kid]
		if !ok || keyType(k.key) != want || (k.alg != "" && k.alg != alg) {
			return nil, false
		}
		return k.key, true
	}
	var found any
	for _, k := range s.keys {
		if keyType(k.key) == want && (k.alg == "" || k.alg == alg) {
			if found != nil {
				return nil, false // ambiguous without a kid
			}
			found = k.key
		}
	}
	return found, found != nil
}

func keyTypeFor(alg string) string {
	switch alg {
	case "RS256":
		return "RSA"
	case "ES256":
		return "EC"
	}
	return ""
}

func keyType(k any) string {
	switch k.(type) {
	case *rsa.PublicKey:
		return "RSA"
	case *ecdsa.PublicKey:
		return "EC"
	}
	return ""
}

func (s *JWKS) fetch(ctx context.Context) (map[string]jwk, error) {
	// The fetch serves every caller waiting on the lock, not only the
	// one whose request started it: its client leaving must not fail it.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultJWKSTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d", s.cfg.URL, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("GET %s: the key set is over %d bytes", s.cfg.URL, maxJWKSBytes)
	}
	return parseJWKS(body)
}

// rawJWK is a JSON Web Key as RFC 7517 and 7518 spell it.
type rawJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS reads the RSA and P-256 signing keys of a key set. Keys of
// other types and curves, and keys for encryption, are skipped; a set
// without one usable key is an error.
func parseJWKS(doc []byte) (map[string]jwk, error) {
	var set struct {
		Keys []rawJWK `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("reading the key set: %v", err)
	}
	keys := make(map[string]jwk)
	for i, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		var key any
		var err error
		switch k.Kty {
		case "RSA":
			key, err = rsaKey(k)
		case "EC":
			if k.Crv != "P-256" {
				continue
			}
			key, err = ecKey(k)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("key %d (kid %q): %v", i, k.Kid, err)
		}
		keys[k.Kid] = jwk{key: key, alg: k.Alg}
	}
	if len(keys) == 0 {
		return nil, errors.New("the key set holds no RSA or P-256 signing key")
	}
	return keys, nil
}

func rsaKey(k rawJWK) (*rsa.PublicKey, error) {
	n, err := b64int(k.N)
	if err != nil {
		return nil, fmt.Errorf("n: %v", err)
	}
	e, err := b64int(k.E)
	if err != nil {
		return nil, fmt.Errorf("e: %v", err)
	}
	if n.BitLen() < 2048 {
		return nil, fmt.Errorf("an RSA key of %d bits is too short", n.BitLen())
	}
	if !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
		return nil, errors.New("unusable RSA exponent")
	}
	return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
}

func ecKey(k rawJWK) (*ecdsa.PublicKey, error) {
	x, err := b64int(k.X)
	if err != nil {
		return nil, fmt.Errorf("x: %v", err)
	}
	y, err := b64int(k.Y)
	if err != nil {
		return nil, fmt.Errorf("y: %v", err)
	}
	// crypto/ecdh checks that the point is on the curve.
	if x.BitLen() > 256 || y.BitLen() > 256 {
		return nil, errors.New("the point is not on P-256")
	}
	point := make([]byte, 65)
	point[0] = 4 // uncompressed
	x.FillBytes(point[1:33])
	y.FillBytes(point[33:])
	if _, err := ecdh.P256().NewPublicKey(point); err != nil {
		return nil, errors.New("the point is not on P-256")
	}
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: x, Y: y}, nil
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("not base64url")
	}
	return new(big.Int).SetBytes(b), nil
}
