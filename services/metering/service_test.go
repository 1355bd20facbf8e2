package metering_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/memory"
)

var now = time.Date(2026, 5, 4, 12, 30, 0, 123456789, time.UTC)

// spyStore records every value the Service hands to the store, so tests can
// prove the secret never reaches it.
type spyStore struct {
	*memory.Store
	created []metering.Credential
	hashes  []string
	// failLookups makes CredentialByHash fail as an outage would.
	failLookups error
}

func (s *spyStore) CreateCredential(ctx context.Context, c metering.Credential) error {
	s.created = append(s.created, c)
	return s.Store.CreateCredential(ctx, c)
}

func (s *spyStore) CredentialByHash(ctx context.Context, hash string) (metering.Credential, error) {
	s.hashes = append(s.hashes, hash)
	if s.failLookups != nil {
		return metering.Credential{}, s.failLookups
	}
	return s.Store.CredentialByHash(ctx, hash)
}

func newService(t *testing.T) (*metering.Service, *spyStore, metering.Account) {
	t.Helper()
	return newServiceWith(t, allowAll)
}

// newServiceWith is newService with finance directory dir.
func newServiceWith(t *testing.T, dir metering.FinanceDirectory) (*metering.Service, *spyStore, metering.Account) {
	t.Helper()
	store := &spyStore{Store: memory.New()}
	svc := metering.NewService(metering.Config{Store: store, FinanceDirectory: dir, Clock: func() time.Time { return now }})
	acct, err := svc.CreateAccount(t.Context(), "Acme Ltd", metering.PlanGrowth, metering.EUR)
	if err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return svc, store, acct
}

// allowAll is a FinanceDirectory for which every user and grant belong to
// every account.
var allowAll = metering.FinanceDirectoryFunc(func(context.Context, string, string, string, string) error { return nil })

// wantProblem checks err is an invalid-input problem naming field.
func wantProblem(t *testing.T, err error, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want invalid-input on %q", field)
	}
	p := rpc.Problem(err)
	if p.Type != problem.InvalidInput || p.Field != field {
		t.Fatalf("error = %v (type %s, field %q), want invalid-input on %q", err, p.Type, p.Field, field)
	}
}

func TestCreateAccount(t *testing.T) {
	tests := []struct {
		name      string
		acctName  string
		plan      string
		currency  metering.Currency
		wantField string
		// The first period's end: Free's is the calendar month's, a paid
		// plan's the next anniversary (its midnight).
		wantNextClose time.Time
	}{
		{name: "free in usd", acctName: "Acme", plan: metering.PlanFree, currency: metering.USD,
			wantNextClose: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)},
		{name: "scale in gbp", acctName: "Acme", plan: metering.PlanScale, currency: metering.GBP,
			wantNextClose: time.Date(2026, 6, 4, 0, 0, 0, 0, time.UTC)},
		{name: "name is trimmed and required", acctName: "   ", plan: metering.PlanFree, currency: metering.USD, wantField: "name"},
		{name: "unknown plan", acctName: "Acme", plan: "enterprise", currency: metering.USD, wantField: "plan"},
		{name: "unknown currency", acctName: "Acme", plan: metering.PlanFree, currency: "chf", wantField: "currency"},
		{name: "currency is lowercase", acctName: "Acme", plan: metering.PlanFree, currency: "USD", wantField: "currency"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			svc := metering.NewService(metering.Config{Store: store, Clock: func() time.Time { return now }})
			a, err := svc.CreateAccount(t.Context(), tc.acctName, tc.plan, tc.currency)
			if tc.wantField != "" {
				wantProblem(t, err, tc.wantField)
				return
			}
			if err != nil {
				t.Fatalf("CreateAccount: %v", err)
			}
			want := metering.Account{
				ID:              a.ID,
				Name:            tc.acctName,
				PlanID:          tc.plan,
				BillingCurrency: tc.currency,
				BillingAnchor:   now.Truncate(time.Microsecond),
				CreatedAt:       now.Truncate(time.Microsecond),
				NextCloseAt:     &tc.wantNextClose,
			}
			if d := cmp.Diff(want, a); d != "" {
				t.Errorf("account (-want +got):\n%s", d)
			}
			got, err := svc.Account(t.Context(), a.ID)
			if err != nil {
				t.Fatalf("Account: %v", err)
			}
			if d := cmp.Diff(a, got); d != "" {
				t.Errorf("stored account (-want +got):\n%s", d)
			}
		})
	}
}

