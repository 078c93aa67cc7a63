package hmacsig

import (
	"errors"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	secret, body := []byte("whsec_test"), []byte(`{"id":"evt_1"}`)
	now := time.Unix(1_900_000_000, 0)
	good := Sign(secret, now, body)
	tests := []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"signed now", good, body, now, nil},
		{"within the tolerance", good, body, now.Add(4 * time.Minute), nil},
		{"stale", good, body, now.Add(6 * time.Minute), ErrTimestamp},
		{"from the future", good, body, now.Add(-6 * time.Minute), ErrTimestamp},
		{"body changed", good, []byte(`{"id":"evt_2"}`), now, ErrSignature},
		{"other secret", Sign([]byte("other"), now, body), body, now, ErrSignature},
		{"rotation: one of two matches", Sign([]byte("other"), now, body) + ",v1=" + good[len("t=1900000000,v1="):], body, now, nil},
		{"timestamp moved", "t=1900000001" + good[len("t=1900000000"):], body, now, ErrSignature},
		{"empty", "", body, now, ErrMalformed},
		{"no signature", "t=1900000000", body, now, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Verify(tt.header, tt.body, secret, tt.now, DefaultTolerance); !errors.Is(err, tt.want) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}
