package principal

import (
	"context"
	"reflect"
	"testing"

	"google.golang.org/grpc/metadata"
)

// TestRoundTrip: what the gateway sends is what a backend reads, the
// Idempotency-Key included, and an empty principal reads as no caller.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Principal
		ok   bool
	}{
		{name: "conversion with a key", ok: true, p: Principal{AccountID: "a", CredentialID: "c", Kind: "ak", Surface: SurfaceConversion,
			Mode: "live", Scopes: []string{"convert", "jobs:read"}, RequestID: "req_1", IdempotencyKey: "k-1"}},
		{name: "finance without a key", ok: true, p: Principal{AccountID: "a", CredentialID: "c", Kind: "at", Surface: SurfaceFinance,
			Mode: "live", Scopes: []string{"transactions:read"}, FinanceUserID: "u", GrantID: "g", RequestID: "req_2"}},
		{name: "no caller", p: Principal{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := metadata.FromOutgoingContext(Outgoing(context.Background(), tc.p))
			for k, vs := range out {
				if len(vs) != 1 || vs[0] == "" {
					t.Errorf("metadata %s = %q: empty fields are not sent", k, vs)
				}
			}
			got, ok := FromIncoming(metadata.NewIncomingContext(context.Background(), out))
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if tc.p.Scopes == nil {
				got.Scopes = nil
			}
			if ok && !reflect.DeepEqual(got, tc.p) {
				t.Fatalf("got %+v\nwant %+v", got, tc.p)
			}
		})
	}
}
