package finance

import (
	"context"
	"slices"
	"time"
)

// RecurringDueStore is the part of Store the recurring detection job needs
// (embedded in Store). A mark says "this user's rows changed since the last
// detection"; marks are durable and shared by replicas.
type RecurringDueStore interface {
	// MarkRecurringDue marks the user as due for detection at at. Marks
	// coalesce into one per user: a user already due keeps the earlier due
	// time, and every mark bumps the mark's Generation, so a detection that
	// started before it does not clear it (ClearRecurringDue). A claim in
	// force stays in force. ApplySync marks too, in its own atomic step,
	// when SyncWrite.RecurringDueAt is set.
	MarkRecurringDue(ctx context.Context, userID string, at time.Time) error
	// RecurringDue returns the user's mark; false when the user is not due.
	RecurringDue(ctx context.Context, userID string) (RecurringMark, bool, error)
	// ClaimRecurringDue claims up to limit due users, earliest due first:
	// those due at or before now whose previous claim (if any) ended by now.
	// Each claim lasts until leaseUntil. Concurrent callers (replicas) never
	// get the same user while a claim lasts.
	ClaimRecurringDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]RecurringMark, error)
	// ClearRecurringDue ends a detection of m. When the user was not marked
	// again since m was read (same Generation), the mark is removed and it
	// reports true. Otherwise the mark stays, due at now and unclaimed, so
	// the next run detects the rows the newer sync wrote.
	ClearRecurringDue(ctx context.Context, m RecurringMark, now time.Time) (bool, error)
	// ReleaseRecurringDue ends a failed detection of the user: the mark
	// stays and may be claimed again from retryAt.
	ReleaseRecurringDue(ctx context.Context, userID string, retryAt time.Time) error
}

// RecurringMark is a user's pending recurring detection.
type RecurringMark struct {
	UserID string
	// DueAt is when the oldest change not yet detected was marked.
	DueAt time.Time
	// Generation counts the user's marks; ClearRecurringDue compares it to
	// tell whether a sync marked the user during a detection.
	Generation int64
}

// DefaultRecurringInterval is how often the recurring detection job looks
// for users a sync marked due. Short, because it bounds how long bills and
// the forecast lag a sync; a run with nobody due is one indexed query.
const DefaultRecurringInterval = 2 * time.Second

const (
	// recurringLease is how long a claim keeps other replicas off a user.
	// It must outlast a detection (about 5 s at a million rows); a replica
	// that dies mid-detection delays that user by at most this long.
	recurringLease = 5 * time.Minute
	// recurringRetryAfter is how long a user whose detection failed waits
	// before it is claimed again, so a user that keeps failing does not take
	// every run of the job.
	recurringRetryAfter = 30 * time.Second
)

// DetectDue is one run of the recurring detection job: it claims the users
// marked due (by syncs that changed rows), one at a time so a claim's lease
// starts when its detection does, runs DetectRecurring for each and clears
// the mark unless a sync marked the user again meanwhile. It returns how
// many detections succeeded. Replicas may run it at once (claims do not
// overlap). A failed detection is logged and keeps the mark, retried after
// recurringRetryAfter.
func (s *Service) DetectDue(ctx context.Context) (int, error) {
	done := 0
	for {
		if err := ctx.Err(); err != nil {
			return done, err
		}
		now := s.now()
		marks, err := s.store.ClaimRecurringDue(ctx, now, now.Add(recurringLease), 1)
		if err != nil {
			return done, Internal("claim recurring due", err)
		}
		if len(marks) == 0 {
			return done, nil
		}
		m := marks[0]
		if _, err := s.DetectRecurring(ctx, m.UserID); err != nil {
			if ctx.Err() != nil {
				// Shutting down: hand the user back to the other replicas
				// now rather than hold it until the lease ends.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				if rerr := s.store.ReleaseRecurringDue(rctx, m.UserID, s.now()); rerr != nil {
					s.log.WarnContext(rctx, "release recurring due", "user_id", m.UserID, "err", rerr)
				}
				cancel()
				return done, ctx.Err()
			}
			s.log.WarnContext(ctx, "recurring detection", "user_id", m.UserID, "err", err)
			if rerr := s.store.ReleaseRecurringDue(ctx, m.UserID, s.now().Add(recurringRetryAfter)); rerr != nil {
				return done, Internal("release recurring due", rerr)
			}
			continue
		}
		if _, err := s.store.ClearRecurringDue(ctx, m, s.now()); err != nil {
			return done, Internal("clear recurring due", err)
		}
		done++
	}
}

// RunRecurring runs DetectDue at once and then every interval until ctx
// ends (the scheduled job; server.Run starts it).
func (s *Service) RunRecurring(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultRecurringInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := s.DetectDue(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "recurring detection job", "err", err)
		} else if n > 0 {
			s.log.DebugContext(ctx, "recurring detections run", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RecurringRules is the user's recurring rules for a read (bills, the
// forecast, budget progress): what the last detection stored, so reads lag
// a sync by up to one run of the job. The exception is a user who is due
// and was never detected (no rule carries a detection status, e.g. right
// after linking a bank): that read detects first, since an empty or seeded
// answer there would look like "no bills" rather than "not yet". A failed
// detection there is logged and the stored rules are answered; the job
// retries.
func (s *Service) RecurringRules(ctx context.Context, userID string) ([]RecurringRule, error) {
	rules, err := s.store.ListRecurringRules(ctx, userID)
	if err != nil {
		return nil, Internal("list recurring rules", err)
	}
	if slices.ContainsFunc(rules, func(r RecurringRule) bool { return r.Status != "" }) {
		return rules, nil
	}
	m, due, err := s.store.RecurringDue(ctx, userID)
	if err != nil {
		return nil, Internal("recurring due", err)
	}
	if !due {
		return rules, nil
	}
	detected, err := s.DetectRecurring(ctx, userID)
	if err != nil {
		s.log.WarnContext(ctx, "recurring detection on first read", "user_id", userID, "err", err)
		return rules, nil
	}
	if _, err := s.store.ClearRecurringDue(ctx, m, s.now()); err != nil {
		// Harmless: the job detects the user once more.
		s.log.WarnContext(ctx, "clear recurring due", "user_id", userID, "err", err)
	}
	return detected, nil
}
