package conformance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/recurring"
)

// testRecurringDue: marks for the recurring detection job. Marks coalesce
// (earliest due time, a new generation per mark), a sync marks in its own
// atomic step, a claim hides the user from other claims until its lease
// ends, a clear keeps a mark made during the detection, a release after a
// failed detection lets the user be claimed again from its retry time, and
// racing claimers never get the same user.
func testRecurringDue(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	due := func(user string) (recurring.Mark, bool) {
		t.Helper()
		m, ok, err := s.RecurringDue(ctx, user)
		must(t, err)
		return m, ok
	}
	claim := func(now time.Time, limit int) []string {
		t.Helper()
		marks, err := s.ClaimRecurringDue(ctx, now, now.Add(time.Hour), limit)
		must(t, err)
		var ids []string
		for _, m := range marks {
			ids = append(ids, m.UserID)
		}
		return ids
	}
	if _, ok := due(f.user); ok {
		t.Fatal("a new user is due")
	}

	// Coalescing: three marks are one, due at the earliest.
	must(t, s.MarkRecurringDue(ctx, f.user, base))
	first, _ := due(f.user)
	must(t, s.MarkRecurringDue(ctx, f.user, base.Add(-time.Hour)))
	must(t, s.MarkRecurringDue(ctx, f.user, base.Add(time.Hour)))
	m, ok := due(f.user)
	if !ok || !m.DueAt.Equal(base.Add(-time.Hour)) || m.Generation <= first.Generation {
		t.Fatalf("coalesced mark %+v (first %+v)", m, first)
	}

	// A failed sync marks nothing; a sync marks with its rows.
	synced := base.Add(2 * time.Hour)
	conn := banksync.ConnectionState{ID: f.otherConn, Status: finance.ConnectionActive, LastSyncedAt: &synced, UpdatedAt: synced}
	ghost := finance.Transaction{ID: newID(), UserID: f.other, AccountID: f.otherAccount, Amount: money("-1", "USD"),
		Date: day(0), Source: finance.SourceBankSync, Version: 2, CreatedAt: base, UpdatedAt: synced}
	if err := s.ApplySync(ctx, banksync.Write{UserID: f.other, Updates: []finance.Transaction{ghost},
		Connection: conn, RecurringDueAt: synced}); err == nil {
		t.Fatal("a sync updating a missing row succeeded")
	}
	if _, ok := due(f.other); ok {
		t.Fatal("a failed sync marked its user")
	}
	row := ghost
	row.Version = 1
	must(t, s.ApplySync(ctx, banksync.Write{UserID: f.other, Inserts: []finance.Transaction{row},
		Connection: conn, RecurringDueAt: synced}))
	if m, ok := due(f.other); !ok || !m.DueAt.Equal(synced) {
		t.Fatalf("after a sync: %+v %v", m, ok)
	}

	// Claims: earliest due first; a claimed user is not claimed again
	// while the lease lasts; nobody is due before their due time.
	if got := claim(base.Add(-2*time.Hour), 0); len(got) != 0 {
		t.Fatalf("claimed before due: %v", got)
	}
	now := base.Add(3 * time.Hour)
	diff(t, "first claim", []string{f.user}, claim(now, 1))
	diff(t, "second claim", []string{f.other}, claim(now, 0))
	if got := claim(now.Add(59*time.Minute), 0); len(got) != 0 {
		t.Fatalf("claimed users claimed again: %v", got)
	}

	// Clear if unchanged: a mark made during the detection survives the
	// clear and can be claimed at once.
	mUser, _ := due(f.user)
	must(t, s.MarkRecurringDue(ctx, f.user, now.Add(time.Minute)))
	cleared, err := s.ClearRecurringDue(ctx, mUser, now.Add(2*time.Minute))
	must(t, err)
	if cleared {
		t.Fatal("a clear removed a newer mark")
	}
	if _, ok := due(f.user); !ok {
		t.Fatal("the newer mark is gone")
	}
	diff(t, "re-marked user claimed again", []string{f.user}, claim(now.Add(2*time.Minute), 0))
	mUser, _ = due(f.user)
	cleared, err = s.ClearRecurringDue(ctx, mUser, now.Add(3*time.Minute))
	must(t, err)
	if _, ok := due(f.user); !cleared || ok {
		t.Fatalf("an unchanged mark was not cleared (%v, due %v)", cleared, ok)
	}
	// Each clear ends a detection: the latest is the user's last run, and
	// an older one (a replica behind) does not move it back.
	_, err = s.ClearRecurringDue(ctx, mUser, now.Add(90*time.Second))
	must(t, err)
	if last, err := s.RecurringLastRun(ctx, f.user); err != nil || last == nil || !last.Equal(now.Add(3*time.Minute)) {
		t.Fatalf("last run %v (%v), want %v", last, err, now.Add(3*time.Minute))
	}
	if last, err := s.RecurringLastRun(ctx, newID()); err != nil || last != nil {
		t.Fatalf("a user never detected: last run %v (%v)", last, err)
	}

	// A failed detection is retried: released, the mark stays and is
	// claimable from the retry time.
	must(t, s.ReleaseRecurringDue(ctx, f.other, now.Add(10*time.Minute)))
	if got := claim(now.Add(9*time.Minute), 0); len(got) != 0 {
		t.Fatalf("claimed before the retry time: %v", got)
	}
	diff(t, "retry", []string{f.other}, claim(now.Add(10*time.Minute), 0))
	mOther, _ := due(f.other)
	if cleared, err := s.ClearRecurringDue(ctx, mOther, now.Add(11*time.Minute)); err != nil || !cleared {
		t.Fatalf("clear after the retry: %v %v", cleared, err)
	}

	// A claimer that dies holds the user until its lease ends.
	must(t, s.MarkRecurringDue(ctx, f.user, now))
	diff(t, "claim", []string{f.user}, claim(now.Add(20*time.Minute), 0))
	if got := claim(now.Add(79*time.Minute), 0); len(got) != 0 {
		t.Fatalf("claimed during the lease: %v", got)
	}
	diff(t, "after the lease", []string{f.user}, claim(now.Add(80*time.Minute), 0))

	// Racing claimers (replicas) share the due users without overlap.
	var users []string
	for range 12 {
		id := newID()
		must(t, s.CreateUser(ctx, finance.User{ID: id, CreatedAt: base}))
		must(t, s.MarkRecurringDue(ctx, id, base))
		users = append(users, id)
	}
	later := now.Add(5 * time.Hour)
	var (
		mu  sync.Mutex
		got []string
		wg  sync.WaitGroup
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				marks, err := s.ClaimRecurringDue(ctx, later, later.Add(time.Hour), 1)
				if err != nil {
					t.Error(err)
					return
				}
				if len(marks) == 0 {
					return
				}
				mu.Lock()
				got = append(got, marks[0].UserID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	users = append(users, f.user) // its lease ended too
	slices.Sort(users)
	slices.Sort(got)
	diff(t, "racing claims", users, got)
	if err := s.MarkRecurringDue(ctx, "not-a-uuid", base); err == nil || !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("mark of a malformed user id: %v", err)
	}
}

func testRecurringRules(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	cat := finance.Category{ID: newID(), Name: "Streaming", CreatedAt: base, UpdatedAt: base}
	must(t, s.CreateCategory(ctx, cat))
	later := recurring.Rule{ID: newID(), UserID: f.user, AccountID: f.account, CategoryID: cat.ID,
		Merchant: "Netflix", DisplayName: "Netflix", ExpectedAmount: money("-15.49", "USD"),
		Frequency: finance.FrequencyMonthly, StreamType: recurring.StreamOutflow, NextExpectedDate: day(20),
		LastSeenDate: ptr(day(-11)), LogoURL: "https://logos.example/netflix.png", IsActive: true,
		CreatedAt: base, UpdatedAt: base}
	sooner := recurring.Rule{ID: newID(), UserID: f.user, ExpectedAmount: money("3150.00", "USD"),
		Frequency: finance.FrequencySemiMonthly, StreamType: recurring.StreamInflow, NextExpectedDate: day(1),
		CreatedAt: base, UpdatedAt: base}
	theirs := recurring.Rule{ID: newID(), UserID: f.other, ExpectedAmount: money("-1", "USD"),
		Frequency: finance.FrequencyWeekly, StreamType: recurring.StreamOutflow, NextExpectedDate: day(0),
		CreatedAt: base, UpdatedAt: base}
	for _, r := range []recurring.Rule{later, sooner, theirs} {
		must(t, s.CreateRecurringRule(ctx, r))
	}
	if err := s.CreateRecurringRule(ctx, later); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Fatalf("duplicate rule: want ErrAlreadyExists, got %v", err)
	}
	got, err := s.ListRecurringRules(ctx, f.user)
	must(t, err)
	diff(t, "rules", []recurring.Rule{sooner, later}, got)
}

