package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ledgerlane/platform/pkg/pgtest"
	"github.com/ledgerlane/platform/services/metering"
	"github.com/ledgerlane/platform/services/metering/billing"
	"github.com/ledgerlane/platform/services/metering/postgres"
)

// BenchmarkLimits is the metering side of a credential lookup the gateway
// did not have cached: the account, and its payments for the payment
// standing. Two years of monthly payments is a long-lived account.
func BenchmarkLimits(b *testing.B) {
	for _, n := range []int{0, 24} {
		b.Run(fmt.Sprintf("payments=%d", n), func(b *testing.B) {
			store := postgres.New(pgtest.Pool(b, "metering", postgres.Migrations))
			svc := metering.NewService(metering.Config{Store: store})
			ctx := b.Context()
			a, err := svc.CreateAccount(ctx, "Acme", metering.PlanGrowth, metering.USD)
			if err != nil {
				b.Fatal(err)
			}
			m := billing.PaymentMethod{ID: uuid.NewString(), AccountID: a.ID, Type: billing.MethodDirectDebit, Scheme: billing.SchemeACH,
				Brand: "021000021", Last4: "6789", HolderName: "Acme", ProcessorRef: "ref", IsDefault: true, CreatedAt: a.CreatedAt}
			if err := store.AddPaymentMethod(ctx, m); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				at := a.CreatedAt.AddDate(0, i, 0)
				p := billing.Payment{ID: uuid.NewString(), AccountID: a.ID, MethodID: m.ID, MethodType: m.Type, Scheme: m.Scheme,
					Purpose: billing.PurposeInvoice, PeriodStart: at, AmountCents: 149_00, Currency: metering.USD, FirstDebit: i == 0,
					State: billing.PaymentSettled, ProcessorRef: "pay", CreatedAt: at, SettleBy: at.Add(96 * time.Hour), ResolvedAt: &at}
				if err := store.CreatePayment(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := svc.Limits(ctx, a.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
