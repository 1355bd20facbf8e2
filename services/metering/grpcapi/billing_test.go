package grpcapi_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/memory"
	"github.com/ledgerlane/platform/services/metering/notify"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// TestPaymentMethods: each call acts on its principal's account (a portal
// session's, as the edge resolves the cookie); the direct-debit rule travels
// as FAILED_PRECONDITION direct-debit-required, bad details as
// INVALID_ARGUMENT naming the field.
func TestPaymentMethods(t *testing.T) {
	store := memory.New()
	svc := metering.NewService(metering.Config{Store: store, Payments: billing.NewStanding(store)})
	bill := billing.NewService(billing.Config{Store: store, Accounts: svc, PaymentProcessor: sandboxpay.New()})
	people := identity.NewService(identity.Config{Store: store, Accounts: svc})
	conn := dialServices(t, grpcapi.Services{Metering: svc, Billing: bill, Identity: people})
	c := meteringv1.NewBillingServiceClient(conn)
	pa, pb := signUp(t, conn, "a@example.com"), signUp(t, conn, "b@example.com")
	a, b := principal.Outgoing(t.Context(), pa), principal.Outgoing(t.Context(), pb)

	_, err := c.AddPaymentMethod(a, &meteringv1.AddPaymentMethodRequest{Type: "direct_debit", Scheme: "sepa",
		HolderName: "A", Iban: "DE89370400440532013000"})
	if p := rpc.Problem(err); status.Code(err) != codes.InvalidArgument || p.Type != problem.InvalidInput || p.Field != "scheme" {
		t.Fatalf("SEPA on a USD account: %v %+v", err, p)
	}
	dd, err := c.AddPaymentMethod(a, &meteringv1.AddPaymentMethodRequest{Type: "direct_debit", Scheme: "ach",
		HolderName: "A", RoutingNumber: "021000021", AccountNumber: "123456789", MakeDefault: true})
	if err != nil || !dd.GetMethod().GetIsDefault() || dd.GetMethod().GetLast4() != "6789" {
		t.Fatalf("add: %v %v", dd, err)
	}
	card, err := c.AddPaymentMethod(a, &meteringv1.AddPaymentMethodRequest{Type: "card", HolderName: "A",
		CardNumber: "4242424242424242", ExpMonth: 12, ExpYear: 2040})
	if err != nil {
		t.Fatal(err)
	}
	// B cannot see or touch A's methods.
	if res, err := c.ListPaymentMethods(b, &meteringv1.ListPaymentMethodsRequest{}); err != nil || len(res.GetMethods()) != 0 {
		t.Fatalf("B's listing: %v %v", res, err)
	}
	for _, call := range []func() error{
		func() error {
			_, err := c.SetDefaultPaymentMethod(b, &meteringv1.SetDefaultPaymentMethodRequest{MethodId: card.GetMethod().GetId()})
			return err
		},
		func() error {
			_, err := c.RemovePaymentMethod(b, &meteringv1.RemovePaymentMethodRequest{MethodId: dd.GetMethod().GetId()})
			return err
		},
	} {
		if err := call(); status.Code(err) != codes.NotFound {
			t.Fatalf("B on A's method: %v", err)
		}
	}
	// With a direct-debit default A passes the Scale rule (and then stops at
	// the usage counters, which this test has none of); B, without one, is
	// refused by the rule.
	if _, err := bill.ChangePlan(t.Context(), pa.AccountID, metering.PlanScale); rpc.Problem(err).Type != problem.Unavailable {
		t.Fatalf("A to Scale: %v", err)
	}
	_, err = c.ChangePlan(b, &meteringv1.ChangePlanRequest{Plan: "scale"})
	if p := rpc.Problem(err); status.Code(err) != codes.FailedPrecondition || p.Type != problem.DirectDebitRequired || p.Field != "payment_method" {
		t.Fatalf("B to Scale without a direct debit: %v %+v", err, p)
	}
	res, err := c.ListPaymentMethods(a, &meteringv1.ListPaymentMethodsRequest{})
	if err != nil || len(res.GetMethods()) != 2 || res.GetPaymentState() != metering.PaymentOK || res.GetDirectDebitScheme() != "ach" {
		t.Fatalf("A's listing: %v %v", res, err)
	}
}

