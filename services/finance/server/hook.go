package server

import (
	"context"
	"sync"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

// thresholdHook is the finance notifier when events are wired. Every write
// that moves spending (a PATCH, a bulk recategorise, a category merge, an
// import, a bank sync with its split slices) tells the notifier after it
// commits (TransactionsChanged, or Written when it stored its note with the
// change), so checking the budget thresholds here covers each of them, and
// any write added later that announces itself (services/finance/README.md,
// "Alert thresholds").
//
// The announcement is passed on at once, as without the hook. The check
// computes budget progress once per grant of the user, which a write should
// not wait for, so it runs behind the write: one worker per user, and a
// write while the user's check runs asks for one more check after it, so a
// burst of writes makes at most two.
type thresholdHook struct {
	finance.Notifier
	budgets thresholdChecker

	mu sync.Mutex
	// again holds the users whose worker runs, and whether a write came
	// in since that worker's check started.
	again map[string]bool
	wg    sync.WaitGroup
}

// thresholdChecker is what the hook needs of budgets.Service.
type thresholdChecker interface {
	AfterWrite(ctx context.Context, userID string)
}

var _ thresholdChecker = (*budgets.Service)(nil)

// Written: a write that stored its note with the change (a PATCH, a bulk
// recategorise, an import, a grant change, which moves what a grant's
// budgets count) is checked as one that announced itself after.
func (h *thresholdHook) Written(ctx context.Context, userID string) {
	h.Notifier.Written(ctx, userID)
	h.schedule(ctx, userID)
}

// schedule starts userID's check, or asks the running one for one more.
func (h *thresholdHook) schedule(ctx context.Context, userID string) {
	h.mu.Lock()
	if h.again == nil {
		h.again = map[string]bool{}
	}
	_, running := h.again[userID]
	h.again[userID] = running
	if !running {
		h.wg.Add(1)
	}
	h.mu.Unlock()
	if !running {
		// The write committed: its check goes on after the client hangs
		// up (the check bounds itself).
		go h.check(context.WithoutCancel(ctx), userID)
	}
}

// check checks userID's thresholds until no write came in during a check.
func (h *thresholdHook) check(ctx context.Context, userID string) {
	defer h.wg.Done()
	for {
		h.budgets.AfterWrite(ctx, userID)
		h.mu.Lock()
		if !h.again[userID] {
			delete(h.again, userID)
			h.mu.Unlock()
			return
		}
		h.again[userID] = false
		h.mu.Unlock()
	}
}

// wait returns when every check of a write announced before it has
// finished.
func (h *thresholdHook) wait() {
	if h != nil {
		h.wg.Wait()
	}
}