func TestIssueCredentialScopes(t *testing.T) {
	conv := func(p metering.IssueParams) metering.IssueParams {
		p.Name, p.Kind, p.Surface, p.Mode = "ci", metering.KindAPIKey, metering.SurfaceConversion, metering.ModeLive
		return p
	}
	fin := func(p metering.IssueParams) metering.IssueParams {
		p.Name, p.Kind, p.Surface, p.Mode = "app", metering.KindAccessToken, metering.SurfaceFinance, metering.ModeLive
		p.FinanceUserID, p.GrantID = "user-1", "grant-1"
		return p
	}
	tests := []struct {
		name       string
		params     metering.IssueParams
		wantScopes []string
		wantErr    string // substring of the invalid-input detail on "scopes"
	}{
		{
			name:       "conversion defaults to the six core scopes",
			params:     conv(metering.IssueParams{}),
			wantScopes: []string{"convert", "normalize", "validate", "formats:read", "jobs:read", "enrich"},
		},
		{
			name:       "conversion opt-in scopes, deduplicated, in catalogue order",
			params:     conv(metering.IssueParams{Scopes: []string{"connections:manage", "convert", "webhooks:manage", "convert"}}),
			wantScopes: []string{"convert", "webhooks:manage", "connections:manage"},
		},
		{
			name:    "keys:manage is refused",
			params:  conv(metering.IssueParams{Scopes: []string{"convert", "keys:manage"}}),
			wantErr: `"keys:manage" is reserved`,
		},
		{
			name:    "keys:manage is refused even for an operator",
			params:  conv(metering.IssueParams{Scopes: []string{"keys:manage"}, Operator: true}),
			wantErr: `"keys:manage" is reserved`,
		},
		{
			name:    "usage:read needs the operator flag",
			params:  conv(metering.IssueParams{Scopes: []string{"usage:read"}}),
			wantErr: `"usage:read" is reserved for operators`,
		},
		{
			name:       "usage:read with the operator flag",
			params:     conv(metering.IssueParams{Scopes: []string{"convert", "usage:read"}, Operator: true}),
			wantScopes: []string{"convert", "usage:read"},
		},
		{
			name:       "operator flag alone grants nothing extra",
			params:     conv(metering.IssueParams{Operator: true}),
			wantScopes: metering.DefaultConversionScopes(),
		},
		{
			name:    "finance scope on a conversion key",
			params:  conv(metering.IssueParams{Scopes: []string{"convert", "transactions:read"}}),
			wantErr: `"transactions:read" does not belong to the conversion surface`,
		},
		{
			name:    "unknown scope",
			params:  conv(metering.IssueParams{Scopes: []string{"convert", "admin"}}),
			wantErr: `unknown scope "admin"`,
		},
		{
			name:    "scopes are case-sensitive",
			params:  conv(metering.IssueParams{Scopes: []string{"Convert"}}),
			wantErr: `unknown scope "Convert"`,
		},
		{
			name:       "finance defaults to the read scopes",
			params:     fin(metering.IssueParams{}),
			wantScopes: metering.FinanceReadScopes(),
		},
		{
			name:       "finance write scopes",
			params:     fin(metering.IssueParams{Scopes: []string{"budgets:write", "transactions:write", "transactions:read", "categories:write"}}),
			wantScopes: []string{"transactions:read", "transactions:write", "categories:write", "budgets:write"},
		},
		{
			name:    "conversion scope on a finance credential",
			params:  fin(metering.IssueParams{Scopes: []string{"transactions:read", "convert"}}),
			wantErr: `"convert" does not belong to the finance surface`,
		},
		{
			name:    "usage:read on a finance credential, even for an operator",
			params:  fin(metering.IssueParams{Scopes: []string{"usage:read"}, Operator: true}),
			wantErr: `"usage:read" does not belong to the finance surface`,
		},
		{
			name:    "keys:manage on a finance credential",
			params:  fin(metering.IssueParams{Scopes: []string{"keys:manage"}}),
			wantErr: `"keys:manage" does not belong to the finance surface`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, store, acct := newService(t)
			tc.params.AccountID = acct.ID
			_, c, err := svc.IssueCredential(t.Context(), tc.params)
			if tc.wantErr != "" {
				wantProblem(t, err, "scopes")
				if !strings.Contains(rpc.Problem(err).Detail, tc.wantErr) {
					t.Errorf("detail = %q, want it to contain %q", rpc.Problem(err).Detail, tc.wantErr)
				}
				if len(store.created) != 0 {
					t.Errorf("a refused credential reached the store")
				}
				return
			}
			if err != nil {
				t.Fatalf("IssueCredential: %v", err)
			}
			if d := cmp.Diff(tc.wantScopes, c.Scopes); d != "" {
				t.Errorf("scopes (-want +got):\n%s", d)
			}
		})
	}
}

