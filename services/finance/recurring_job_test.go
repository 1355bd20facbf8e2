package finance_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/stores"
)

// detectHook is a store that runs before at the start of every detection
// (Detect reads the user's rows first): to fail it, or to sync while it
// runs.
type detectHook struct {
	stores.Store
	mu     sync.Mutex
	before func() error
}

func (s *detectHook) ListBudgetRows(ctx context.Context, userID string, f finance.TransactionFilter) ([]finance.BudgetRow, error) {
	s.mu.Lock()
	before := s.before
	s.mu.Unlock()
	if before != nil {
		if err := before(); err != nil {
			return nil, err
		}
	}
	return s.Store.ListBudgetRows(ctx, userID, f)
}

func (s *detectHook) set(before func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.before = before
}

func detected(t *testing.T, s recurring.Store, user string) bool {
	t.Helper()
	rules, err := s.ListRecurringRules(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(rules, func(r recurring.Rule) bool { return r.Status != "" })
}

func isDue(t *testing.T, s recurring.Store, user string) bool {
	t.Helper()
	_, ok, err := s.RecurringDue(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestRecurringJob: a sync that changes rows marks its user instead of
// detecting; one run of the job detects and clears the mark; a sync with
// no change marks nothing; a sync during a detection is detected again; a
// failed detection keeps the mark and is retried after the retry delay.
func TestRecurringJob(t *testing.T) {
	var mu sync.Mutex
	clock := now
	e := newEnv(t, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	hook := &detectHook{Store: e.store}
	svc := finance.NewService(finance.Config{Store: hook, Cursors: cursor.New([]byte("test-key")), Clock: func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }})
	rec := recurring.NewService(recurring.Config{Kernel: svc, Store: hook})
	bank := banksync.NewService(banksync.Config{Kernel: svc, Store: hook})
	ctx := context.Background()
	user, chase := e.demo.UserID, e.demo.ConnectionIDs.Chase
	row := banksync.ProviderTransaction{ProviderTransactionID: "job-1", AccountID: e.demo.AccountIDs.Checking,
		Amount: "-9.99", Currency: "USD", Date: "2026-05-20", MerchantName: "Corner Shop"}
	upsert := func() {
		t.Helper()
		if _, err := bank.UpsertProviderTransactions(ctx, chase, []banksync.ProviderTransaction{row}); err != nil {
			t.Fatal(err)
		}
	}
	run := func() int {
		t.Helper()
		n, err := rec.DetectDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	fresh := func() recurring.Freshness {
		t.Helper()
		f, err := rec.Freshness(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if f := fresh(); f.Pending || f.DueSince != nil || f.LastRunAt != nil {
		t.Fatalf("before any sync: %+v", f)
	}
	upsert()
	if !isDue(t, e.store, user) || detected(t, e.store, user) {
		t.Fatal("the sync detected inline, or did not mark its user")
	}
	if f := fresh(); !f.Pending || f.DueSince == nil || !f.DueSince.Equal(now) || f.LastRunAt != nil {
		t.Fatalf("after the sync (sync status): %+v", f)
	}
	mu.Lock()
	clock = clock.Add(time.Minute) // the job runs a minute later
	mu.Unlock()
	if n := run(); n != 1 || isDue(t, e.store, user) || !detected(t, e.store, user) {
		t.Fatalf("run detected %d; due after it: %v", n, isDue(t, e.store, user))
	}
	if f := fresh(); f.Pending || f.DueSince != nil || f.LastRunAt == nil || !f.LastRunAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("after the run (sync status): %+v", f)
	}
	if n := run(); n != 0 {
		t.Fatalf("a run with nobody due detected %d", n)
	}
	upsert() // the same row again: nothing changed
	if isDue(t, e.store, user) {
		t.Fatal("a sync that changed nothing marked its user")
	}

	// A sync during the detection: that detection's clear keeps the new
	// mark, and the same run detects again.
	row.Amount = "-10.49"
	upsert()
	var once sync.Once
	hook.set(func() error {
		once.Do(func() {
			row.Amount = "-10.99"
			upsert()
		})
		return nil
	})
	if n := run(); n != 2 || isDue(t, e.store, user) {
		t.Fatalf("with a sync during detection: %d detections, due after %v", n, isDue(t, e.store, user))
	}

	// A failed detection keeps the mark; the user waits out the retry
	// delay, then the next run detects.
	hook.set(func() error { return errors.New("database gone") })
	row.Amount = "-11.49"
	upsert()
	if n := run(); n != 0 || !isDue(t, e.store, user) {
		t.Fatalf("failed detection: %d detections, due %v", n, isDue(t, e.store, user))
	}
	hook.set(nil)
	if n := run(); n != 0 {
		t.Fatalf("retried at once: %d", n)
	}
	mu.Lock()
	clock = clock.Add(30 * time.Second)
	mu.Unlock()
	if n := run(); n != 1 || isDue(t, e.store, user) {
		t.Fatalf("retry: %d detections, due %v", n, isDue(t, e.store, user))
	}
}

// TestRecurringFirstRead: bills, the forecast and budget progress answer
// the last detection; only a user who is due and was never detected is
// detected by the read itself.
func TestRecurringFirstRead(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	user := e.demo.UserID
	row := banksync.ProviderTransaction{ProviderTransactionID: "read-1", AccountID: e.demo.AccountIDs.Checking,
		Amount: "-9.99", Currency: "USD", Date: "2026-05-20", MerchantName: "Corner Shop"}
	if _, err := e.recurring.ListUpcomingBills(ctx, e.read, 31); err != nil || detected(t, e.store, user) {
		t.Fatalf("a read of a user who is not due detected (%v)", err)
	}
	if _, err := e.banksync.UpsertProviderTransactions(ctx, e.demo.ConnectionIDs.Chase, []banksync.ProviderTransaction{row}); err != nil {
		t.Fatal(err)
	}
	bills, err := e.recurring.ListUpcomingBills(ctx, e.read, 31)
	if err != nil || len(bills.Data) == 0 {
		t.Fatalf("bills %v, %v", bills.Data, err)
	}
	if !detected(t, e.store, user) || isDue(t, e.store, user) {
		t.Fatal("the first read after the first sync did not detect")
	}
	row.Amount = "-10.99"
	if _, err := e.banksync.UpsertProviderTransactions(ctx, e.demo.ConnectionIDs.Chase, []banksync.ProviderTransaction{row}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.recurring.GetCashFlowForecast(ctx, e.read, 0, ""); err != nil {
		t.Fatal(err)
	}
	if !isDue(t, e.store, user) {
		t.Fatal("a read of a detected user detected inline")
	}
}

// TestRunRecurring: the scheduled loop detects a marked user and stops
// with its context.
func TestRunRecurring(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.store.MarkRecurringDue(context.Background(), e.demo.UserID, now); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.recurring.RunDetection(ctx, time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for isDue(t, e.store, e.demo.UserID) {
		if time.Now().After(deadline) {
			t.Fatal("the marked user was not detected")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !detected(t, e.store, e.demo.UserID) {
		t.Fatal("the mark was cleared without a detection")
	}
	cancel()
	<-done
}
