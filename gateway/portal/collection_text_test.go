package portal

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	meteringv1 "github.com/ledgerlane/platform/proto/metering/v1"
)

// TestCollectionText: the invoice table's Payment column, per state.
func TestCollectionText(t *testing.T) {
	next := time.Date(2026, 4, 20, 10, 35, 0, 0, time.UTC)
	tests := []struct {
		inv  *meteringv1.Invoice
		want string
	}{
		{&meteringv1.Invoice{}, ""},
		{&meteringv1.Invoice{CollectionState: "open"}, "awaiting a payment method"},
		{&meteringv1.Invoice{CollectionState: "collecting", CollectionAttempts: 1}, "collecting"},
		{&meteringv1.Invoice{CollectionState: "collecting", CollectionAttempts: 2, NextAttemptAt: timestamppb.New(next)}, "retrying 2026-04-20 10:35 UTC"},
		{&meteringv1.Invoice{CollectionState: "paid"}, "paid"},
		{&meteringv1.Invoice{CollectionState: "failed"}, "failed"},
	}
	for _, tc := range tests {
		if got := collectionText(tc.inv); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.inv, got, tc.want)
		}
	}
}
