package metering

import (
	"context"
	"errors"
	"fmt"

	"github.com/ledgerlane/platform/pkg/problem"
)

// FinanceDirectory answers whether a finance user and grant belong to an
// account. The finance service owns users (each belongs to one account) and
// grants (each belongs to one user); the Service asks before it issues a
// finance credential, so no credential ever names another account's user or
// grant. Adapter: financedir, over gRPC (meteringctl and the local stack).
type FinanceDirectory interface {
	// CheckGrant returns nil when userID is a finance user of accountID and
	// of mode, and grantID one of that user's grants; an error wrapping
	// ErrFinanceUserNotInAccount, ErrFinanceUserOtherMode or
	// ErrGrantNotOfUser when they are not (unknown ids included); any other
	// error when it could not tell.
	CheckGrant(ctx context.Context, accountID, userID, grantID, mode string) error
}

// FinanceDirectoryFunc is a function used as a FinanceDirectory.
type FinanceDirectoryFunc func(ctx context.Context, accountID, userID, grantID, mode string) error

// CheckGrant calls f.
func (f FinanceDirectoryFunc) CheckGrant(ctx context.Context, accountID, userID, grantID, mode string) error {
	return f(ctx, accountID, userID, grantID, mode)
}

// FinanceDirectory answers.
var (
	ErrFinanceUserNotInAccount = errors.New("metering: the finance user is not a user of the account")
	ErrGrantNotOfUser          = errors.New("metering: the grant is not a grant of the finance user")
	// ErrFinanceUserOtherMode: a test credential for a live user or the
	// reverse; test mode never reaches live data.
	ErrFinanceUserOtherMode = errors.New("metering: the finance user is of the other mode")
)

// ErrNoFinanceDirectory: the Service has no FinanceDirectory, so it cannot
// issue finance credentials.
var ErrNoFinanceDirectory = errors.New("metering: no finance directory is configured, so finance credentials cannot be issued")

// checkFinance refuses a finance credential whose user is not the account's
// or whose grant is not the user's.
func (s *Service) checkFinance(ctx context.Context, p IssueParams) error {
	if s.finance == nil {
		return ErrNoFinanceDirectory
	}
	err := s.finance.CheckGrant(ctx, p.AccountID, p.FinanceUserID, p.GrantID, p.Mode)
	switch {
	case err == nil:
		return nil
	case p.Sandbox && errors.Is(err, ErrGrantNotOfUser):
		return problem.New(problem.NotFound, "sandbox grant not found").WithField("grant_id")
	case p.Sandbox && (errors.Is(err, ErrFinanceUserNotInAccount) || errors.Is(err, ErrFinanceUserOtherMode)):
		// Another account's user, or a live one of this account: the
		// sandbox knows neither.
		return problem.New(problem.NotFound, "sandbox user not found").WithField("user_id")
	case errors.Is(err, ErrFinanceUserNotInAccount):
		return problem.New(problem.InvalidInput,
			fmt.Sprintf("finance user %q is not a user of account %q", p.FinanceUserID, p.AccountID)).WithField("finance_user_id")
	case errors.Is(err, ErrFinanceUserOtherMode):
		return problem.New(problem.InvalidInput,
			fmt.Sprintf("finance user %q is not a %s user: a %s credential reaches %s users only, so test mode never reads live data",
				p.FinanceUserID, p.Mode, p.Mode, p.Mode)).WithField("mode")
	case errors.Is(err, ErrGrantNotOfUser):
		return problem.New(problem.InvalidInput,
			fmt.Sprintf("grant %q is not a grant of finance user %q", p.GrantID, p.FinanceUserID)).WithField("grant_id")
	default:
		return fmt.Errorf("check finance user and grant: %w", err)
	}
}

// SandboxCredentialParams is a finance credential asked for through the
// finance sandbox (POST /v1/sandbox/credentials).
type SandboxCredentialParams struct {
	// Mode is the calling credential's: the sandbox serves test mode only.
	Mode          string
	Name          string // default "sandbox"
	Kind          string // KindAccessToken (default) or KindAPIKey
	Scopes        []string
	FinanceUserID string
	GrantID       string
}

// IssueSandboxCredential issues a test-mode finance credential for one of
// the account's sandbox users under one of its grants, by IssueCredential's
// rules (never as an operator). A live caller gets test-mode-only; a user
// or grant the FinanceDirectory does not find as the account's test user
// and its grant is 404 (docs/finance-sandbox.md).
func (s *Service) IssueSandboxCredential(ctx context.Context, accountID string, p SandboxCredentialParams) (string, Credential, error) {
	if p.Mode != ModeTest {
		return "", Credential{}, problem.New(problem.TestModeOnly,
			"the finance sandbox is test mode only: call it with a test credential (ak_test_… or at_test_…) carrying "+ScopeFinanceSandboxManage)
	}
	if p.FinanceUserID == "" {
		return "", Credential{}, problem.New(problem.InvalidInput, "user_id is required").WithField("user_id")
	}
	if p.GrantID == "" {
		return "", Credential{}, problem.New(problem.InvalidInput, "grant_id is required").WithField("grant_id")
	}
	if p.Name == "" {
		p.Name = "sandbox"
	}
	if p.Kind == "" {
		p.Kind = KindAccessToken
	}
	return s.IssueCredential(ctx, IssueParams{AccountID: accountID, Name: p.Name, Kind: p.Kind, Surface: SurfaceFinance,
		Mode: ModeTest, Scopes: p.Scopes, FinanceUserID: p.FinanceUserID, GrantID: p.GrantID, Sandbox: true})
}
