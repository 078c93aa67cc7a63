package policy

import (
	"fmt"
	"strings"
	"time"
)

// Revision names a published revision of the v3.3 spec.
type Revision string

const (
	RevisionA Revision = "A"
	RevisionB Revision = "B"
)

// DefaultRevision is used when none is configured.
const DefaultRevision = RevisionB

// ParseRevision accepts "A" or "B" in either case.
func ParseRevision(s string) (Revision, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "A":
		return RevisionA, nil
	case "B":
		return RevisionB, nil
	}
	return "", fmt.Errorf("unknown spec revision %q: want A or B", s)
}

const (
	mib = 1 << 20
	mb  = 1_000_000
)

// Profile holds every limit and behaviour that differs between the spec's
// revisions (section 8). Later code reads limits only from a Profile, never
// from constants, so that one switch selects a revision and each value can
// still be overridden.
type Profile struct {
	Revision Revision

	// Requests admitted per API key: RequestsPerPeriod within Period.
	RequestsPerPeriod int
	Period            time.Duration
	// Rolling is true when no more than RequestsPerPeriod are admitted in
	// any window of length Period (both revisions), false when the limit is
	// a rate that admits bursts of up to RequestsPerPeriod on top of the
	// sustained pace (up to twice as many in one window).
	Rolling bool

	ConcurrentStreams int // per API key

	MaxActiveKeys     int           // per account
	KeyCreations      int           // per account within KeyCreationWindow
	KeyCreationWindow time.Duration //
	MaxUploadBytes    int64         // per file
	MaxStoredFiles    int           // live files per account
	MaxStoredBytes    int64         // per account, uploaded and generated
	MaxInlineImage    int64         // decoded bytes
	MaxSystemChars    int           // 0: shorten to fit instead of refusing (A)
	UsageAlways       bool          // B: the final chunk always carries usage
	MaxChargeCents    int64         // per request; 0: no cap (A)
	MinChargeCents    int64         //
	MinTopUpCents     int64         //
	MaxTopUpCents     int64         //
	FileRetention     time.Duration //
	InputPerMTok      MTokPrice     // price of 1M input tokens
	OutputPerMTok     MTokPrice     // price of 1M output tokens

	// ModelPrices are the prices of the models named, by the model name
	// a request gives; every other model costs InputPerMTok and
	// OutputPerMTok (see ForModel). Default: nil, one price for all.
	// It is shared by copies of the Profile and must not be changed once
	// the Profile is in use.
	ModelPrices map[string]ModelPrice

	// HoldPrices are the prices a hold is estimated at for the models
	// named, where they differ from ModelPrices: a model that may be
	// answered by a dearer fallback holds at the dearest prices of its
	// chain, so that a fallback cannot charge more than was held (see
	// ForHold). Default: nil, holds at each model's own prices. Shared
	// like ModelPrices.
	HoldPrices map[string]ModelPrice
}

// ProfileFor returns the defaults of a revision.
func ProfileFor(r Revision) Profile {
	p := Profile{
		Revision:          r,
		MaxActiveKeys:     25,
		KeyCreations:      5,
		KeyCreationWindow: time.Hour,
		MaxStoredFiles:    100,
		MinChargeCents:    1,
		MinTopUpCents:     500,
		MaxTopUpCents:     100_000,
		FileRetention:     30 * 24 * time.Hour,
		InputPerMTok:      CentsPerMTok(300),
		OutputPerMTok:     CentsPerMTok(1000),
		Period:            time.Minute,
		Rolling:           true,
	}
	switch r {
	case RevisionA:
		p.RequestsPerPeriod = 150
		p.ConcurrentStreams = 34
		p.MaxUploadBytes = 25 * mib
		p.MaxStoredBytes = 500 * mib
		p.MaxInlineImage = 10 * mib
	default:
		p.Revision = RevisionB
		p.RequestsPerPeriod = 60
		p.ConcurrentStreams = 5
		p.MaxUploadBytes = 25 * mb
		p.MaxStoredBytes = 500 * mb
		p.MaxInlineImage = 10 * mb
		p.MaxSystemChars = 2000
		p.UsageAlways = true
		p.MaxChargeCents = 500
	}
	return p
}
