package grpcapi

import (
	"context"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering/identity"
)

// identityServer is IdentityService: sign-up, sign-in and sign-out, people,
// invitations, password resets and address verification.
type identityServer struct {
	meteringv1.UnimplementedIdentityServiceServer
	identity *identity.Service
}

func sessionProto(si identity.SessionInfo) *meteringv1.Session {
	return &meteringv1.Session{UserId: si.User.ID, Email: si.User.Email, Name: si.User.Name,
		AccountId: si.Account.ID, AccountName: si.Account.Name, CsrfToken: si.CSRFToken, ExpiresAt: timestamppb.New(si.ExpiresAt),
		EmailVerified: si.User.EmailVerified}
}

func personProto(u identity.PortalUser) *meteringv1.Person {
	return &meteringv1.Person{Id: u.ID, Email: u.Email, Name: u.Name, CreatedAt: timestamppb.New(u.CreatedAt),
		CanSignIn: u.PasswordHash != "", Invited: u.InviteHash != ""}
}

func (s *identityServer) SignUp(ctx context.Context, req *meteringv1.SignUpRequest) (*meteringv1.SignUpResponse, error) {
	token, si, err := s.identity.SignUp(ctx, req.GetEmail(), req.GetPassword(), req.GetAccountName(), req.GetName())
	if err != nil {
		return nil, storeError(err)
	}
	if base := req.GetVerifyLinkBase(); base != "" {
		// The account exists now: a mail that cannot be queued does not undo
		// it, and the portal offers to send the link again.
		_ = s.identity.SendVerification(ctx, si.User.ID, base)
	}
	return &meteringv1.SignUpResponse{Session: sessionProto(si), Token: token}, nil
}

func (s *identityServer) SignIn(ctx context.Context, req *meteringv1.SignInRequest) (*meteringv1.SignInResponse, error) {
	token, si, err := s.identity.SignIn(ctx, req.GetEmail(), req.GetPassword())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SignInResponse{Session: sessionProto(si), Token: token}, nil
}

func (s *identityServer) SignOut(ctx context.Context, req *meteringv1.SignOutRequest) (*meteringv1.SignOutResponse, error) {
	if err := s.identity.SignOut(ctx, req.GetToken(), req.GetEverywhere()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.SignOutResponse{}, nil
}

func (s *identityServer) ListPeople(ctx context.Context, _ *meteringv1.ListPeopleRequest) (*meteringv1.ListPeopleResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.ListPeopleResponse, error) {
		us, err := s.identity.PortalUsers(ctx, p.AccountID)
		return &meteringv1.ListPeopleResponse{People: each(us, personProto)}, err
	})
}

func (s *identityServer) InvitePerson(ctx context.Context, req *meteringv1.InvitePersonRequest) (*meteringv1.InvitePersonResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.InvitePersonResponse, error) {
		inviter, err := s.identity.Person(ctx, p.AccountID, p.PersonID)
		if err != nil {
			return nil, err
		}
		u, err := s.identity.Invite(ctx, p.AccountID, inviter, req.GetEmail(), req.GetLinkBase())
		return &meteringv1.InvitePersonResponse{Person: personProto(u)}, err
	})
}

func (s *identityServer) GetInvitation(ctx context.Context, req *meteringv1.GetInvitationRequest) (*meteringv1.GetInvitationResponse, error) {
	u, a, err := s.identity.Invitation(ctx, req.GetInvitation())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.GetInvitationResponse{Email: u.Email, AccountName: a.Name}, nil
}

func (s *identityServer) AcceptInvitation(ctx context.Context, req *meteringv1.AcceptInvitationRequest) (*meteringv1.AcceptInvitationResponse, error) {
	token, si, err := s.identity.AcceptInvite(ctx, req.GetInvitation(), req.GetPassword(), req.GetName())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.AcceptInvitationResponse{Session: sessionProto(si), Token: token}, nil
}

func (s *identityServer) RequestPasswordReset(ctx context.Context, req *meteringv1.RequestPasswordResetRequest) (*meteringv1.RequestPasswordResetResponse, error) {
	if err := s.identity.RequestPasswordReset(ctx, req.GetEmail(), req.GetLinkBase()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.RequestPasswordResetResponse{}, nil
}

func (s *identityServer) GetPasswordReset(ctx context.Context, req *meteringv1.GetPasswordResetRequest) (*meteringv1.GetPasswordResetResponse, error) {
	u, err := s.identity.PasswordResetUser(ctx, req.GetResetToken())
	if err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.GetPasswordResetResponse{Email: u.Email}, nil
}

func (s *identityServer) ResetPassword(ctx context.Context, req *meteringv1.ResetPasswordRequest) (*meteringv1.ResetPasswordResponse, error) {
	if err := s.identity.ResetPassword(ctx, req.GetResetToken(), req.GetPassword()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.ResetPasswordResponse{}, nil
}

func (s *identityServer) SendVerification(ctx context.Context, req *meteringv1.SendVerificationRequest) (*meteringv1.SendVerificationResponse, error) {
	return forHolder(ctx, func(p principal.Principal) (*meteringv1.SendVerificationResponse, error) {
		return &meteringv1.SendVerificationResponse{}, s.identity.SendVerification(ctx, p.PersonID, req.GetLinkBase())
	})
}

func (s *identityServer) VerifyEmail(ctx context.Context, req *meteringv1.VerifyEmailRequest) (*meteringv1.VerifyEmailResponse, error) {
	if err := s.identity.VerifyEmail(ctx, req.GetVerifyToken()); err != nil {
		return nil, storeError(err)
	}
	return &meteringv1.VerifyEmailResponse{}, nil
}