func TestIssueCredentialParams(t *testing.T) {
	valid := func(accountID string) metering.IssueParams {
		return metering.IssueParams{AccountID: accountID, Name: "ci", Kind: metering.KindAPIKey,
			Surface: metering.SurfaceConversion, Mode: metering.ModeTest}
	}
	tests := []struct {
		name      string
		edit      func(*metering.IssueParams)
		wantField string
		wantErr   error
	}{
		{name: "valid", edit: func(*metering.IssueParams) {}},
		{name: "name required", edit: func(p *metering.IssueParams) { p.Name = "" }, wantField: "name"},
		{name: "name too long", edit: func(p *metering.IssueParams) { p.Name = strings.Repeat("n", 201) }, wantField: "name"},
		{name: "unknown kind", edit: func(p *metering.IssueParams) { p.Kind = "sk" }, wantField: "kind"},
		{name: "unknown mode", edit: func(p *metering.IssueParams) { p.Mode = "sandbox" }, wantField: "mode"},
		{name: "unknown surface", edit: func(p *metering.IssueParams) { p.Surface = "edge" }, wantField: "surface"},
		{name: "conversion with a grant", edit: func(p *metering.IssueParams) { p.GrantID = "g" }, wantField: "grant_id"},
		{name: "conversion with a finance user", edit: func(p *metering.IssueParams) { p.FinanceUserID = "u" }, wantField: "finance_user_id"},
		{name: "finance without a user", edit: func(p *metering.IssueParams) {
			p.Surface, p.GrantID = metering.SurfaceFinance, "g"
		}, wantField: "finance_user_id"},
		{name: "finance without a grant", edit: func(p *metering.IssueParams) {
			p.Surface, p.FinanceUserID = metering.SurfaceFinance, "u"
		}, wantField: "grant_id"},
		{name: "finance with user and grant", edit: func(p *metering.IssueParams) {
			p.Surface, p.FinanceUserID, p.GrantID = metering.SurfaceFinance, "u", "g"
		}},
		{name: "unknown account", edit: func(p *metering.IssueParams) {
			p.AccountID = "6f1c1b7e-7a55-4bd6-9a0e-6b8f3c2a1d00"
		}, wantErr: metering.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, store, acct := newService(t)
			p := valid(acct.ID)
			tc.edit(&p)
			_, _, err := svc.IssueCredential(t.Context(), p)
			switch {
			case tc.wantField != "":
				wantProblem(t, err, tc.wantField)
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("IssueCredential: %v", err)
			}
			if (tc.wantField != "" || tc.wantErr != nil) && len(store.created) != 0 {
				t.Errorf("a refused credential reached the store")
			}
		})
	}
}

