// Package conformance is the behaviour every metering.Store must have. Each
// implementation's tests call Run, so memory and PostgreSQL cannot drift.
package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"

	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/admission"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/notify"
)

// t0 has microsecond precision, the finest PostgreSQL keeps.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// Store is what the suite checks: metering's Store and the Stores of its
// subdomain packages, which memory and postgres implement on one value.
type Store interface {
	metering.Store
	billing.Store
	notify.Store
	identity.Store
}

// Run runs the suite. newStore must return an empty store each time it is
// called; it is called once per case.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("CreateAccount", func(t *testing.T) { testCreateAccount(t, newStore) })
	t.Run("GetAccount", func(t *testing.T) { testGetAccount(t, newStore) })
	t.Run("CreateCredential", func(t *testing.T) { testCreateCredential(t, newStore) })
	t.Run("CredentialByHash", func(t *testing.T) { testCredentialByHash(t, newStore) })
	t.Run("ListCredentials", func(t *testing.T) { testListCredentials(t, newStore) })
	t.Run("RevokeCredential", func(t *testing.T) { testRevokeCredential(t, newStore) })
	t.Run("TouchCredential", func(t *testing.T) { testTouchCredential(t, newStore) }) // last_used.go
	t.Run("SetBillingLimits", func(t *testing.T) { testSetBillingLimits(t, newStore) })
	t.Run("ValuesAreCopies", func(t *testing.T) { testValuesAreCopies(t, newStore) })
	runBilling(t, newStore)
	runNotify(t, newStore) // notify.go
	runPortal(t, newStore)
	runPayments(t, newStore)
	runOAuth(t, newStore)
	t.Run("Housekeeping", func(t *testing.T) { testHousekeeping(t, newStore) }) // housekeeping.go
}

func newAccount(name string) metering.Account {
	return metering.Account{
		ID:              uuid.NewString(),
		Name:            name,
		PlanID:          metering.PlanStarter,
		BillingCurrency: metering.EUR,
		BillingAnchor:   t0.Add(-24 * time.Hour),
		CreatedAt:       t0,
	}
}

func newCredential(accountID string, createdAt time.Time) metering.Credential {
	id := uuid.NewString()
	// Any unique high-entropy string will do: the store only sees hashes.
	sum := sha256.Sum256([]byte("secret for " + id))
	return metering.Credential{
		ID:         id,
		AccountID:  accountID,
		Name:       "ci key",
		Kind:       metering.KindAPIKey,
		Surface:    metering.SurfaceConversion,
		Mode:       metering.ModeLive,
		Scopes:     metering.DefaultConversionScopes(),
		SecretHash: hex.EncodeToString(sum[:]),
		Prefix:     "ak_live_abcd",
		CreatedAt:  createdAt,
	}
}

func ptr[T any](v T) *T { return &v }

func wantErr(t *testing.T, got, want error) {
	t.Helper()
	if want == nil && got != nil {
		t.Fatalf("unexpected error: %v", got)
	}
	if want != nil && !errors.Is(got, want) {
		t.Fatalf("error = %v, want %v", got, want)
	}
}

func mustCreateAccount(t *testing.T, s metering.Store, a metering.Account) {
	t.Helper()
	if err := s.CreateAccount(t.Context(), a); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
}

func mustCreateCredential(t *testing.T, s metering.Store, c metering.Credential) {
	t.Helper()
	if err := s.CreateCredential(t.Context(), c); err != nil {
		t.Fatalf("CreateCredential: %v", err)
	}
}

func testCreateAccount(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		// build returns the account to create, given one already stored.
		build   func(existing metering.Account) metering.Account
		wantErr error
	}{
		{
			name:  "new account round-trips",
			build: func(metering.Account) metering.Account { return newAccount("acme") },
		},
		{
			name: "free plan in gbp round-trips",
			build: func(metering.Account) metering.Account {
				a := newAccount("gbp ltd")
				a.BillingCurrency = metering.GBP
				a.PlanID = metering.PlanFree
				return a
			},
		},
		{
			name: "duplicate id conflicts and keeps the original",
			build: func(e metering.Account) metering.Account {
				a := newAccount("impostor")
				a.ID = e.ID
				return a
			},
			wantErr: metering.ErrConflict,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			existing := newAccount("existing")
			mustCreateAccount(t, s, existing)
			a := tc.build(existing)
			wantErr(t, s.CreateAccount(t.Context(), a), tc.wantErr)
			want := a
			if tc.wantErr != nil {
				want = existing
			}
			got, err := s.GetAccount(t.Context(), want.ID)
			if err != nil {
				t.Fatalf("GetAccount: %v", err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("GetAccount (-want +got):\n%s", d)
			}
		})
	}
}

