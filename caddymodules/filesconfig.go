package caddymodules

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/switchyardhq/switchyard/files"
	"github.com/switchyardhq/switchyard/internal/guard"
	"github.com/switchyardhq/switchyard/node"
	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
)

// fileStore is the blob store of one location and the janitor that sweeps
// it, shared by every config that names the same store and location.
type fileStore struct {
	blobs blob.Store
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

func (f *fileStore) Destruct() error {
	f.stop()
	f.wg.Wait()
	return f.blobs.Close()
}

var fileStores = caddy.NewUsagePool()

// janitorGoroutine names the files janitor as internal/guard counts its
// panics; janitorRestartPause is how long a janitor that panicked waits
// before it sweeps again.
var janitorGoroutine = guard.Name("files_janitor")

const janitorRestartPause = time.Minute

func fileStoreKey(s node.Settings, location string) string { return s.StoreKey() + "|" + location }

// acquireFileStore opens the blob store and starts its janitor.
func acquireFileStore(s node.Settings, location string, meta storage.FileMeta, interval time.Duration, logger *zap.Logger) (*fileStore, error) {
	v, _, err := fileStores.LoadOrNew(fileStoreKey(s, location), func() (caddy.Destructor, error) {
		var (
			blobs blob.Store
			err   error
		)
		if strings.HasPrefix(location, "s3://") {
			blobs, err = blob.OpenBucket(context.Background(), location)
		} else {
			blobs, err = blob.NewDir(location)
		}
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		fs := &fileStore{blobs: blobs, stop: cancel}
		j := &files.Janitor{Meta: meta, Blobs: blobs, Interval: interval, Logger: slogFor(logger.Named("files.janitor"))}
		fs.wg.Add(1)
		go func() {
			defer fs.wg.Done()
			// A janitor that panicked is started again, a sweep at once
			// and then every interval, rather than leaving expired files
			// for good.
			guard.Loop(ctx, janitorGoroutine, janitorRestartPause, j.Run)
		}()
		return fs, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*fileStore), nil
}

func slogFor(l *zap.Logger) *slog.Logger { return slog.New(zapslog.NewHandler(l.Core())) }

// unmarshalFiles parses the files block of the switchyard option:
//
//	files {
//		blobs            <dir>|<s3 url>
//		clamd            <addr>
//		scan_policy      fail_closed|fail_open
//		janitor_interval <duration>
//		purposes         <purpose...>
//	}
func unmarshalFiles(d *caddyfile.Dispenser) (*files.Settings, error) {
	c := new(files.Settings)
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	err := blockOptions(d, 1, "files", map[string]optionReader{
		"blobs":            checkedOption(&c.Blobs, files.CheckBlobs),
		"clamd":            checkedOption(&c.Clamd, files.CheckClamdAddr),
		"scan_policy":      checkedOption(&c.ScanPolicy, files.CheckScanPolicy),
		"janitor_interval": positiveDurationOption(&c.JanitorInterval),
		"purposes": func(d *caddyfile.Dispenser) error {
			if c.Purposes = d.RemainingArgs(); len(c.Purposes) == 0 {
				return d.ArgErr()
			}
			return nil
		},
	})
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, d.Err(err.Error())
	}
	return c, nil
}