// TestIssueFinanceCredentialChecksOwnership: a finance credential is issued
// only when the finance directory confirms that the user is the account's
// and the grant the user's.
func TestIssueFinanceCredentialChecksOwnership(t *testing.T) {
	type call struct{ account, user, grant string }
	outage := errors.New("finance unreachable")
	tests := []struct {
		name      string
		answer    error // what the directory says
		noDir     bool
		wantField string
		wantErr   error
	}{
		{name: "user and grant belong to the account"},
		{name: "user of another account", answer: fmt.Errorf("checked: %w", metering.ErrFinanceUserNotInAccount), wantField: "finance_user_id"},
		{name: "grant of another user", answer: metering.ErrGrantNotOfUser, wantField: "grant_id"},
		{name: "directory fails", answer: outage, wantErr: outage},
		{name: "no directory", noDir: true, wantErr: metering.ErrNoFinanceDirectory},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls []call
			var dir metering.FinanceDirectory = metering.FinanceDirectoryFunc(func(_ context.Context, account, user, grant, _ string) error {
				calls = append(calls, call{account, user, grant})
				return tc.answer
			})
			if tc.noDir {
				dir = nil
			}
			svc, store, acct := newServiceWith(t, dir)
			_, c, err := svc.IssueCredential(t.Context(), metering.IssueParams{AccountID: acct.ID, Name: "app",
				Kind: metering.KindAccessToken, Surface: metering.SurfaceFinance, Mode: metering.ModeLive,
				FinanceUserID: "user-1", GrantID: "grant-1"})
			switch {
			case tc.wantField != "":
				wantProblem(t, err, tc.wantField)
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				if p := rpc.Problem(err); p.Type == problem.InvalidInput {
					t.Errorf("a failed check reads as invalid input: %v", err)
				}
			case err != nil:
				t.Fatalf("IssueCredential: %v", err)
			default:
				if c.FinanceUserID != "user-1" || c.GrantID != "grant-1" {
					t.Errorf("credential = %+v", c)
				}
			}
			if refused := tc.wantField != "" || tc.wantErr != nil; refused && len(store.created) != 0 {
				t.Errorf("a refused credential reached the store")
			}
			if want := []call{{acct.ID, "user-1", "grant-1"}}; !tc.noDir && !reflect.DeepEqual(calls, want) {
				t.Errorf("directory asked %v, want %v", calls, want)
			}
		})
	}

	t.Run("conversion credentials never ask", func(t *testing.T) {
		svc, _, acct := newServiceWith(t, metering.FinanceDirectoryFunc(func(context.Context, string, string, string, string) error {
			t.Error("the directory was asked for a conversion key")
			return nil
		}))
		if _, _, err := svc.IssueCredential(t.Context(), metering.IssueParams{AccountID: acct.ID, Name: "ci",
			Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: metering.ModeLive}); err != nil {
			t.Fatalf("IssueCredential: %v", err)
		}
	})
}

