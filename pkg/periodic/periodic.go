// Package periodic runs a task at a fixed interval until its context ends:
// the one loop behind every background pass of the services (publishers,
// resumers, sweepers, refreshers, the billing round, the edge's
// reconciler). It owns the timing only; what a pass does, and what it
// logs, is the task's.
package periodic

import (
	"context"
	"log/slog"
	"time"
)

// Task is a pass run every Every.
type Task struct {
	// Name labels the log line of a failed pass.
	Name  string
	Every time.Duration
	// AtStart runs the first pass at once instead of after one interval.
	AtStart bool
	// Run is one pass. An error is logged at warning level (unless the
	// context has ended: a shutdown, not a failure) and the next pass is
	// the retry. Passes never overlap: one that outlasts the interval
	// delays the next.
	Run func(ctx context.Context) error
	// Log receives failed passes; nil is slog.Default().
	Log *slog.Logger
}

// Loop runs t until ctx ends, and returns then.
func (t Task) Loop(ctx context.Context) {
	log := t.Log
	if log == nil {
		log = slog.Default()
	}
	pass := func() {
		if err := t.Run(ctx); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, t.Name, "err", err)
		}
	}
	if t.AtStart && ctx.Err() == nil {
		pass()
	}
	tick := time.NewTicker(t.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			// Both may be ready at once, and select picks at random: no
			// pass starts after the context has ended.
			if ctx.Err() != nil {
				return
			}
			pass()
		}
	}
}
