// Package limitswire maps an account's admission limits to and from the form
// the credential lookup carries them in (metering.v1.AccountLimits). It is
// apart from package admission so the metering service's root, which uses
// the limits, stays free of gRPC.
package limitswire

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
	"github.com/ledgerlane/platform/services/metering/admission"
)

// ToProto is l as the credential lookup sends it to the gateway.
func ToProto(l admission.Limits) *meteringv1.AccountLimits {
	out := &meteringv1.AccountLimits{
		Plan: l.Plan, RatePerSecond: int32(l.RatePerSecond), Burst: int32(l.Burst),
		MonthlyQuota: int32(l.MonthlyQuota), HardStop: l.HardStop, OveragePricePer_1000: int32(l.OveragePer1000),
		Currency: l.Currency, PeriodStart: timestamppb.New(l.PeriodStart), PeriodEnd: timestamppb.New(l.PeriodEnd),
		TestQuota: int32(l.TestQuota), PaymentState: l.PaymentState,
	}
	if l.OverageCapCents != nil {
		v := int32(*l.OverageCapCents)
		out.OverageCapCents = &v
	}
	return out
}

// FromProto reads the limits a credential lookup returned.
func FromProto(p *meteringv1.AccountLimits) admission.Limits {
	l := admission.Limits{
		Plan: p.GetPlan(), RatePerSecond: int(p.GetRatePerSecond()), Burst: int(p.GetBurst()),
		MonthlyQuota: int64(p.GetMonthlyQuota()), HardStop: p.GetHardStop(), OveragePer1000: int64(p.GetOveragePricePer_1000()),
		Currency: p.GetCurrency(), PeriodStart: p.GetPeriodStart().AsTime(), PeriodEnd: p.GetPeriodEnd().AsTime(),
		TestQuota: int64(p.GetTestQuota()), PaymentState: p.GetPaymentState(),
	}
	if p.OverageCapCents != nil {
		v := int64(p.GetOverageCapCents())
		l.OverageCapCents = &v
	}
	return l
}
