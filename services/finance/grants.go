package finance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ledgerlane/platform/pkg/problem"
)

// Changing a grant's privacy settings: GET and PATCH
// /v1/finance-grants/{id} (docs/privacy.md, "Changing a grant").
//
// The settings are the finance user's consent to one client, so they are
// changed by the tenant that owns the user (the platform whose app asked
// the user), never through the finance credential they constrain: a client
// must not be able to widen what it may see. The tenant calls with a
// conversion-surface credential carrying finance_grants:manage, in the
// user's mode.

// Tenant is a metering account acting on its own finance users: the
// credential's account and mode, and for writes the credential and its
// Idempotency-Key (the scope of a write's fingerprint).
type Tenant struct {
	AccountID      string
	Mode           string
	CredentialID   string
	IdempotencyKey string
}

// GrantFields are the field ids a grant can redact, in the order they are
// documented.
var GrantFields = []string{FieldTransactionLocation, FieldConnectionInstitution}

// GrantUpdate is PATCH /v1/finance-grants/{id}. A nil list or flag leaves
// that setting unchanged; an empty list clears it. Each list replaces the
// stored one whole.
type GrantUpdate struct {
	ID                  string
	ExpectedVersion     int64
	RedactedFields      *[]string
	ExcludedAccountIDs  *[]string
	ExcludedCategoryIDs *[]string
	WritesEnabled       *bool
}

// grantNotFound is the one answer for an unknown grant, another tenant's
// and another mode's: none of them may be told apart.
func grantNotFound() error {
	return problem.New(problem.NotFound, "grant not found").WithField("id")
}

// tenantGrant reads grant id when t's account owns its user in t's mode.
func (s *Service) tenantGrant(ctx context.Context, t Tenant, id string) (Grant, error) {
	id, err := RequiredUUID(id, "id")
	if err != nil {
		return Grant{}, err
	}
	if t.AccountID == "" {
		return Grant{}, problem.New(problem.Unauthorized, "a credential is required")
	}
	g, err := s.store.GetGrant(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Grant{}, grantNotFound()
	}
	if err != nil {
		return Grant{}, Internal("get grant", err)
	}
	u, err := s.store.GetUser(ctx, g.UserID)
	switch {
	case errors.Is(err, ErrNotFound):
		return Grant{}, grantNotFound()
	case err != nil:
		return Grant{}, Internal("get user", err)
	case u.OwnerAccountID != t.AccountID || ModeOf(u.Mode) != ModeOf(t.Mode):
		return Grant{}, grantNotFound()
	}
	return g, nil
}

// TenantGrant answers GET /v1/finance-grants/{id}.
func (s *Service) TenantGrant(ctx context.Context, t Tenant, id string) (Grant, error) {
	return s.tenantGrant(ctx, t, id)
}