func testGetAccount(t *testing.T, newStore func(t *testing.T) Store) {
	a := newAccount("acme")
	tests := []struct {
		name    string
		id      string
		wantErr error
	}{
		{"existing", a.ID, nil},
		{"unknown", uuid.NewString(), metering.ErrNotFound},
		{"malformed", "not-a-uuid", metering.ErrNotFound},
		{"empty", "", metering.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			mustCreateAccount(t, s, a)
			got, err := s.GetAccount(t.Context(), tc.id)
			wantErr(t, err, tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			if d := cmp.Diff(a, got); d != "" {
				t.Errorf("GetAccount (-want +got):\n%s", d)
			}
		})
	}
}

func testCreateCredential(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		// build returns the credential to create, given the account and a
		// credential already stored for it.
		build   func(account metering.Account, existing metering.Credential) metering.Credential
		wantErr error
	}{
		{
			name: "conversion key round-trips",
			build: func(a metering.Account, _ metering.Credential) metering.Credential {
				return newCredential(a.ID, t0)
			},
		},
		{
			name: "finance token round-trips",
			build: func(a metering.Account, _ metering.Credential) metering.Credential {
				c := newCredential(a.ID, t0)
				c.Kind = metering.KindAccessToken
				c.Surface = metering.SurfaceFinance
				c.Mode = metering.ModeTest
				c.Scopes = append(metering.FinanceReadScopes(), metering.ScopeTransactionsWrite)
				c.Prefix = "at_test_wxyz"
				c.FinanceUserID = "user-42"
				c.GrantID = "grant-7"
				return c
			},
		},
		{
			name: "revocation time round-trips",
			build: func(a metering.Account, _ metering.Credential) metering.Credential {
				c := newCredential(a.ID, t0)
				c.RevokedAt = ptr(t0.Add(time.Hour))
				return c
			},
		},
		{
			name: "duplicate hash conflicts",
			build: func(a metering.Account, e metering.Credential) metering.Credential {
				c := newCredential(a.ID, t0)
				c.SecretHash = e.SecretHash
				return c
			},
			wantErr: metering.ErrConflict,
		},
		{
			name: "duplicate id conflicts",
			build: func(a metering.Account, e metering.Credential) metering.Credential {
				c := newCredential(a.ID, t0)
				c.ID = e.ID
				return c
			},
			wantErr: metering.ErrConflict,
		},
		{
			name: "unknown account is not found",
			build: func(metering.Account, metering.Credential) metering.Credential {
				return newCredential(uuid.NewString(), t0)
			},
			wantErr: metering.ErrNotFound,
		},
		{
			name: "malformed account id is not found",
			build: func(metering.Account, metering.Credential) metering.Credential {
				return newCredential("acct_1", t0)
			},
			wantErr: metering.ErrNotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			a := newAccount("acme")
			mustCreateAccount(t, s, a)
			existing := newCredential(a.ID, t0.Add(-time.Minute))
			mustCreateCredential(t, s, existing)

			c := tc.build(a, existing)
			err := s.CreateCredential(t.Context(), c)
			wantErr(t, err, tc.wantErr)

			if tc.wantErr != nil {
				// The failed create must leave the stored credential alone.
				got, err := s.CredentialByHash(t.Context(), existing.SecretHash)
				if err != nil {
					t.Fatalf("CredentialByHash: %v", err)
				}
				if d := cmp.Diff(existing, got); d != "" {
					t.Errorf("existing credential changed (-want +got):\n%s", d)
				}
				return
			}
			got, err := s.CredentialByHash(t.Context(), c.SecretHash)
			if err != nil {
				t.Fatalf("CredentialByHash: %v", err)
			}
			if d := cmp.Diff(c, got); d != "" {
				t.Errorf("CredentialByHash (-want +got):\n%s", d)
			}
		})
	}
}

