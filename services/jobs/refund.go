package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Refunder gives back usage units that were counted when a batch was
// admitted (the gateway counts a batch whole at submission) for items the
// service then failed on its own account: a converter that stayed
// unavailable past ConvertRetryFor, an item the queue lost too often. A 5xx
// is never counted (docs/limits.md), so neither are they. Calls are
// idempotent per Refund.Reference; metering's UsageRefundService is the
// implementation (meteringclient).
type Refunder interface {
	Refund(ctx context.Context, r Refund) error
}

// Refund is units to give back to one account's counter.
type Refund struct {
	AccountID string
	Mode      string    // "live" or "test": the counter the units came from
	CountedAt time.Time // the job's creation: picks the quota window
	Units     int64
	Reference string // "job:<id>": one refund per job, however often asked
	// CredentialID is the credential the units were counted for ("" when
	// the job predates it).
	CredentialID string
}

// refundFailed gives back the units of the items of a completed job that
// failed with a 5xx problem (ours, not the client's), once per job: the
// reference is the job, so a redelivered event asks again harmlessly. Items
// that failed on their content (4xx) stay counted, as a synchronous 4xx the
// converter decided would be. A job deleted meanwhile is not refunded.
func (s *Service) refundFailed(ctx context.Context, accountID, jobID string) error {
	if s.cfg.Refunder == nil {
		return nil
	}
	j, err := s.store.GetJob(ctx, accountID, jobID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.Failed == 0 {
		return nil
	}
	items, err := s.store.Items(ctx, j.ID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var n int64
	for _, it := range items {
		if it.Status != ItemFailed || it.Result == nil {
			continue
		}
		pt, err := s.keys.Open(it.Result, resultAAD(j.ID, it.Index))
		if err != nil {
			return fmt.Errorf("open result: %w", err)
		}
		var out Outcome
		if err := json.Unmarshal(pt, &out); err != nil {
			return fmt.Errorf("decode result: %w", err)
		}
		if out.Problem != nil && out.Problem.Status >= 500 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if err := s.cfg.Refunder.Refund(ctx, Refund{AccountID: j.AccountID, Mode: j.Mode, CountedAt: j.CreatedAt,
		Units: n, Reference: "job:" + j.ID, CredentialID: j.CredentialID}); err != nil {
		return fmt.Errorf("refund: %w", err)
	}
	s.log.InfoContext(ctx, "jobs: units of items failed by an outage refunded", "job_id", j.ID, "units", n)
	return nil
}
