package conformance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
)

func testApplySync(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	a, b, gone := bankRow(f, 0), bankRow(f, -1), bankRow(f, -2)
	a.ExternalRef, b.ExternalRef, gone.ExternalRef = "ref-a", "ref-b", "ref-gone"
	b.AccountID = f.account2
	theirs := finance.Transaction{ID: newID(), UserID: f.other, AccountID: f.otherAccount, ExternalRef: "ref-a",
		Amount: money("-1", "USD"), Date: day(0), Source: finance.SourceBankSync, Version: 1, CreatedAt: base, UpdatedAt: base}
	must(t, s.InsertTransactions(ctx, []finance.Transaction{a, b, gone, theirs}))

	got, err := s.TransactionsByExternalRef(ctx, f.user, []string{f.account, f.account2}, []string{"ref-a", "ref-b", "nope"})
	must(t, err)
	want := []string{a.ID, b.ID}
	slices.Sort(want)
	diff(t, "by external ref", want, txIDs(got))
	got, err = s.TransactionsByExternalRef(ctx, f.user, []string{f.account}, []string{"ref-b"})
	must(t, err)
	if len(got) != 0 {
		t.Errorf("ref on another account matched: %v", txIDs(got))
	}

	synced := base.Add(3 * time.Hour)
	fresh := bankRow(f, 1)
	fresh.ExternalRef = "ref-new"
	upd := a
	upd.IsPending, upd.Merchant, upd.Version, upd.UpdatedAt = false, "Posted", a.Version+1, synced
	conn := banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive, LastSyncedAt: &synced, UpdatedAt: synced}

	// A conflicting update fails the whole write.
	stale := b
	stale.Version = b.Version + 5
	err = s.ApplySync(ctx, banksync.Write{UserID: f.user, Inserts: []finance.Transaction{fresh},
		Updates: []finance.Transaction{upd, stale}, Deletes: []string{gone.ID}, Connection: conn})
	if !errors.Is(err, finance.ErrVersionConflict) {
		t.Fatalf("want ErrVersionConflict, got %v", err)
	}
	for _, id := range []string{gone.ID, a.ID} {
		if _, err := s.GetTransaction(ctx, f.user, id); err != nil {
			t.Fatalf("row %s lost by a failed sync: %v", id, err)
		}
	}
	if _, err := s.GetTransaction(ctx, f.user, fresh.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Fatalf("insert of a failed sync kept: %v", err)
	}
	if c, err := s.GetConnection(ctx, f.conn); err != nil || c.LastSyncedAt != nil {
		t.Fatalf("connection touched by a failed sync: %v %v", c.LastSyncedAt, err)
	}

	must(t, s.ApplySync(ctx, banksync.Write{UserID: f.user, Inserts: []finance.Transaction{fresh},
		Updates: []finance.Transaction{upd}, Deletes: []string{gone.ID, theirs.ID}, Connection: conn}))
	gotA, err := s.GetTransaction(ctx, f.user, a.ID)
	must(t, err)
	diff(t, "updated", upd, gotA)
	gotFresh, err := s.GetTransaction(ctx, f.user, fresh.ID)
	must(t, err)
	diff(t, "inserted", fresh, gotFresh)
	if _, err := s.GetTransaction(ctx, f.user, gone.ID); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("removed row still there: %v", err)
	}
	if _, err := s.GetTransaction(ctx, f.other, theirs.ID); err != nil {
		t.Errorf("another user's row deleted: %v", err)
	}
	c, err := s.GetConnection(ctx, f.conn)
	must(t, err)
	if c.LastSyncedAt == nil || !c.LastSyncedAt.Equal(synced) || c.Status != finance.ConnectionActive {
		t.Errorf("connection after sync: %+v", c)
	}

	// The same provider id twice on one account cannot be inserted.
	dup := bankRow(f, 0)
	dup.ExternalRef = "ref-new"
	if err := s.ApplySync(ctx, banksync.Write{UserID: f.user, Inserts: []finance.Transaction{dup}, Connection: conn}); !errors.Is(err, finance.ErrAlreadyExists) {
		t.Errorf("duplicate (account, external_ref): want ErrAlreadyExists, got %v", err)
	}
}

func testConnectionSync(t *testing.T, s Store) {
	ctx := context.Background()
	f := setup(t, s)
	synced := base.Add(time.Hour)
	must(t, s.RecordConnectionSync(ctx, banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionActive,
		LastSyncedAt: &synced, UpdatedAt: synced}))
	later := base.Add(2 * time.Hour)
	must(t, s.RecordConnectionSync(ctx, banksync.ConnectionState{ID: f.conn, Status: finance.ConnectionLoginRequired,
		ErrorCode: "login_required", ErrorMessage: "sign in again", UpdatedAt: later}))
	c, err := s.GetConnection(ctx, f.conn)
	must(t, err)
	want := finance.Connection{ID: f.conn, UserID: f.user, Provider: finance.ProviderPlaid,
		Status: finance.ConnectionLoginRequired, LastSyncedAt: &synced, ErrorCode: "login_required",
		ErrorMessage: "sign in again", CreatedAt: base, UpdatedAt: later}
	diff(t, "connection", want, c)
	if err := s.RecordConnectionSync(ctx, banksync.ConnectionState{ID: newID(), Status: "active", UpdatedAt: later}); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("missing connection: %v", err)
	}
	if _, err := s.GetConnection(ctx, "x"); !errors.Is(err, finance.ErrNotFound) {
		t.Errorf("bad id: %v", err)
	}
}
