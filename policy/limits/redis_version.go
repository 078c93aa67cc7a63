package limits

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// The scripts use PEXPIRE's GT option, which Redis has had since 7.0: an
// older server refuses the admission script on every call, so the
// gateway refuses such a server when it starts instead.
const minRedisMajor = 7

// RedisVersionError is a Redis server too old for the scripts.
type RedisVersionError struct {
	Addr    string // the server, when the client names it
	Version string // as INFO server reports it
}

func (e *RedisVersionError) Error() string {
	at := ""
	if e.Addr != "" {
		at = " at " + e.Addr
	}
	return fmt.Sprintf("limits: Redis%s is version %s; the limiter needs Redis %d.0 or newer", at, e.Version, minRedisMajor)
}

// CheckRedisVersion asks every primary the client reaches for its
// version and returns a *RedisVersionError for one older than 7.0. Any
// other error is Redis not answering, which the limiter's fallback
// covers while it lasts.
func CheckRedisVersion(ctx context.Context, c redis.UniversalClient) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		var tooOld error
		err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			err := checkOneVersion(ctx, m, m.Options().Addr)
			if _, ok := err.(*RedisVersionError); ok {
				mu.Lock()
				tooOld = err
				mu.Unlock()
				return nil
			}
			return err
		})
		if tooOld != nil {
			return tooOld
		}
		return err
	}
	addr := ""
	if sc, ok := c.(*redis.Client); ok {
		addr = sc.Options().Addr
	}
	return checkOneVersion(ctx, c, addr)
}

func checkOneVersion(ctx context.Context, c redis.Cmdable, addr string) error {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("limits: reading the Redis version: %w", err)
	}
	return checkInfoVersion(info, addr)
}

// checkInfoVersion judges the version in an INFO server answer.
func checkInfoVersion(info, addr string) error {
	version := infoField(info, "redis_version")
	major, _, _ := strings.Cut(version, ".")
	if n, err := strconv.Atoi(major); err != nil || n < minRedisMajor {
		return &RedisVersionError{Addr: addr, Version: version}
	}
	return nil
}

// infoField is the value of field in an INFO answer ("field:value"
// lines); empty when it has none.
func infoField(info, field string) string {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok && k == field {
			return v
		}
	}
	return ""
}

// RefuseOldRedis is the check a gateway runs as its limiter starts: an
// error for a server older than 7.0, nothing for one that does not
// answer yet (logged; the limiter's fallback decides until it does).
func RefuseOldRedis(c redis.UniversalClient, logger *zap.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := CheckRedisVersion(ctx, c)
	var old *RedisVersionError
	if errors.As(err, &old) {
		return err
	}
	if err != nil {
		logger.Warn("could not check the Redis version", zap.Error(err))
	}
	return nil
}
