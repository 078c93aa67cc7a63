package billing

import (
	"errors"
	"testing"
)

func TestParseUSD(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		cents int64
		bad   bool
	}{
		{name: "whole", in: "25", cents: 2500},
		{name: "two decimals", in: "12.50", cents: 1250},
		{name: "one decimal", in: "12.5", cents: 1250},
		{name: "dollar sign", in: "$5", cents: 500},
		{name: "cents only", in: "0.01", cents: 1},
		{name: "large", in: "1000.01", cents: 100001},
		{name: "spaces", in: " 7 ", cents: 700},
		{name: "three decimals", in: "4.999", bad: true},
		{name: "negative", in: "-5", bad: true},
		{name: "plus", in: "+5", bad: true},
		{name: "letters", in: "abc", bad: true},
		{name: "empty", in: "", bad: true},
		{name: "dot only", in: ".", bad: true},
		{name: "no whole part", in: ".50", bad: true},
		{name: "trailing dot", in: "5.", bad: true},
		{name: "exponent", in: "1e3", bad: true},
		{name: "comma", in: "1,000", bad: true},
		{name: "overflow", in: "99999999999999999999", bad: true},
		{name: "nan", in: "NaN", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUSD(tt.in)
			if tt.bad {
				if !errors.Is(err, ErrAmountFormat) {
					t.Fatalf("ParseUSD(%q) = %d, %v; want ErrAmountFormat", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.cents {
				t.Fatalf("ParseUSD(%q) = %d, %v; want %d", tt.in, got, err, tt.cents)
			}
		})
	}
}

func TestFormatCents(t *testing.T) {
	for in, want := range map[int64]string{0: "$0.00", 5: "$0.05", 1050: "$10.50", -5: "-$0.05", 100000: "$1000.00"} {
		if got := FormatCents(in); got != want {
			t.Errorf("FormatCents(%d) = %q, want %q", in, got, want)
		}
	}
}