func testCredentialByHash(t *testing.T, newStore func(t *testing.T) Store) {
	a := newAccount("acme")
	active := newCredential(a.ID, t0)
	revoked := newCredential(a.ID, t0)
	revoked.RevokedAt = ptr(t0.Add(time.Minute))
	unknown := newCredential(a.ID, t0)

	tests := []struct {
		name    string
		hash    string
		want    metering.Credential
		wantErr error
	}{
		{"active", active.SecretHash, active, nil},
		{"revoked is still returned", revoked.SecretHash, revoked, nil},
		{"unknown hash", unknown.SecretHash, metering.Credential{}, metering.ErrNotFound},
		{"empty hash", "", metering.Credential{}, metering.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			mustCreateAccount(t, s, a)
			mustCreateCredential(t, s, active)
			mustCreateCredential(t, s, revoked)
			got, err := s.CredentialByHash(t.Context(), tc.hash)
			wantErr(t, err, tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("CredentialByHash (-want +got):\n%s", d)
			}
		})
	}
}

func testListCredentials(t *testing.T, newStore func(t *testing.T) Store) {
	a, b, empty := newAccount("a"), newAccount("b"), newAccount("empty")
	a2 := newCredential(a.ID, t0.Add(2*time.Second))
	a1 := newCredential(a.ID, t0.Add(time.Second))
	a3 := newCredential(a.ID, t0.Add(3*time.Second))
	a3.RevokedAt = ptr(t0.Add(4 * time.Second))
	// Two created in the same microsecond: ordered by ID.
	tieX, tieY := newCredential(a.ID, t0.Add(5*time.Second)), newCredential(a.ID, t0.Add(5*time.Second))
	if tieY.ID < tieX.ID {
		tieX, tieY = tieY, tieX
	}
	b1 := newCredential(b.ID, t0)

	tests := []struct {
		name      string
		accountID string
		want      []metering.Credential
	}{
		{"oldest first, revoked included, ties by id", a.ID, []metering.Credential{a1, a2, a3, tieX, tieY}},
		{"only the account's own", b.ID, []metering.Credential{b1}},
		{"account without credentials", empty.ID, []metering.Credential{}},
		{"unknown account", uuid.NewString(), []metering.Credential{}},
		{"malformed account id", "nope", []metering.Credential{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			for _, acc := range []metering.Account{a, b, empty} {
				mustCreateAccount(t, s, acc)
			}
			for _, c := range []metering.Credential{tieY, a3, b1, a2, tieX, a1} {
				mustCreateCredential(t, s, c)
			}
			got, err := s.ListCredentials(t.Context(), tc.accountID)
			if err != nil {
				t.Fatalf("ListCredentials: %v", err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ListCredentials (-want +got):\n%s", d)
			}
		})
	}
}

func testRevokeCredential(t *testing.T, newStore func(t *testing.T) Store) {
	t1, t2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	type call struct {
		id      string // "" means the stored credential's ID
		at      time.Time
		wantErr error
	}
	tests := []struct {
		name        string
		calls       []call
		wantRevoked *time.Time
	}{
		{"revokes", []call{{at: t1}}, &t1},
		{"second revoke keeps the first time", []call{{at: t1}, {at: t2}}, &t1},
		{"unknown id", []call{{id: uuid.NewString(), at: t1, wantErr: metering.ErrNotFound}}, nil},
		{"malformed id", []call{{id: "nope", at: t1, wantErr: metering.ErrNotFound}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			a := newAccount("acme")
			mustCreateAccount(t, s, a)
			c := newCredential(a.ID, t0)
			mustCreateCredential(t, s, c)
			for _, cl := range tc.calls {
				id := cl.id
				if id == "" {
					id = c.ID
				}
				wantErr(t, s.RevokeCredential(t.Context(), id, cl.at), cl.wantErr)
			}
			want := c
			want.RevokedAt = tc.wantRevoked
			got, err := s.CredentialByHash(t.Context(), c.SecretHash)
			if err != nil {
				t.Fatalf("CredentialByHash: %v", err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("after revoke (-want +got):\n%s", d)
			}
			list, err := s.ListCredentials(t.Context(), a.ID)
			if err != nil {
				t.Fatalf("ListCredentials: %v", err)
			}
			if d := cmp.Diff([]metering.Credential{want}, list); d != "" {
				t.Errorf("ListCredentials after revoke (-want +got):\n%s", d)
			}
		})
	}
}

// testValuesAreCopies guards against a store handing out or keeping references
// to caller memory (the memory store's classic bug).
func testValuesAreCopies(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, s metering.Store, created *metering.Credential)
	}{
		{"input after create", func(t *testing.T, _ metering.Store, created *metering.Credential) {
			created.Scopes[0] = "tampered"
		}},
		{"result of CredentialByHash", func(t *testing.T, s metering.Store, created *metering.Credential) {
			got, err := s.CredentialByHash(t.Context(), created.SecretHash)
			if err != nil {
				t.Fatal(err)
			}
			got.Scopes[0] = "tampered"
		}},
		{"result of ListCredentials", func(t *testing.T, s metering.Store, created *metering.Credential) {
			got, err := s.ListCredentials(t.Context(), created.AccountID)
			if err != nil {
				t.Fatal(err)
			}
			got[0].Scopes[0] = "tampered"
			*got[0].RevokedAt = t0
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			a := newAccount("acme")
			mustCreateAccount(t, s, a)
			c := newCredential(a.ID, t0)
			c.RevokedAt = ptr(t0.Add(time.Minute))
			want := c
			want.Scopes = append([]string(nil), c.Scopes...)
			want.RevokedAt = ptr(*c.RevokedAt)
			mustCreateCredential(t, s, c)

			tc.mutate(t, s, &c)

			got, err := s.CredentialByHash(t.Context(), want.SecretHash)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("stored credential changed (-want +got):\n%s", d)
			}
		})
	}
}

