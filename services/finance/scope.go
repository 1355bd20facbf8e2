package finance

import (
	"context"
	"slices"

	"github.com/ledgerlane/platform/pkg/problem"
)

// scope is the grant of one request, resolved for filtering.
type scope struct {
	grant              Grant
	excludedAccounts   []string
	excludedCategories []string // the grant's exclusions and their subcategories
	// institutions are the names of the user's institutions, loaded when
	// the grant redacts connection.institution (redact.go).
	institutions []phrase
}

func (sc scope) hidesAccount(id string) bool { return slices.Contains(sc.excludedAccounts, id) }

func (sc scope) hidesCategory(id string) bool {
	return id != "" && slices.Contains(sc.excludedCategories, id)
}

// scope loads the caller's grant. A grant that is gone, or that belongs to
// someone else, makes the credential unusable: 401, not 404. withCategories
// resolves category exclusions down to subcategories, which costs a query.
func (s *Service) scope(ctx context.Context, c Caller, withCategories bool) (scope, error) {
	if c.UserID == "" || c.GrantID == "" {
		return scope{}, problem.New(problem.Unauthorized, "no finance user on this credential")
	}
	g, check, err := s.lookupGrant(ctx, c.OwnerAccountID, c.UserID, c.GrantID, c.Mode)
	if err != nil {
		return scope{}, err
	}
	// A grant of another user and a user of another account get the same
	// answer, so a credential learns nothing about either.
	if !check.OK() {
		return scope{}, problem.New(problem.Unauthorized, "the credential's grant is not valid")
	}
	sc := scope{grant: g, excludedAccounts: g.ExcludedAccountIDs}
	if g.Redacts(FieldConnectionInstitution) {
		if sc.institutions, err = s.institutionPhrases(ctx, c.UserID); err != nil {
			return scope{}, err
		}
	}
	if withCategories && len(g.ExcludedCategoryIDs) > 0 {
		cats, err := s.store.ListCategories(ctx, c.UserID)
		if err != nil {
			return scope{}, s.internal(ctx, "list categories", err)
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

// writeScope is scope for a write: the grant must allow writes.
func (s *Service) writeScope(ctx context.Context, c Caller) (scope, error) {
	sc, err := s.scope(ctx, c, true)
	if err != nil {
		return sc, err
	}
	if !sc.grant.WritesEnabled {
		return sc, problem.New(problem.WritesDisabled, "this connection does not allow writes")
	}
	return sc, nil
}
