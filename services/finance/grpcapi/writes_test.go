package grpcapi_test

import (
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ledgerlane/platform/pkg/problem"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
)

func TestWritesOverGRPC(t *testing.T) {
	c := start(t)
	write := c.read
	write.GrantID = c.demo.GrantWriteID
	ctx := as(write)

	// The internal sync brings a row in.
	synced, err := c.sync.UpsertProviderTransactions(ctx, &financev1.UpsertProviderTransactionsRequest{
		ConnectionId: c.demo.ConnectionIDs.Chase,
		Transactions: []*financev1.ProviderTransaction{{ProviderTransactionId: "grpc-1", AccountId: c.demo.AccountIDs.Checking,
			Amount: &financev1.Money{Amount: "-4.50", Currency: "USD"}, MerchantName: "SQ *BLUE BOTTLE",
			TransactionDate: "2026-05-20", IsPending: true, Location: &financev1.Location{City: proto.String("Oakland")}}},
	})
	if err != nil || synced.GetInserted() != 1 {
		t.Fatalf("sync: %v %v", synced, err)
	}
	found, err := c.tx.SearchTransactions(ctx, &financev1.SearchTransactionsRequest{Q: "blue bot", PageSize: proto.Int32(200)})
	if err != nil {
		t.Fatal(err)
	}
	var row *financev1.Transaction
	for _, r := range found.GetData() {
		if r.GetExternalRef() == "grpc-1" {
			row = r
		}
	}
	if row == nil || row.GetLocation().GetCity() != "Oakland" || row.GetVersion() != 1 {
		t.Fatalf("synced row: %v", row)
	}

	upd, err := c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 1,
		Merchant: proto.String("Blue Bottle"), Amount: structpb.NewStringValue("-4.75"), ClearLocation: true})
	if err != nil {
		t.Fatal(err)
	}
	got := upd.GetData()
	if got.GetMerchant() != "Blue Bottle" || got.GetProviderMerchantName() != "SQ *BLUE BOTTLE" ||
		got.GetAmount().GetAmount() != "-4.75" || got.GetProviderAmount().GetAmount() != "-4.50" || got.Location != nil || got.GetVersion() != 2 {
		t.Fatalf("updated: %v", got)
	}

	// The Money object a read returns is accepted back; tags set, then
	// cleared by an empty list.
	tagged, err := structpb.NewList([]any{"coffee", "work"})
	if err != nil {
		t.Fatal(err)
	}
	upd, err = c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 2,
		Amount: moneyValue(t, "-4.80", "USD"), Tags: tagged})
	if err != nil || upd.GetData().GetAmount().GetAmount() != "-4.80" || len(upd.GetData().GetTags()) != 2 || upd.GetData().GetVersion() != 3 {
		t.Fatalf("object amount and tags: %v %v", upd, err)
	}
	upd, err = c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 3,
		Tags: &structpb.ListValue{}})
	if err != nil || len(upd.GetData().GetTags()) != 0 || upd.GetData().GetVersion() != 4 {
		t.Fatalf("tags cleared: %v %v", upd, err)
	}

	cat, err := c.cat.CreateCategory(ctx, &financev1.CreateCategoryRequest{Name: "Kids", Icon: "child_care", Color: "#FF8800"})
	if err != nil || cat.GetData().GetIsSystem() || cat.GetData().GetName() != "Kids" {
		t.Fatalf("create category: %v %v", cat, err)
	}
	renamed, err := c.cat.UpdateCategory(ctx, &financev1.UpdateCategoryRequest{Id: cat.GetData().GetId(), Name: proto.String("Children")})
	if err != nil || renamed.GetData().GetName() != "Children" {
		t.Fatalf("update category: %v %v", renamed, err)
	}
	bulk, err := c.tx.BulkCategorizeTransactions(ctx, &financev1.BulkCategorizeTransactionsRequest{Items: []*financev1.BulkCategorizeItem{
		{TransactionId: row.GetId(), CategoryId: cat.GetData().GetId(), ExpectedVersion: 4},
		{TransactionId: uuid.NewString(), CategoryId: cat.GetData().GetId(), ExpectedVersion: 1},
	}})
	if err != nil || bulk.GetData().GetAppliedCount() != 1 || bulk.GetData().GetResults()[1].GetStatus() != finance.BulkNotFound {
		t.Fatalf("bulk: %v %v", bulk, err)
	}
	del, err := c.cat.DeleteCategory(ctx, &financev1.DeleteCategoryRequest{Id: cat.GetData().GetId()})
	if err != nil || !del.GetData().GetDeleted() || del.GetData().GetTransactionsMerged() != 1 {
		t.Fatalf("delete: %v %v", del, err)
	}

	// Refusals keep their problem types and gRPC codes.
	tests := []struct {
		name  string
		call  func() error
		code  codes.Code
		typ   problem.Type
		field string
	}{
		{"writes disabled", func() error {
			_, err := c.tx.UpdateTransaction(as(c.read), &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 3, Memo: proto.String("x")})
			return err
		}, codes.PermissionDenied, problem.WritesDisabled, ""},
		{"field hidden", func() error {
			_, err := c.tx.UpdateTransaction(as(c.redacted), &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 3, ClearLocation: true})
			return err
		}, codes.PermissionDenied, problem.FieldHidden, "location"},
		{"version conflict", func() error {
			_, err := c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 1, Memo: proto.String("x")})
			return err
		}, codes.Aborted, problem.VersionConflict, "expected_version"},
		{"currency change", func() error {
			_, err := c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 6, Amount: structpb.NewStringValue("1.00 EUR")})
			return err
		}, codes.InvalidArgument, problem.FieldImmutable, "amount"},
		{"currency change, Money object", func() error {
			_, err := c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 6,
				Amount: moneyValue(t, "1.00", "EUR")})
			return err
		}, codes.InvalidArgument, problem.FieldImmutable, "amount"},
		{"amount as a number", func() error {
			_, err := c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 6,
				Amount: structpb.NewNumberValue(1)})
			return err
		}, codes.InvalidArgument, problem.InvalidInput, "amount"},
		{"a tag that is no string", func() error {
			_, err := c.tx.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: row.GetId(), ExpectedVersion: 6,
				Tags: &structpb.ListValue{Values: []*structpb.Value{structpb.NewBoolValue(true)}}})
			return err
		}, codes.InvalidArgument, problem.InvalidInput, "tags"},
		{"system category", func() error {
			_, err := c.cat.DeleteCategory(ctx, &financev1.DeleteCategoryRequest{Id: c.demo.CategoryIDs["Travel"]})
			return err
		}, codes.FailedPrecondition, problem.SystemCategory, ""},
		{"search without q", func() error {
			_, err := c.tx.SearchTransactions(ctx, &financev1.SearchTransactionsRequest{})
			return err
		}, codes.InvalidArgument, problem.InvalidInput, "q"},
		{"sync of a manual connection", func() error {
			_, err := c.sync.UpsertProviderTransactions(ctx, &financev1.UpsertProviderTransactionsRequest{ConnectionId: c.demo.ConnectionIDs.Manual})
			return err
		}, codes.InvalidArgument, problem.InvalidInput, "connection_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			wantProblem(t, err, tc.typ, tc.field)
			if status.Code(err) != tc.code {
				t.Errorf("code %v, want %v", status.Code(err), tc.code)
			}
		})
	}
}

// moneyValue is the Money object {amount, currency} as a PATCH amount.
func moneyValue(t *testing.T, amount, currency string) *structpb.Value {
	t.Helper()
	v, err := structpb.NewValue(map[string]any{"amount": amount, "currency": currency})
	if err != nil {
		t.Fatal(err)
	}
	return v
}
