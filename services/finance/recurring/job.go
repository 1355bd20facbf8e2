package recurring

import (
	"context"
	"slices"
	"time"

	"github.com/ledgerlane/platform/pkg/periodic"
	"github.com/ledgerlane/platform/services/finance"
)

// Mark is a user's pending recurring detection.
type Mark struct {
	UserID string
	// DueAt is when the oldest change not yet detected was marked.
	DueAt time.Time
	// Generation counts the user's marks; ClearRecurringDue compares it to
	// tell whether a sync marked the user during a detection.
	Generation int64
}

// DefaultInterval is how often the recurring detection job looks
// for users a sync marked due. Short, because it bounds how long bills and
// the forecast lag a sync; a run with nobody due is one indexed query.
const DefaultInterval = 2 * time.Second

const (
	// lease is how long a claim keeps other replicas off a user.
	// It must outlast a detection (about 5 s at a million rows); a replica
	// that dies mid-detection delays that user by at most this long.
	lease = 5 * time.Minute
	// retryAfter is how long a user whose detection failed waits
	// before it is claimed again, so a user that keeps failing does not take
	// every run of the job.
	retryAfter = 30 * time.Second
)

// DueSince reports since when the user's rows have changes detection has
// not read yet (GET /v1/sync-status shows it), nil when it is up to date.
func (s *Service) DueSince(ctx context.Context, userID string) (*time.Time, error) {
	m, due, err := s.store.RecurringDue(ctx, userID)
	if err != nil {
		return nil, finance.Internal("recurring due", err)
	}
	if !due {
		return nil, nil
	}
	return &m.DueAt, nil
}

// Freshness is how current recurring detection is for a user (GET
// /v1/sync-status): DueSince is the oldest change it has not read yet (nil
// when none: Pending false), LastRunAt when it last finished (nil before
// the first run).
type Freshness struct {
	DueSince  *time.Time
	Pending   bool
	LastRunAt *time.Time
}

// Freshness reports the user's detection freshness.
func (s *Service) Freshness(ctx context.Context, userID string) (Freshness, error) {
	due, err := s.DueSince(ctx, userID)
	if err != nil {
		return Freshness{}, err
	}
	last, err := s.store.RecurringLastRun(ctx, userID)
	if err != nil {
		return Freshness{}, finance.Internal("recurring last run", err)
	}
	return Freshness{DueSince: due, Pending: due != nil, LastRunAt: last}, nil
}

// DetectDue is one run of the recurring detection job: it claims the users
// marked due (by syncs that changed rows), one at a time so a claim's lease
// starts when its detection does, runs Detect for each and clears
// the mark unless a sync marked the user again meanwhile. It returns how
// many detections succeeded. Replicas may run it at once (claims do not
// overlap). A failed detection is logged and keeps the mark, retried after
// retryAfter.
func (s *Service) DetectDue(ctx context.Context) (int, error) {
	done := 0
	for {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		now := s.k.Now()
		marks, err := s.store.ClaimRecurringDue(ctx, now, now.Add(lease), 1)
		if err != nil {
			return done, finance.Internal("claim recurring due", err)
		}
		if len(marks) == 0 {
			return done, nil
		}
		m := marks[0]
		if _, err := s.Detect(ctx, m.UserID); err != nil {
			if ctx.Err() != nil {
				// Shutting down: hand the user back to the other replicas
				// now rather than hold it until the lease ends.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				if rerr := s.store.ReleaseRecurringDue(rctx, m.UserID, s.k.Now()); rerr != nil {
					s.k.Log().WarnContext(rctx, "release recurring due", "user_id", m.UserID, "err", rerr)
				}
				cancel()
				return done, ctx.Err()
			}
			s.k.Log().WarnContext(ctx, "recurring detection", "user_id", m.UserID, "err", err)
			if rerr := s.store.ReleaseRecurringDue(ctx, m.UserID, s.k.Now().Add(retryAfter)); rerr != nil {
				return done, finance.Internal("release recurring due", rerr)
			}
			continue
		}
		if _, err := s.store.ClearRecurringDue(ctx, m, s.k.Now()); err != nil {
			return done, finance.Internal("clear recurring due", err)
		}
		done++
	}
}

// RunDetection runs DetectDue at once and then every interval until ctx
// ends (the scheduled job; server.Run starts it). A failed run is logged by
// the loop and the next run is the retry.
func (s *Service) RunDetection(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultInterval
	}
	periodic.Task{Name: "recurring detection job", Every: every, AtStart: true, Log: s.k.Log(),
		Run: func(ctx context.Context) error {
			n, err := s.DetectDue(ctx)
			if n > 0 {
				s.k.Log().DebugContext(ctx, "recurring detections run", "count", n)
			}
			return err
		}}.Loop(ctx)
}

// Rules is the user's recurring rules for a read (bills, the
// forecast, budget progress): what the last detection stored, so reads lag
// a sync by up to one run of the job. The exception is a user who is due
// and was never detected (no rule carries a detection status, e.g. right
// after linking a bank): that read detects first, since an empty or seeded
// answer there would look like "no bills" rather than "not yet". A failed
// detection there is logged and the stored rules are answered; the job
// retries.
func (s *Service) Rules(ctx context.Context, userID string) ([]Rule, error) {
	rules, err := s.store.ListRecurringRules(ctx, userID)
	if err != nil {
		return nil, finance.Internal("list recurring rules", err)
	}
	if slices.ContainsFunc(rules, func(r Rule) bool { return r.Status != "" }) {
		return rules, nil
	}
	m, due, err := s.store.RecurringDue(ctx, userID)
	if err != nil {
		return nil, finance.Internal("recurring due", err)
	}
	if !due {
		return rules, nil
	}
	detected, err := s.Detect(ctx, userID)
	if err != nil {
		s.k.Log().WarnContext(ctx, "recurring detection on first read", "user_id", userID, "err", err)
		return rules, nil
	}
	if _, err := s.store.ClearRecurringDue(ctx, m, s.k.Now()); err != nil {
		// Harmless: the job detects the user once more.
		s.k.Log().WarnContext(ctx, "clear recurring due", "user_id", userID, "err", err)
	}
	return detected, nil
}
