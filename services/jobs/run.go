package jobs

import (
	"context"
	"sync"
	"time"
)

// Run sets the queue up and runs the item workers, the webhook fan-out, the
// delivery scheduler (every second), the sweeper (every minute), the
// publisher of open enqueue intents (every 5 s), the pass that discards
// leftover work messages (every 5 s) and the resumer of stalled jobs (every
// 30 s) until ctx ends. Without a job key nothing runs and Run waits: nothing can be
// enqueued.
func (s *Service) Run(ctx context.Context) error {
	if s.keys == nil {
		<-ctx.Done()
		return nil
	}
	if err := s.queue.Setup(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while setting up: a shutdown, not a failure
		}
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Go(func() { errs <- s.RunWorkers(ctx) })
	wg.Go(func() { errs <- s.RunFanout(ctx) })
	wg.Go(func() { errs <- s.RunDomainFanout(ctx) })
	wg.Go(func() { s.RunDeliveries(ctx, time.Second) })
	wg.Go(func() { s.RunSweeper(ctx, time.Minute) })
	wg.Go(func() { s.RunPublisher(ctx, 5*time.Second) })
	wg.Go(func() { s.RunResumer(ctx, 30*time.Second) })
	wg.Go(func() { s.every(ctx, 5*time.Second, "leftovers", s.DiscardLeftovers) })
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}
