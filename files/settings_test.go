package files

import (
	"strings"
	"testing"
)

func TestSettingsValidate(t *testing.T) {
	for _, p := range []string{"", "fail_closed", "fail_open"} {
		if err := (&Settings{ScanPolicy: p}).Validate(); err != nil {
			t.Errorf("scan_policy %q: %v", p, err)
		}
	}
	if err := (&Settings{ScanPolicy: "fail_sideways"}).Validate(); err == nil || !strings.Contains(err.Error(), "unknown scan_policy") {
		t.Errorf("an unknown policy: %v", err)
	}
	if err := (*Settings)(nil).Validate(); err != nil {
		t.Errorf("nil: %v", err)
	}
}