func testSetBillingLimits(t *testing.T, newStore func(t *testing.T) Store) {
	ctx := t.Context()
	s := newStore(t)
	a := newAccount("limits")
	mustCreateAccount(t, s, a)

	got, err := s.GetAccount(ctx, a.ID)
	if err != nil || got.HardStop || got.OverageCapCents != nil {
		t.Fatalf("new account: %+v %v", got, err)
	}
	steps := []struct {
		hardStop bool
		cap      *int64
	}{
		{true, nil},
		{false, ptr(int64(5_000))},
		{true, ptr(int64(1))},
		{false, nil},
	}
	for _, st := range steps {
		if err := s.SetBillingLimits(ctx, a.ID, st.hardStop, st.cap, t0); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAccount(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.HardStop != st.hardStop || (got.OverageCapCents == nil) != (st.cap == nil) ||
			(st.cap != nil && *got.OverageCapCents != *st.cap) {
			t.Fatalf("after SetBillingLimits(%v, %v): %+v", st.hardStop, st.cap, got)
		}
	}
	wantErr(t, s.SetBillingLimits(ctx, "00000000-0000-0000-0000-000000000000", true, nil, t0), metering.ErrNotFound)
	wantErr(t, s.SetBillingLimits(ctx, "not-a-uuid", true, nil, t0), metering.ErrNotFound)
}

// newServices builds the root's and billing's Services over store as
// server.New wires them: billing's payment standing narrows the root's
// limits, the root announces changes to nt, and billing reaches accounts
// through the root. counters, proc and nt may be nil.
func newServices(store Store, counters *admission.Controller, proc billing.PaymentProcessor, nt *notify.Service, clock metering.Clock) (*metering.Service, *billing.Service) {
	mc := metering.Config{Store: store, Payments: billing.NewStanding(store), Clock: clock}
	bc := billing.Config{Store: store, PaymentProcessor: proc, Clock: clock}
	if counters != nil {
		mc.Counters, bc.Counters = counters, counters
	}
	if nt != nil {
		mc.Watcher, bc.Notices = nt, nt
	}
	svc := metering.NewService(mc)
	bc.Accounts = svc
	return svc, billing.NewService(bc)
}