func TestIssueCredentialSecret(t *testing.T) {
	tests := []struct {
		kind, mode, wantPrefix string
	}{
		{metering.KindAPIKey, metering.ModeLive, "ak_live_"},
		{metering.KindAPIKey, metering.ModeTest, "ak_test_"},
		{metering.KindAccessToken, metering.ModeLive, "at_live_"},
		{metering.KindAccessToken, metering.ModeTest, "at_test_"},
	}
	for _, tc := range tests {
		t.Run(tc.wantPrefix, func(t *testing.T) {
			svc, store, acct := newService(t)
			secret, c, err := svc.IssueCredential(t.Context(), metering.IssueParams{
				AccountID: acct.ID, Name: "k", Kind: tc.kind, Surface: metering.SurfaceConversion, Mode: tc.mode,
			})
			if err != nil {
				t.Fatalf("IssueCredential: %v", err)
			}
			body, ok := strings.CutPrefix(secret, tc.wantPrefix)
			if !ok || len(body) != 52 || strings.Trim(body, "abcdefghijklmnopqrstuvwxyz234567") != "" {
				t.Fatalf("secret %q is not %s + 52 lowercase base32 characters", secret, tc.wantPrefix)
			}
			if kind, mode, ok := metering.ParseSecret(secret); !ok || kind != tc.kind || mode != tc.mode {
				t.Errorf("ParseSecret = %q, %q, %v", kind, mode, ok)
			}
			if c.Prefix != secret[:12] {
				t.Errorf("Prefix = %q, want %q", c.Prefix, secret[:12])
			}
			sum := sha256.Sum256([]byte(secret))
			if c.SecretHash != hex.EncodeToString(sum[:]) {
				t.Errorf("SecretHash is not the hex SHA-256 of the secret")
			}
			if !c.CreatedAt.Equal(now.Truncate(time.Microsecond)) {
				t.Errorf("CreatedAt = %v, want the clock's time", c.CreatedAt)
			}

			// The store must see the hash and the display prefix only.
			if len(store.created) != 1 {
				t.Fatalf("store saw %d credentials, want 1", len(store.created))
			}
			assertNoSecret(t, store.created[0], secret)

			// Two issues never share a secret.
			again, _, err := svc.IssueCredential(t.Context(), metering.IssueParams{
				AccountID: acct.ID, Name: "k2", Kind: tc.kind, Surface: metering.SurfaceConversion, Mode: tc.mode,
			})
			if err != nil || again == secret {
				t.Errorf("second secret = %q, %v", again, err)
			}
		})
	}
}

