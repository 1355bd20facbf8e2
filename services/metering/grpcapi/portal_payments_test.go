package grpcapi_test

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/grpcapi"
	"github.com/ledgerlane/platform/services/metering/identity"
	"github.com/ledgerlane/platform/services/metering/memory"
	"github.com/ledgerlane/platform/services/metering/sandboxpay"
)

// TestPortalPaymentMethods: each call acts on its session's account; the
// direct-debit rule travels as FAILED_PRECONDITION direct-debit-required,
// bad details as INVALID_ARGUMENT naming the field.
func TestPortalPaymentMethods(t *testing.T) {
	store := memory.New()
	svc := metering.NewService(metering.Config{Store: store, Payments: billing.NewStanding(store)})
	bill := billing.NewService(billing.Config{Store: store, Accounts: svc, PaymentProcessor: sandboxpay.New()})
	people := identity.NewService(identity.Config{Store: store, Accounts: svc})
	c := meteringv1.NewPortalServiceClient(dialServices(t, grpcapi.Services{Metering: svc, Billing: bill, Identity: people}))
	ctx := t.Context()
	signUp := func(email string) string {
		res, err := c.SignUp(ctx, &meteringv1.SignUpRequest{Email: email, Password: "correct horse battery staple", AccountName: email})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetToken()
	}
	a, b := signUp("a@example.com"), signUp("b@example.com")

	_, err := c.AddPaymentMethod(ctx, &meteringv1.AddPaymentMethodRequest{Token: a, Type: "direct_debit", Scheme: "sepa",
		HolderName: "A", Iban: "DE89370400440532013000"})
	if p := rpc.Problem(err); status.Code(err) != codes.InvalidArgument || p.Type != problem.InvalidInput || p.Field != "scheme" {
		t.Fatalf("SEPA on a USD account: %v %+v", err, p)
	}
	dd, err := c.AddPaymentMethod(ctx, &meteringv1.AddPaymentMethodRequest{Token: a, Type: "direct_debit", Scheme: "ach",
		HolderName: "A", RoutingNumber: "021000021", AccountNumber: "123456789", MakeDefault: true})
	if err != nil || !dd.GetMethod().GetIsDefault() || dd.GetMethod().GetLast4() != "6789" {
		t.Fatalf("add: %v %v", dd, err)
	}
	card, err := c.AddPaymentMethod(ctx, &meteringv1.AddPaymentMethodRequest{Token: a, Type: "card", HolderName: "A",
		CardNumber: "4242424242424242", ExpMonth: 12, ExpYear: 2040})
	if err != nil {
		t.Fatal(err)
	}
	// B cannot see or touch A's methods.
	if res, err := c.ListPaymentMethods(ctx, &meteringv1.ListPaymentMethodsRequest{Token: b}); err != nil || len(res.GetMethods()) != 0 {
		t.Fatalf("B's listing: %v %v", res, err)
	}
	for _, call := range []func() error{
		func() error {
			_, err := c.SetDefaultPaymentMethod(ctx, &meteringv1.SetDefaultPaymentMethodRequest{Token: b, MethodId: card.GetMethod().GetId()})
			return err
		},
		func() error {
			_, err := c.RemovePaymentMethod(ctx, &meteringv1.RemovePaymentMethodRequest{Token: b, MethodId: dd.GetMethod().GetId()})
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
	if _, err := bill.ChangePlan(ctx, sessionAccount(t, c, a), metering.PlanScale); rpc.Problem(err).Type != problem.Unavailable {
		t.Fatalf("A to Scale: %v", err)
	}
	_, err = c.ChangePortalPlan(ctx, &meteringv1.ChangePortalPlanRequest{Token: b, Plan: "scale"})
	if p := rpc.Problem(err); status.Code(err) != codes.FailedPrecondition || p.Type != problem.DirectDebitRequired || p.Field != "payment_method" {
		t.Fatalf("B to Scale without a direct debit: %v %+v", err, p)
	}
	res, err := c.ListPaymentMethods(ctx, &meteringv1.ListPaymentMethodsRequest{Token: a})
	if err != nil || len(res.GetMethods()) != 2 || res.GetPaymentState() != metering.PaymentOK || res.GetDirectDebitScheme() != "ach" {
		t.Fatalf("A's listing: %v %v", res, err)
	}
}

func sessionAccount(t *testing.T, c meteringv1.PortalServiceClient, token string) string {
	t.Helper()
	s, err := c.GetSession(t.Context(), &meteringv1.GetSessionRequest{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	return s.GetSession().GetAccountId()
}
