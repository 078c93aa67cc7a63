package limits

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRedisVersionCheck(t *testing.T) {
	for _, tc := range []struct {
		info   string
		tooOld bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n", false},
		{"# Server\r\nredis_version:7.2.4\r\n", false},
		{"# Server\r\nredis_version:10.0.0\r\n", false},
		{"# Server\r\nredis_version:6.2.14\r\n", true},
		{"# Server\r\nredis_version:5.0.7\r\n", true},
		{"# Server\r\nredis_mode:standalone\r\n", true}, // no version: not one the scripts know
	} {
		err := checkInfoVersion(tc.info, "")
		var old *RedisVersionError
		if got := errors.As(err, &old); got != tc.tooOld {
			t.Errorf("%q: error %v, want too old %v", tc.info, err, tc.tooOld)
		}
		if tc.tooOld && !strings.Contains(err.Error(), "needs Redis 7.0 or newer") {
			t.Errorf("%q: the error %q does not say what the limiter needs", tc.info, err)
		}
	}
}

// TestRedisVersionCheckOnTheTestServer: the Redis the tests run on (7.0,
// Debian 12's) passes.
func TestRedisVersionCheckOnTheTestServer(t *testing.T) {
	if err := CheckRedisVersion(context.Background(), testRedisClient(t)); err != nil {
		t.Fatal(err)
	}
}