// signUp signs a person up and resolves the session token as the edge
// resolves the portal's cookie: the principal every later call carries.
func signUp(t *testing.T, conn *grpc.ClientConn, email string) principal.Principal {
	t.Helper()
	res, err := meteringv1.NewIdentityServiceClient(conn).SignUp(t.Context(),
		&meteringv1.SignUpRequest{Email: email, Password: "correct horse battery staple", AccountName: email})
	if err != nil {
		t.Fatal(err)
	}
	r, err := meteringv1.NewCredentialServiceClient(conn).ResolveCredential(t.Context(), &meteringv1.ResolveCredentialRequest{Secret: res.GetToken()})
	if err != nil {
		t.Fatal(err)
	}
	pp := r.GetPrincipal()
	if r.GetSession().GetEmail() != email || r.GetSession().GetCsrfToken() == "" || pp.GetPersonId() != r.GetSession().GetUserId() {
		t.Fatalf("resolved session: %v", r)
	}
	return principal.Principal{AccountID: pp.GetAccountId(), CredentialID: pp.GetCredentialId(), Kind: pp.GetKind(),
		Surface: pp.GetSurface(), Mode: pp.GetMode(), Scopes: pp.GetScopes(), PersonID: pp.GetPersonId()}
}

// TestHolderOnly: the calls without an HTTP binding act for a portal session
// only. A conversion key's principal, even with the reserved usage:read, is
// refused as a missing scope; no principal is unauthenticated; a session
// that signed out no longer resolves.
func TestHolderOnly(t *testing.T) {
	store := memory.New()
	svc := metering.NewService(metering.Config{Store: store, Payments: billing.NewStanding(store)})
	people := identity.NewService(identity.Config{Store: store, Accounts: svc})
	bill := billing.NewService(billing.Config{Store: store, Accounts: svc, PaymentProcessor: sandboxpay.New()})
	conn := dialServices(t, grpcapi.Services{Metering: svc, Billing: bill, Identity: people, Notify: notify.NewService(notify.Config{Store: store})})
	creds := meteringv1.NewCredentialServiceClient(conn)
	holder := signUp(t, conn, "a@example.com")
	key := principal.Principal{AccountID: holder.AccountID, CredentialID: "ak1", Kind: "ak", Surface: principal.SurfaceConversion,
		Mode: "live", Scopes: []string{"usage:read", "convert"}}
	calls := map[string]func(context.Context) error{
		"ListKeys": func(ctx context.Context) error {
			_, err := creds.ListKeys(ctx, &meteringv1.ListKeysRequest{})
			return err
		},
		"GetBilling": func(ctx context.Context) error {
			_, err := meteringv1.NewBillingServiceClient(conn).GetBilling(ctx, &meteringv1.GetBillingRequest{})
			return err
		},
		"ListPeople": func(ctx context.Context) error {
			_, err := meteringv1.NewIdentityServiceClient(conn).ListPeople(ctx, &meteringv1.ListPeopleRequest{})
			return err
		},
		"ListOAuthClients": func(ctx context.Context) error {
			_, err := meteringv1.NewOAuthServiceClient(conn).ListOAuthClients(ctx, &meteringv1.ListOAuthClientsRequest{})
			return err
		},
		"ListAlertMails": func(ctx context.Context) error {
			_, err := meteringv1.NewUsageServiceClient(conn).ListAlertMails(ctx, &meteringv1.ListAlertMailsRequest{})
			return err
		},
	}
	for name, call := range calls {
		if err := call(principal.Outgoing(t.Context(), holder)); err != nil {
			t.Errorf("%s as the session: %v", name, err)
		}
		if err := call(principal.Outgoing(t.Context(), key)); rpc.Problem(err).Type != problem.ForbiddenScope {
			t.Errorf("%s with a key: %v, want forbidden-scope", name, err)
		}
		if err := call(t.Context()); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s with no caller: %v, want unauthenticated", name, err)
		}
	}

	res, err := meteringv1.NewIdentityServiceClient(conn).SignIn(t.Context(), &meteringv1.SignInRequest{Email: "a@example.com", Password: "correct horse battery staple"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := meteringv1.NewIdentityServiceClient(conn).SignOut(t.Context(), &meteringv1.SignOutRequest{Token: res.GetToken()}); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{res.GetToken(), "ps_unknown", "ps_"} {
		if _, err := creds.ResolveCredential(t.Context(), &meteringv1.ResolveCredentialRequest{Secret: secret}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("resolve %.8s…: %v, want unauthenticated", secret, err)
		}
	}
}
