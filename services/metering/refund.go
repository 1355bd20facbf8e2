package metering

import (
	"context"
	"fmt"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering/admission/quota"
)

// Refund describes units to give back: they were counted when work was
// admitted (a batch is counted whole at submission) and the platform then
// failed that work on its own account, which must not count (docs/limits.md).
type Refund struct {
	AccountID string
	Mode      string // ModeLive or ModeTest: the counter the units came from
	// CountedAt is when the units were counted; it picks the quota window
	// (the plan and anchor in force then), so a refund after the window
	// rolled over goes back to the window that was charged.
	CountedAt time.Time
	Units     int64
	// Reference makes the refund idempotent: applied once, however often
	// it is asked for (the caller retries until it is answered).
	Reference string
	// CredentialID is the credential the units were counted for: with
	// CountedAt it names the day field they leave (GET /v1/usage/daily).
	CredentialID string
}

// maxRefundReference bounds a reference, which becomes part of a Redis key.
const maxRefundReference = 200

// RefundUnits gives r.Units back to the counter they were drawn from, once
// per r.Reference, and returns how many it gave back now (0 for a reference
// applied before). An unknown account is ErrNotFound; invalid fields are
// invalid-input problems naming the field; counters that are not configured
// or do not answer are unavailable.
func (s *Service) RefundUnits(ctx context.Context, r Refund) (int64, error) {
	switch {
	case r.Mode != ModeLive && r.Mode != ModeTest:
		return 0, problem.New(problem.InvalidInput, `mode must be "live" or "test"`).WithField("mode")
	case r.Units < 1:
		return 0, problem.New(problem.InvalidInput, "units must be at least 1").WithField("units")
	case r.Reference == "" || len(r.Reference) > maxRefundReference:
		return 0, problem.New(problem.InvalidInput, fmt.Sprintf("reference must be 1 to %d bytes", maxRefundReference)).WithField("reference")
	case r.CountedAt.IsZero():
		return 0, problem.New(problem.InvalidInput, "counted_at is required").WithField("counted_at")
	}
	if s.counters == nil {
		return 0, problem.New(problem.Unavailable, "usage counters are not configured")
	}
	a, err := s.CurrentAccount(ctx, r.AccountID)
	if err != nil {
		return 0, fmt.Errorf("refund: %w", err)
	}
	l, err := limitsOf(a, r.CountedAt)
	if err != nil {
		return 0, err
	}
	n, err := s.counters.Refund(ctx, quota.Request{AccountID: a.ID, Test: r.Mode == ModeTest, Metered: true, Limits: l,
		CredentialID: r.CredentialID, At: r.CountedAt}, r.Reference, r.Units)
	if err != nil {
		s.countersUnreachable(ctx, err)
		return 0, problem.New(problem.Unavailable, "usage counters are unreachable; retry shortly").WithRetryAfter(1)
	}
	if n > 0 {
		s.log.InfoContext(ctx, "units refunded", "account_id", a.ID, "mode", r.Mode, "units", n, "reference", r.Reference)
	}
	return n, nil
}
