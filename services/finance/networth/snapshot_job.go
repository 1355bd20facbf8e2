package networth

import (
	"context"
	"time"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/services/finance"
)

// DefaultSnapshotInterval is how often the snapshot job looks for users
// without today's snapshot. A day's snapshot is taken at the first tick of
// that day (service clock, UTC), so at most this long after midnight.
const DefaultSnapshotInterval = 10 * time.Minute

// snapshotBatch bounds one store read of the job.
const snapshotBatch = 500

// SnapshotDue is one run of the daily net-worth snapshot job: it takes
// today's snapshot (service clock, UTC) for every user who has none yet and
// reports how many it took. Replicas may run it at once: a snapshot is
// first-writer-wins per user and day (the table's key, ON CONFLICT DO
// NOTHING), so a user gets one snapshot a day whoever takes it. A user
// whose snapshot fails is logged and skipped; the next run retries.
func (s *Service) SnapshotDue(ctx context.Context) (int, error) {
	today := finance.Day(s.k.Now())
	taken, after := 0, ""
	for {
		ids, err := s.store.UsersWithoutSnapshot(ctx, today, after, snapshotBatch)
		if err != nil {
			return taken, finance.Internal("users without snapshot", err)
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return taken, err
			}
			if _, _, err := s.snapshotNow(ctx, id); err != nil {
				s.k.Log().WarnContext(ctx, "net-worth snapshot", "user_id", id, "err", err)
				continue
			}
			taken++
		}
		if len(ids) < snapshotBatch {
			return taken, nil
		}
		after = ids[len(ids)-1]
	}
}

// RunSnapshots runs SnapshotDue at once and then every interval until ctx
// ends (the scheduled job; server.Run starts it). A failed run is logged by
// the loop and the next run is the retry.
func (s *Service) RunSnapshots(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultSnapshotInterval
	}
	periodic.Task{Name: "net-worth snapshot job", Every: every, AtStart: true, Log: s.k.Log(),
		Run: func(ctx context.Context) error {
			n, err := s.SnapshotDue(ctx)
			if n > 0 {
				s.k.Log().InfoContext(ctx, "net-worth snapshots taken", "count", n)
			}
			return err
		}}.Loop(ctx)
}