// assertNoSecret fails when any string field of c holds a stretch of the
// secret's random part longer than the display prefix shows.
func assertNoSecret(t *testing.T, c metering.Credential, secret string) {
	t.Helper()
	body := secret[8:]
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		f := v.Field(i)
		var vals []string
		switch f.Kind() {
		case reflect.String:
			vals = []string{f.String()}
		case reflect.Slice:
			if s, ok := f.Interface().([]string); ok {
				vals = s
			}
		}
		for _, s := range vals {
			if strings.Contains(s, body[:8]) {
				t.Errorf("field %s carries the secret", v.Type().Field(i).Name)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	svc, store, acct := newService(t)
	issue := func(name string) (string, metering.Credential) {
		t.Helper()
		secret, c, err := svc.IssueCredential(t.Context(), metering.IssueParams{
			AccountID: acct.ID, Name: name, Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: metering.ModeLive,
		})
		if err != nil {
			t.Fatalf("IssueCredential: %v", err)
		}
		return secret, c
	}
	liveSecret, live := issue("live")
	// Resolving records the use (at the clock's second: last_used_test.go).
	used := now.UTC().Truncate(time.Second)
	live.LastUsedAt = &used
	revokedSecret, revoked := issue("revoked")
	if err := svc.Revoke(t.Context(), revoked.ID); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	unknownSecret := "ak_live_" + strings.Repeat("a", 52)

	tests := []struct {
		name      string
		secret    string
		want      metering.Credential
		wantErr   error
		wantStore bool // whether the store is asked at all
	}{
		{name: "live credential", secret: liveSecret, want: live, wantStore: true},
		{name: "revoked", secret: revokedSecret, wantErr: metering.ErrNotFound, wantStore: true},
		{name: "well-formed but unknown", secret: unknownSecret, wantErr: metering.ErrNotFound, wantStore: true},
		{name: "empty", secret: "", wantErr: metering.ErrNotFound},
		{name: "prefix only", secret: "ak_live_", wantErr: metering.ErrNotFound},
		{name: "unknown kind", secret: "sk" + liveSecret[2:], wantErr: metering.ErrNotFound},
		{name: "unknown mode", secret: "ak_prod_" + liveSecret[8:], wantErr: metering.ErrNotFound},
		{name: "uppercase", secret: strings.ToUpper(liveSecret), wantErr: metering.ErrNotFound},
		{name: "truncated", secret: liveSecret[:len(liveSecret)-1], wantErr: metering.ErrNotFound},
		{name: "extra character", secret: liveSecret + "a", wantErr: metering.ErrNotFound},
		{name: "surrounding space", secret: " " + liveSecret, wantErr: metering.ErrNotFound},
		{name: "alphabet outside base32", secret: "ak_live_" + strings.Repeat("1", 52), wantErr: metering.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store.hashes = nil
			got, err := svc.Resolve(t.Context(), tc.secret)
			if tc.wantErr != nil {
				if err != tc.wantErr {
					t.Fatalf("error = %v, want exactly %v", err, tc.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("credential (-want +got):\n%s", d)
				}
			}
			if asked := len(store.hashes) > 0; asked != tc.wantStore {
				t.Errorf("store asked = %v, want %v", asked, tc.wantStore)
			}
			for _, h := range store.hashes {
				if h != metering.HashSecret(tc.secret) {
					t.Errorf("store was asked for %q, not the secret's hash", h)
				}
			}
		})
	}
}

func TestResolveStoreFailure(t *testing.T) {
	svc, store, acct := newService(t)
	secret, _, err := svc.IssueCredential(t.Context(), metering.IssueParams{
		AccountID: acct.ID, Name: "k", Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: metering.ModeLive,
	})
	if err != nil {
		t.Fatal(err)
	}
	outage := fmt.Errorf("connection refused")
	store.failLookups = outage
	_, err = svc.Resolve(t.Context(), secret)
	// An outage must not look like a bad key: the caller retries it instead of
	// telling the client its key is invalid.
	if !errors.Is(err, outage) || errors.Is(err, metering.ErrNotFound) {
		t.Fatalf("error = %v, want the store's error", err)
	}
}

func TestRevoke(t *testing.T) {
	tests := []struct {
		name    string
		id      func(c metering.Credential) string
		twice   bool
		wantErr error
	}{
		{name: "revokes", id: func(c metering.Credential) string { return c.ID }},
		{name: "revoking twice is a no-op", id: func(c metering.Credential) string { return c.ID }, twice: true},
		{name: "unknown id", id: func(metering.Credential) string { return "0b8e5f3c-3f1e-4c55-8a43-2d7f5e9b1a11" }, wantErr: metering.ErrNotFound},
		{name: "malformed id", id: func(metering.Credential) string { return "key-1" }, wantErr: metering.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc, _, acct := newService(t)
			secret, c, err := svc.IssueCredential(t.Context(), metering.IssueParams{
				AccountID: acct.ID, Name: "k", Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion, Mode: metering.ModeLive,
			})
			if err != nil {
				t.Fatal(err)
			}
			err = svc.Revoke(t.Context(), tc.id(c))
			if tc.twice && err == nil {
				err = svc.Revoke(t.Context(), tc.id(c))
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error = %v, want %v", err, tc.wantErr)
				}
				if _, err := svc.Resolve(t.Context(), secret); err != nil {
					t.Errorf("a failed revoke disabled the credential: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Revoke: %v", err)
			}
			if _, err := svc.Resolve(t.Context(), secret); err != metering.ErrNotFound {
				t.Errorf("Resolve after revoke = %v, want ErrNotFound", err)
			}
			list, err := svc.ListCredentials(t.Context(), acct.ID)
			if err != nil || len(list) != 1 || list[0].RevokedAt == nil || !list[0].RevokedAt.Equal(now.Truncate(time.Microsecond)) {
				t.Errorf("ListCredentials = %+v, %v; want the credential revoked at the clock's time", list, err)
			}
		})
	}
}