// testSaveRecurringStreams: rules are inserted or replaced whole, rows are
// linked exactly as the members say (others unlinked, other users' rows
// untouched), and row versions do not move.
func testSaveRecurringStreams(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	var rows []finance.Transaction
	for i := range 4 {
		tx := finance.Transaction{ID: newID(), UserID: f.user, AccountID: f.account, Amount: money("-15.49", "USD"),
			Merchant: "Netflix", Date: day(-30 * i), Source: finance.SourceBankSync, Version: 1, CreatedAt: base, UpdatedAt: base}
		rows = append(rows, tx)
	}
	theirs := finance.Transaction{ID: newID(), UserID: f.other, AccountID: f.otherAccount, Amount: money("-1", "USD"),
		Merchant: "Netflix", Date: day(0), Source: finance.SourceManual, Version: 1, CreatedAt: base, UpdatedAt: base}
	must(t, s.InsertTransactions(ctx, append(rows, theirs)))
	old := recurring.Rule{ID: newID(), UserID: f.user, AccountID: f.account, Merchant: "Netflix",
		DisplayName: "Netflix", ExpectedAmount: money("-15.49", "USD"), Frequency: finance.FrequencyMonthly,
		StreamType: recurring.StreamOutflow, NextExpectedDate: day(5), IsActive: true, LogoURL: "https://logos.example/n.png",
		CreatedAt: base, UpdatedAt: base}
	theirRule := old
	theirRule.ID, theirRule.UserID, theirRule.AccountID = newID(), f.other, f.otherAccount
	must(t, s.CreateRecurringRule(ctx, old))
	must(t, s.CreateRecurringRule(ctx, theirRule))
	theirs.RecurringRuleID = theirRule.ID
	must(t, s.SaveRecurringStreams(ctx, f.other, []recurring.Rule{theirRule}, map[string][]string{theirRule.ID: {theirs.ID}}))

	updated := old
	updated.ExpectedAmount, updated.Status, updated.Occurrences = money("-17.99", "USD"), recurring.StreamMature, 3
	updated.LastSeenDate, updated.UpdatedAt = ptr(day(0)), base.Add(time.Hour)
	fresh := recurring.Rule{ID: newID(), UserID: f.user, AccountID: f.account, Merchant: "Spotify",
		ExpectedAmount: money("-11.99", "USD"), Frequency: finance.FrequencyAnnually, StreamType: recurring.StreamOutflow,
		NextExpectedDate: day(300), Status: recurring.StreamEarly, Occurrences: 1, IsActive: true, CreatedAt: base, UpdatedAt: base}
	must(t, s.SaveRecurringStreams(ctx, f.user, []recurring.Rule{updated, fresh},
		map[string][]string{updated.ID: {rows[0].ID, rows[1].ID, rows[2].ID}, fresh.ID: {rows[3].ID}}))
	got, err := s.ListRecurringRules(ctx, f.user)
	must(t, err)
	diff(t, "rules", []recurring.Rule{updated, fresh}, got)
	check := func(want map[string]string) {
		t.Helper()
		for id, rule := range want {
			tx, err := s.GetTransaction(ctx, f.user, id)
			must(t, err)
			if tx.RecurringRuleID != rule || tx.Version != 1 {
				t.Errorf("row %s: rule %q version %d, want %q version 1", id, tx.RecurringRuleID, tx.Version, rule)
			}
		}
	}
	check(map[string]string{rows[0].ID: updated.ID, rows[1].ID: updated.ID, rows[2].ID: updated.ID, rows[3].ID: fresh.ID})
	// A second detection moves one row and unlinks another.
	must(t, s.SaveRecurringStreams(ctx, f.user, []recurring.Rule{updated}, map[string][]string{updated.ID: {rows[0].ID, rows[3].ID}}))
	check(map[string]string{rows[0].ID: updated.ID, rows[1].ID: "", rows[2].ID: "", rows[3].ID: updated.ID})
	other, err := s.GetTransaction(ctx, f.other, theirs.ID)
	must(t, err)
	if other.RecurringRuleID != theirRule.ID {
		t.Errorf("another user's row was unlinked")
	}
}
