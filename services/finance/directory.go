package finance

import (
	"context"
	"errors"
)

// GrantCheck says whether a finance user, a grant and a metering account
// belong together.
type GrantCheck struct {
	// UserInAccount: the user exists and the account owns it.
	UserInAccount bool
	// GrantOfUser: the grant exists and is one of the user's grants.
	GrantOfUser bool
	// UserOfMode: the user is of the credential's mode (User.Mode).
	UserOfMode bool
}

// OK reports whether the user is the account's and of the mode, and the
// grant the user's.
func (c GrantCheck) OK() bool { return c.UserInAccount && c.GrantOfUser && c.UserOfMode }

// CheckGrant tells the metering service, before it issues a finance
// credential of mode, whether userID is a user of that mode owned by the
// metering account accountID and grantID one of that user's grants. Unknown and malformed
// ids are simply not members. Its only error is an internal problem.
//
// This is internal: no grant applies, and it is reached only over the
// DirectoryService, which has no HTTP route.
func (s *Service) CheckGrant(ctx context.Context, accountID, userID, grantID, mode string) (GrantCheck, error) {
	_, check, err := s.lookupGrant(ctx, accountID, userID, grantID, mode)
	return check, err
}

// lookupGrant reads the grant and the owner of the user; the grant is
// meaningful only when the check is OK. Every request's scope and every
// credential issue go through it, so both apply the same rule.
func (s *Service) lookupGrant(ctx context.Context, accountID, userID, grantID, mode string) (Grant, GrantCheck, error) {
	var check GrantCheck
	u, err := s.store.GetUser(ctx, userID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Grant{}, check, Internal("get user", err)
	default:
		check.UserInAccount = accountID != "" && u.OwnerAccountID == accountID
		check.UserOfMode = ModeOf(u.Mode) == ModeOf(mode)
	}
	g, err := s.store.GetGrant(ctx, grantID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return Grant{}, check, Internal("get grant", err)
	default:
		check.GrantOfUser = g.UserID == userID
	}
	return g, check, nil
}
