// Package billing turns token counts into charges in integer cents and
// keeps money arithmetic exact: amounts are never floats.
package billing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrAmountFormat is returned for strings that are not a dollar amount.
var ErrAmountFormat = errors.New("not a dollar amount: use digits with at most two decimals, such as 25 or 12.50")

// ParseUSD parses a non-negative dollar amount with at most two decimals
// ("25", "12.5", "12.50", "$12.50") into cents, without floating point.
func ParseUSD(s string) (int64, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || !allDigits(whole) || (hasFrac && (len(frac) == 0 || len(frac) > 2 || !allDigits(frac))) {
		return 0, ErrAmountFormat
	}
	dollars, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, ErrAmountFormat
	}
	cents := dollars * 100
	if hasFrac {
		f, _ := strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
		cents += f
	}
	return cents, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatCents renders cents as dollars: 1050 is "$10.50", -5 is "-$0.05".
func FormatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign = "-"
		c = -c
	}
	return fmt.Sprintf("%s$%d.%02d", sign, c/100, c%100)
}
