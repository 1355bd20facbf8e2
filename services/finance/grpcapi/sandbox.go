package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// ScopeSandbox is the conversion-surface scope of the finance sandbox's
// routes (the metering scope finance_sandbox:manage).
const ScopeSandbox = "finance_sandbox:manage"

type sandboxServer struct {
	financev1.UnimplementedSandboxServiceServer
	svc *sandboxlink.Service
}

// sandboxOwner reads who calls the sandbox: a conversion credential with
// finance_sandbox:manage (the gateway checked the scope; the mode is the
// credential's, which the service refuses unless test), or the portal's
// session acting for its account holder, in test mode since everything the
// sandbox makes is.
func sandboxOwner(ctx context.Context) (sandboxlink.Owner, error) {
	p, ok := principal.FromIncoming(ctx)
	switch {
	case !ok:
		return sandboxlink.Owner{}, problem.New(problem.Unauthorized, "a credential is required")
	case p.Surface == principal.SurfacePortal && p.HasScope(principal.ScopeKeysManage):
		return sandboxlink.Owner{AccountID: p.AccountID, Mode: sandboxlink.ModeTest}, nil
	case p.Surface == principal.SurfaceConversion && p.HasScope(ScopeSandbox):
		return sandboxlink.Owner{AccountID: p.AccountID, Mode: p.Mode}, nil
	}
	return sandboxlink.Owner{}, problem.New(problem.ForbiddenScope, "the finance sandbox needs a test key with "+ScopeSandbox)
}

func asOwner[R any](ctx context.Context, do func(sandboxlink.Owner) (R, error)) (R, error) {
	var zero R
	o, err := sandboxOwner(ctx)
	if err != nil {
		return zero, err
	}
	return do(o)
}

func sandboxUserProto(u finance.User) *financev1.SandboxUser {
	return &financev1.SandboxUser{Id: u.ID, Name: u.Name, Mode: finance.ModeOf(u.Mode), CreatedAt: timestamppb.New(u.CreatedAt)}
}

func sandboxLinkProto(v sandboxlink.View) *financev1.SandboxLink {
	out := &financev1.SandboxLink{Id: v.ID, UserId: v.UserID, InstitutionId: v.InstitutionID, InstitutionName: v.Institution.Name,
		Status: v.Status, ErrorCode: optional(v.ErrorCode), MfaPrompt: optional(v.MFAPrompt), MfaAttempts: int32(v.MFAAttempts),
		WritesEnabled: v.WritesEnabled, ConnectionId: optional(v.ConnectionID), GrantId: optional(v.GrantID),
		CreatedAt: timestamppb.New(v.CreatedAt), UpdatedAt: timestamppb.New(v.UpdatedAt)}
	if v.Status == sandboxlink.StatusMFARequired {
		out.MfaExpiresAt = timestamppb.New(v.ExpiresAt)
	}
	for _, a := range v.Accounts {
		out.Accounts = append(out.Accounts, accountProto(a))
	}
	return out
}

func (s *sandboxServer) CreateSandboxUser(ctx context.Context, req *financev1.CreateSandboxUserRequest) (*financev1.CreateSandboxUserResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.CreateSandboxUserResponse, error) {
		u, err := s.svc.CreateUser(ctx, o, req.GetName())
		if err != nil {
			return nil, err
		}
		return &financev1.CreateSandboxUserResponse{User: sandboxUserProto(u)}, nil
	})
}

func (s *sandboxServer) ListSandboxUsers(ctx context.Context, _ *financev1.ListSandboxUsersRequest) (*financev1.ListSandboxUsersResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.ListSandboxUsersResponse, error) {
		us, err := s.svc.Users(ctx, o)
		if err != nil {
			return nil, err
		}
		return &financev1.ListSandboxUsersResponse{Data: protos(us, sandboxUserProto)}, nil
	})
}

func (s *sandboxServer) ListSandboxInstitutions(ctx context.Context, _ *financev1.ListSandboxInstitutionsRequest) (*financev1.ListSandboxInstitutionsResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.ListSandboxInstitutionsResponse, error) {
		ins, err := s.svc.Institutions(o)
		if err != nil {
			return nil, err
		}
		return &financev1.ListSandboxInstitutionsResponse{Data: protos(ins, sandboxInstitutionProto)}, nil
	})
}

func sandboxInstitutionProto(in sandboxlink.Institution) *financev1.SandboxInstitution {
	creds := &financev1.SandboxTestCredentials{Username: sandboxlink.TestUsername, Password: sandboxlink.TestPassword}
	if in.Outcome == sandboxlink.OutcomeMFA {
		creds.MfaCode = optional(sandboxlink.TestMFACode)
	}
	pi := &financev1.SandboxInstitution{Id: in.ID, Name: in.Name, Outcome: in.Outcome, TestCredentials: creds}
	for _, a := range in.Accounts {
		pi.Accounts = append(pi.Accounts, &financev1.SandboxInstitutionAccount{Name: a.Name, Type: a.Type, Subtype: a.Subtype,
			Mask: a.Mask, Currency: a.Currency})
	}
	return pi
}

func (s *sandboxServer) CreateSandboxLink(ctx context.Context, req *financev1.CreateSandboxLinkRequest) (*financev1.CreateSandboxLinkResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.CreateSandboxLinkResponse, error) {
		v, err := s.svc.StartLink(ctx, o, sandboxlink.LinkInput{UserID: req.GetUserId(), InstitutionID: req.GetInstitutionId(),
			Username: req.GetUsername(), Password: req.GetPassword(), WritesEnabled: req.GetWritesEnabled()})
		if err != nil {
			return nil, err
		}
		return &financev1.CreateSandboxLinkResponse{Link: sandboxLinkProto(v)}, nil
	})
}

func (s *sandboxServer) ListSandboxLinks(ctx context.Context, req *financev1.ListSandboxLinksRequest) (*financev1.ListSandboxLinksResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.ListSandboxLinksResponse, error) {
		vs, err := s.svc.Links(ctx, o, req.GetUserId())
		if err != nil {
			return nil, err
		}
		return &financev1.ListSandboxLinksResponse{Data: protos(vs, sandboxLinkProto)}, nil
	})
}

func (s *sandboxServer) GetSandboxLink(ctx context.Context, req *financev1.GetSandboxLinkRequest) (*financev1.GetSandboxLinkResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.GetSandboxLinkResponse, error) {
		v, err := s.svc.GetLink(ctx, o, req.GetId())
		if err != nil {
			return nil, err
		}
		return &financev1.GetSandboxLinkResponse{Link: sandboxLinkProto(v)}, nil
	})
}

func (s *sandboxServer) AnswerSandboxLinkMfa(ctx context.Context, req *financev1.AnswerSandboxLinkMfaRequest) (*financev1.AnswerSandboxLinkMfaResponse, error) {
	return asOwner(ctx, func(o sandboxlink.Owner) (*financev1.AnswerSandboxLinkMfaResponse, error) {
		v, err := s.svc.AnswerMFA(ctx, o, req.GetId(), req.GetCode())
		if err != nil {
			return nil, err
		}
		return &financev1.AnswerSandboxLinkMfaResponse{Link: sandboxLinkProto(v)}, nil
	})
}