// UpdateGrantSettings answers PATCH /v1/finance-grants/{id}: a
// compare-and-swap on expected_version that replaces the settings sent.
// Every excluded id must name one of the user's accounts or a category the
// user sees (400 naming the list otherwise), so a typo cannot silently
// exclude nothing. A change of exclusions or redactions moves the grant's
// change feed (its rows now hidden arrive as removed, now shown as added)
// and announces transactions.sync_updates_available for that grant.
func (s *Service) UpdateGrantSettings(ctx context.Context, t Tenant, u GrantUpdate) (Result[Grant], error) {
	var res Result[Grant]
	if _, err := RequiredUUID(u.ID, "id"); err != nil {
		return res, err
	}
	if u.ExpectedVersion <= 0 {
		return res, Invalid("expected_version", "expected_version is required: send the version you read")
	}
	redacted, err := readRedactedFields(u.RedactedFields)
	if err != nil {
		return res, err
	}
	old, err := s.tenantGrant(ctx, t, u.ID)
	if err != nil {
		return res, err
	}
	// The fingerprint of the request as sent, in the scope the edge keys
	// the write by (the credential); expected_version left out.
	fp := u
	fp.ExpectedVersion = 0
	pw, err := NewPendingWrite(Caller{UserID: old.UserID, GrantID: old.ID, CredentialID: t.CredentialID, IdempotencyKey: t.IdempotencyKey},
		"grant", fp)
	if err != nil {
		return res, Internal("fingerprint grant update", err)
	}
	if old.Version != u.ExpectedVersion {
		if pw.Replays(old.LastWrite, old.Version, u.ExpectedVersion) {
			return Result[Grant]{Data: old, Replayed: true}, nil
		}
		return res, grantVersionConflict(old.Version)
	}
	g := old
	if redacted != nil {
		g.RedactedFields = *redacted
	}
	if u.ExcludedAccountIDs != nil {
		if g.ExcludedAccountIDs, err = s.knownAccounts(ctx, old.UserID, *u.ExcludedAccountIDs); err != nil {
			return res, err
		}
	}
	if u.ExcludedCategoryIDs != nil {
		if g.ExcludedCategoryIDs, err = s.knownCategories(ctx, old.UserID, *u.ExcludedCategoryIDs); err != nil {
			return res, err
		}
	}
	if u.WritesEnabled != nil {
		g.WritesEnabled = *u.WritesEnabled
	}
	scopeChanged := !sameSet(g.RedactedFields, old.RedactedFields) || !sameSet(g.ExcludedAccountIDs, old.ExcludedAccountIDs) ||
		!sameSet(g.ExcludedCategoryIDs, old.ExcludedCategoryIDs)
	if !scopeChanged && g.WritesEnabled == old.WritesEnabled {
		// Nothing differs: no new version, as a transaction PATCH.
		return Result[Grant]{Data: old}, nil
	}
	g.Version = old.Version + 1
	g.UpdatedAt = s.now().UTC().Truncate(time.Microsecond) // what the stores keep
	g.LastWrite = pw.Mark(g.Version)
	// A feed change's announcement commits with the settings (the outbox).
	var notes []Note
	if n, ok := s.Note(NoteGrant, g.UserID); ok && scopeChanged {
		n.GrantID = g.ID
		notes = append(notes, n)
	}
	switch err := s.store.UpdateGrant(ctx, g, old.Version, notes...); {
	case errors.Is(err, ErrVersionConflict):
		return res, grantVersionConflict(0)
	case errors.Is(err, ErrNotFound):
		return res, grantNotFound()
	case err != nil:
		return res, Internal("update grant", err)
	}
	s.log.InfoContext(ctx, "finance grant updated", "grant_id", g.ID, "user_id", g.UserID, "version", g.Version)
	if scopeChanged {
		s.notifier.Written(ctx, g.UserID)
	}
	return Result[Grant]{Data: g}, nil
}

func grantVersionConflict(current int64) error {
	detail := "the grant changed since you read it: read it again and retry"
	if current > 0 {
		detail = fmt.Sprintf("the grant is at version %d: read it again and retry", current)
	}
	return problem.New(problem.VersionConflict, detail).WithField("expected_version")
}

// readRedactedFields checks the field ids: known ones only, each once
// (duplicates collapse), nil when not sent.
func readRedactedFields(in *[]string) (*[]string, error) {
	if in == nil {
		return nil, nil
	}
	out := []string{}
	for _, f := range *in {
		if !slices.Contains(GrantFields, f) {
			return nil, Invalid("redacted_fields", fmt.Sprintf("unknown field id %q: the field ids are %s", clip(f),
				strings.Join(GrantFields, ", ")))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return &out, nil
}

// knownAccounts checks that every id names one of the user's accounts and
// returns them lower-cased, each once, in the order sent.
func (s *Service) knownAccounts(ctx context.Context, userID string, ids []string) ([]string, error) {
	const field = "excluded_account_ids"
	accts, err := s.store.ListAccounts(ctx, userID)
	if err != nil {
		return nil, Internal("list accounts", err)
	}
	known := make(map[string]bool, len(accts))
	for _, a := range accts {
		known[a.ID] = true
	}
	return knownIDs(ids, known, field, "account")
}

// knownCategories checks that every id names a category the user sees (a
// system category or one of the user's own).
func (s *Service) knownCategories(ctx context.Context, userID string, ids []string) ([]string, error) {
	const field = "excluded_category_ids"
	cats, err := s.store.ListCategories(ctx, userID)
	if err != nil {
		return nil, Internal("list categories", err)
	}
	known := make(map[string]bool, len(cats))
	for _, c := range cats {
		known[c.ID] = true
	}
	return knownIDs(ids, known, field, "category")
}

func knownIDs(ids []string, known map[string]bool, field, what string) ([]string, error) {
	out := []string{}
	for _, id := range ids {
		if !IsUUID(id) {
			return nil, Invalid(field, fmt.Sprintf("%s must hold %s ids (UUIDs): %q is not one", field, what, clip(id)))
		}
		id = strings.ToLower(id)
		if !known[id] {
			return nil, Invalid(field, fmt.Sprintf("%s %s is not one of the user's", what, id))
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// clip bounds what a refusal echoes of a client's value.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	n := 64
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// sameSet reports whether two lists hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
