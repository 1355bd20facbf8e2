package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ledgerlane/platform/pkg/periodic"
)

// Submission is an outbox: CreateBatch commits the job, its items and the
// intent to enqueue them in one transaction, and the items are published
// after the answer. The publisher here closes intents a crash left open; the
// resumer re-enqueues the pending items of stalled jobs that the queue no
// longer holds. Both are idempotent: messages are de-duplicated by their ids
// (WorkItem.MsgID), and a worker converts an item only while it is pending.

// EnqueueLease is how long a stored job's enqueue intent is left to the
// process that stored it (and then to the publisher that claimed it) before
// another publisher may take it over. It is shorter than the work stream's
// de-duplication window, so a takeover republishes within it.
const EnqueueLease = time.Minute

// publishNew publishes the items of a job CreateBatch has just stored and
// closes its intent. On failure the intent stays open and the publisher
// takes it over after EnqueueLease.
func (s *Service) publishNew(ctx context.Context, j Job) {
	ctx, cancel := context.WithTimeout(ctx, EnqueueLease/2)
	defer cancel()
	if err := s.publishJob(ctx, j); err != nil {
		// ctx is the submitting request's, detached from its end: the line
		// carries that request's trace.
		s.log.WarnContext(ctx, "jobs: enqueue after submission failed; the publisher retries", "job_id", j.ID, "err", err)
	}
}

func (s *Service) publishJob(ctx context.Context, j Job) error {
	if err := s.enqueue(ctx, j.ID, j.ItemCount); err != nil {
		return err
	}
	return s.store.MarkEnqueued(ctx, j.ID)
}

// PublishPending publishes the items of every stored job whose enqueue
// intent is open and claimable now, and returns how many jobs it enqueued.
// Each job is published in a span of its own (the request that stored it
// left no trace in the store), which its items carry to the workers. The
// pass ends by measuring the outbox (Metrics.OutboxObserved): the publisher
// is the one loop that runs every few seconds on every replica whatever
// the load, so the gauges are never older than its interval.
// RunPublisher calls it; tests call it after moving the clock.
func (s *Service) PublishPending(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, nil
	}
	n, err := s.publishPending(ctx)
	if b, berr := s.store.OutboxBacklog(ctx); berr == nil {
		s.metrics.OutboxObserved(b, s.now())
	} else if err == nil {
		err = fmt.Errorf("outbox backlog: %w", berr)
	}
	return n, err
}

func (s *Service) publishPending(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		js, err := s.store.ClaimUnenqueued(ctx, s.timestamp(), EnqueueLease, 20)
		if err != nil || len(js) == 0 {
			return n, err
		}
		for _, j := range js {
			jctx, end := s.tracer.Start(ctx, "jobs.outbox.publish")
			err := s.publishJob(jctx, j)
			if err != nil {
				s.log.WarnContext(jctx, "jobs: enqueue of a stored job failed; retried after the lease", "job_id", j.ID, "err", err)
			} else {
				s.log.InfoContext(jctx, "jobs: enqueued a stored job", "job_id", j.ID, "items", j.ItemCount)
			}
			end()
			if err != nil {
				return n, loggedError{err} // the claim expires and the intent is taken again
			}
			n++
		}
	}
	return n, ctx.Err()
}

// loggedError is an error its pass has already logged with its job and
// trace; every() does not log it again.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// RunPublisher runs PublishPending every interval until ctx ends.
func (s *Service) RunPublisher(ctx context.Context, every time.Duration) {
	s.every(ctx, every, "publish", s.PublishPending)
}

// Resume checks the pending items of every stalled job (enqueued, not
// completed, no progress for StallAfter) against the work queue and
// re-enqueues those the queue holds neither waiting nor in flight. It
// returns how many items it re-enqueued. RunResumer calls it; tests call it
// after moving the clock.
func (s *Service) Resume(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, nil
	}
	n := 0
	for ctx.Err() == nil {
		js, err := s.store.ClaimStalled(ctx, s.timestamp(), s.cfg.StallAfter, s.cfg.StallAfter, 20)
		if err != nil || len(js) == 0 {
			return n, err
		}
		for _, j := range js {
			// A span per stalled job: the items it re-enqueues carry it to
			// the workers.
			jctx, end := s.tracer.Start(ctx, "jobs.resume")
			k, err := s.resumeJob(jctx, j)
			end()
			n += k
			if err != nil {
				return n, err
			}
		}
	}
	return n, ctx.Err()
}

func (s *Service) resumeJob(ctx context.Context, j Job) (int, error) {
	idx, err := s.store.PendingIndexes(ctx, j.ID)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	items := make([]WorkItem, len(idx))
	for i, x := range idx {
		items[i] = WorkItem{JobID: j.ID, Index: x}
	}
	lost, err := s.queue.Lost(ctx, items)
	if err != nil || len(lost) == 0 {
		return 0, err
	}
	for i := range lost {
		lost[i].Resumes++
	}
	if err := s.queue.PublishWork(ctx, lost); err != nil {
		return 0, err
	}
	s.metrics.ItemsResumed(len(lost))
	s.log.WarnContext(ctx, "jobs: re-enqueued items the queue had lost", "job_id", j.ID, "items", len(lost))
	return len(lost), nil
}

// DiscardLeftovers removes the work messages the queue stores but no
// worker needs (Queue.Leftovers): those whose items are settled or whose
// job is gone. Without it a crash of the queue's server leaves them in the
// stream until its MaxAge (acknowledged, but kept) or for an ack wait (the
// acknowledgement lost). A leftover of a pending item is left to the
// resumer, which re-enqueues it once the job stalls (Lost removes the old
// message). It returns how many it removed. Run calls it every few
// seconds; a pass with nothing to check costs two requests.
func (s *Service) DiscardLeftovers(ctx context.Context) (int, error) {
	if s.keys == nil {
		return 0, nil
	}
	total, left, err := s.queue.Leftovers(ctx, 500)
	s.metrics.LeftoversObserved(total)
	if err != nil || len(left) == 0 {
		return 0, err
	}
	pending := map[string]map[int]bool{}
	n := 0
	for _, l := range left {
		if l.Item.JobID != "" {
			p, ok := pending[l.Item.JobID]
			if !ok {
				idx, err := s.store.PendingIndexes(ctx, l.Item.JobID)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return n, err
				}
				p = make(map[int]bool, len(idx))
				for _, i := range idx {
					p[i] = true
				}
				pending[l.Item.JobID] = p
			}
			if p[l.Item.Index] {
				continue
			}
		}
		if err := s.queue.Discard(ctx, l); err != nil {
			return n, err
		}
		n++
	}
	if n > 0 {
		s.metrics.LeftoversDiscarded(n)
		s.log.WarnContext(ctx, "jobs: discarded work messages of settled items the queue kept", "messages", n, "never_delivered", total)
	}
	return n, nil
}

// RunResumer runs Resume every interval until ctx ends.
func (s *Service) RunResumer(ctx context.Context, every time.Duration) {
	s.every(ctx, every, "resume", s.Resume)
}

// every runs f at once and then every interval until ctx ends; an error
// its pass has logged already (loggedError) is not logged twice.
func (s *Service) every(ctx context.Context, every time.Duration, what string, f func(context.Context) (int, error)) {
	periodic.Task{Name: "jobs: " + what, Every: every, AtStart: true, Log: s.log, Run: func(ctx context.Context) error {
		if _, err := f(ctx); err != nil && !errors.As(err, new(loggedError)) {
			return err
		}
		return nil
	}}.Loop(ctx)
}
