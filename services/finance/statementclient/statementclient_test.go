package statementclient_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/statementclient"
)

type fake struct {
	resp *conversionv1.ParseStatementsResponse
	err  error
	got  *conversionv1.ParseStatementsRequest
}

func (f *fake) ParseStatements(_ context.Context, in *conversionv1.ParseStatementsRequest, _ ...grpc.CallOption) (*conversionv1.ParseStatementsResponse, error) {
	f.got = in
	return f.resp, f.err
}

func TestParseStatement(t *testing.T) {
	f := &fake{resp: &conversionv1.ParseStatementsResponse{DetectedType: "camt.053", Statements: []*conversionv1.ParsedStatement{
		{Entries: []*conversionv1.StatementEntry{{BookingDate: "2026-01-02", Amount: "1.5", Currency: "EUR", Mark: "C", BankReference: "B"}}},
		{Entries: []*conversionv1.StatementEntry{{BookingDate: "2026-01-03", ValueDate: "2026-01-02", Amount: "2", Currency: "EUR", Mark: "D",
			CounterpartyName: "ACME", Remittance: []string{"a", "b"}, Pending: true}}},
	}}}
	p := statementclient.New(f)
	got, err := p.ParseStatement(context.Background(), imports.StatementFile{Message: "x", From: "csv",
		CSV: &imports.CSVMapping{Date: "d", Amount: "a", Currency: "EUR", Delimiter: ";"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.got.GetFrom() != "csv" || f.got.GetCsvMapping().GetDelimiter() != ";" || f.got.GetCsvMapping().GetDate() != "d" {
		t.Fatalf("request %v", f.got)
	}
	if got.DetectedType != "camt.053" || len(got.Entries) != 2 || !got.Entries[0].Credit || got.Entries[1].Credit ||
		got.Entries[1].Counterparty != "ACME" || !got.Entries[1].Pending || got.Entries[1].ValueDate != "2026-01-02" {
		t.Fatalf("parsed %+v", got)
	}
}

func TestParseStatementErrors(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		typ   problem.Type
		field string
	}{
		{"a refusal keeps its field", rpc.Status(problem.New(problem.InvalidInput, "line 4").WithField("message")), problem.InvalidInput, "message"},
		{"a converter that does not answer", status.Error(codes.Unavailable, "connection refused"), problem.Unavailable, ""},
		{"anything else is internal", errors.New("boom"), problem.Internal, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := statementclient.New(&fake{err: tt.err}).ParseStatement(context.Background(), imports.StatementFile{Message: "x"})
			var p *problem.Problem
			if !errors.As(err, &p) || p.Type != tt.typ || p.Field != tt.field {
				t.Fatalf("got %v", err)
			}
		})
	}
}
