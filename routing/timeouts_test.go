package routing

import (
	"testing"
	"time"
)

func TestTimeoutsOrDefaults(t *testing.T) {
	got := Timeouts{Dial: time.Second, ResponseHeader: -1}.OrDefaults()
	want := Timeouts{Dial: time.Second, ResponseHeader: DefaultResponseHeaderTimeout, Idle: DefaultStreamIdleTimeout}
	if got != want {
		t.Errorf("OrDefaults = %+v, want %+v", got, want)
	}
}
