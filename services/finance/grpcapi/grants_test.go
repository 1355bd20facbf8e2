package grpcapi_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance/grpcapi"
)

// TestGrantsOverGRPC: the grant service answers only a conversion
// credential with finance_grants:manage (a finance credential is refused:
// these are its own limits), reads lists of strings only, and maps a change
// back: [] clears, absent keeps, the version moves.
func TestGrantsOverGRPC(t *testing.T) {
	c := start(t)
	g := financev1.NewGrantServiceClient(c.conn)
	tenant := principal.Principal{AccountID: demoAccount, CredentialID: "cred_2", Kind: "ak", Surface: principal.SurfaceConversion,
		Mode: "live", Scopes: []string{grpcapi.ScopeGrants}, RequestID: "req-2", IdempotencyKey: "k-1"}
	noScope := tenant
	noScope.Scopes = []string{"convert"}
	for name, ctx := range map[string]context.Context{
		"finance credential": as(c.redacted), "conversion key without the scope": as(noScope),
	} {
		_, err := g.GetFinanceGrant(ctx, &financev1.GetFinanceGrantRequest{Id: c.demo.GrantRedactedID})
		if err == nil {
			t.Fatalf("%s read the grant", name)
		}
		wantProblem(t, err, problem.ForbiddenScope, "")
	}
	got, err := g.GetFinanceGrant(as(tenant), &financev1.GetFinanceGrantRequest{Id: c.demo.GrantRedactedID})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetGrant().GetVersion() != 1 || len(got.GetGrant().GetRedactedFields()) != 2 || got.GetGrant().UpdatedAt != nil {
		t.Fatalf("grant: %v", got)
	}
	bad, _ := structpb.NewList([]any{true})
	_, err = g.UpdateFinanceGrant(as(tenant), &financev1.UpdateFinanceGrantRequest{Id: c.demo.GrantRedactedID, ExpectedVersion: 1,
		ExcludedCategoryIds: bad})
	wantProblem(t, err, problem.InvalidInput, "excluded_category_ids")
	upd, err := g.UpdateFinanceGrant(as(tenant), &financev1.UpdateFinanceGrantRequest{Id: c.demo.GrantRedactedID, ExpectedVersion: 1,
		RedactedFields: &structpb.ListValue{}})
	if err != nil {
		t.Fatal(err)
	}
	u := upd.GetGrant()
	if u.GetVersion() != 2 || len(u.GetRedactedFields()) != 0 || len(u.GetExcludedAccountIds()) != 1 || u.UpdatedAt == nil {
		t.Fatalf("updated: %v", u)
	}
}
