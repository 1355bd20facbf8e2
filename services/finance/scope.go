package finance

import (
	"context"
	"slices"

	"github.com/ledgerlane/platform/pkg/problem"
)

// Scope is the grant of one request, resolved for filtering: what every
// read and write applies, in the root and in each subdomain.
type Scope struct {
	grant              Grant
	excludedAccounts   []string
	excludedCategories []string // the grant's exclusions and their subcategories
	// institutions are the names of the user's institutions, loaded when
	// the grant redacts connection.institution (redact.go).
	institutions []phrase
}

// HidesAccount reports whether the grant excludes account id.
func (sc Scope) HidesAccount(id string) bool { return slices.Contains(sc.excludedAccounts, id) }

// HidesCategory reports whether the grant excludes category id or its
// parent (resolved only by a Scope loaded with categories).
func (sc Scope) HidesCategory(id string) bool {
	return id != "" && slices.Contains(sc.excludedCategories, id)
}

// Grant is the request's grant.
func (sc Scope) Grant() Grant { return sc.grant }

// ExcludedAccounts are the accounts the grant hides, for store filters.
func (sc Scope) ExcludedAccounts() []string { return sc.excludedAccounts }

// ExcludedCategories are the categories the grant hides with their
// subcategories (loaded with categories only), for store filters.
func (sc Scope) ExcludedCategories() []string { return sc.excludedCategories }

// NamesInstitution reports whether text names one of the user's
// institutions, when the grant redacts connection.institution (always
// false otherwise): such free text is dropped whole (redact.go).
func (sc Scope) NamesInstitution(text string) bool { return namesAny(text, sc.institutions) }

// Scope loads the caller's grant. A grant that is gone, or that belongs to
// someone else, makes the credential unusable: 401, not 404. withCategories
// resolves category exclusions down to subcategories, which costs a query.
func (s *Service) Scope(ctx context.Context, c Caller, withCategories bool) (Scope, error) {
	if c.UserID == "" || c.GrantID == "" {
		return Scope{}, problem.New(problem.Unauthorized, "no finance user on this credential")
	}
	g, check, err := s.lookupGrant(ctx, c.OwnerAccountID, c.UserID, c.GrantID, c.Mode)
	if err != nil {
		return Scope{}, err
	}
	// A grant of another user and a user of another account get the same
	// answer, so a credential learns nothing about either.
	if !check.OK() {
		return Scope{}, problem.New(problem.Unauthorized, "the credential's grant is not valid")
	}
	sc := Scope{grant: g, excludedAccounts: g.ExcludedAccountIDs}
	if g.Redacts(FieldConnectionInstitution) {
		if sc.institutions, err = s.institutionPhrases(ctx, c.UserID); err != nil {
			return Scope{}, err
		}
	}
	if withCategories && len(g.ExcludedCategoryIDs) > 0 {
		cats, err := s.store.ListCategories(ctx, c.UserID)
		if err != nil {
			return Scope{}, Internal("list categories", err)
		}
		sc.excludedCategories = expandCategories(g.ExcludedCategoryIDs, cats)
	}
	return sc, nil
}

// expandCategories returns excluded plus the subcategories of each: hiding
// a parent must not leave its children showing what it hid.
func expandCategories(excluded []string, all []Category) []string {
	if len(excluded) == 0 {
		return nil
	}
	out := slices.Clone(excluded)
	for _, c := range all {
		if c.ParentID != "" && slices.Contains(excluded, c.ParentID) && !slices.Contains(out, c.ID) {
			out = append(out, c.ID)
		}
	}
	return out
}

// WriteScope is Scope for a write: the grant must allow writes.
func (s *Service) WriteScope(ctx context.Context, c Caller) (Scope, error) {
	sc, err := s.Scope(ctx, c, true)
	if err != nil {
		return sc, err
	}
	if !sc.grant.WritesEnabled {
		return sc, problem.New(problem.WritesDisabled, "this connection does not allow writes")
	}
	return sc, nil
}
