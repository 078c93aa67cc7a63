package files

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchyardhq/switchyard/storage"
	"github.com/switchyardhq/switchyard/storage/blob"
)

// Janitor removes expired files (retention over, or deleted) and the
// leftovers of uploads that never committed (lease over): first the
// blob, then the row, so that a crash between the two leaves a row that
// the next sweep finds again. Several nodes may run janitors on the same
// stores at once: blob deletion and storage.FileMeta.Remove are idempotent, so
// the worst case is duplicated work. Expired files are already invisible
// to clients; the janitor only reclaims space.
type Janitor struct {
	// Stores to clean. Required.
	Meta  storage.FileMeta
	Blobs blob.Store

	// Clock that decides what has expired. Default: time.Now.
	Now func() time.Time

	// Rows handled per storage.FileMeta.Expired call. Default: 100.
	BatchSize int

	// Time between sweeps in Run. Default: 10m.
	Interval time.Duration

	// Logger for sweep failures. Default: discard.
	Logger *slog.Logger
}

// Sweep removes everything expired at the janitor's current time, in
// batches, and reports how many files it removed. It stops early on a
// batch in which nothing could be removed, leaving those rows for a
// later sweep, and returns the last failure.
func (j *Janitor) Sweep(ctx context.Context) (removed int, err error) {
	now := time.Now
	if j.Now != nil {
		now = j.Now
	}
	batch := orDefault(j.BatchSize, 100)
	t := now()
	for {
		rows, lerr := j.Meta.Expired(ctx, t, batch)
		if lerr != nil {
			return removed, lerr
		}
		progress := 0
		for _, f := range rows {
			if cerr := ctx.Err(); cerr != nil {
				return removed, cerr
			}
			if derr := j.Blobs.Delete(ctx, blobKey(f.ID)); derr != nil {
				err = derr
				continue
			}
			if rerr := j.Meta.Remove(ctx, f.ID, t); rerr != nil {
				err = rerr
				continue
			}
			progress++
		}
		removed += progress
		if len(rows) < batch || progress == 0 {
			return removed, err
		}
	}
}

// Run sweeps at once and then every Interval until ctx is done.
func (j *Janitor) Run(ctx context.Context) {
	log := j.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(orDefault(j.Interval, 10*time.Minute))
	defer tick.Stop()
	for {
		n, err := j.Sweep(ctx)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "files janitor: sweep incomplete", "removed", n, "error", err)
		} else if n > 0 {
			log.InfoContext(ctx, "files janitor: removed expired files", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
