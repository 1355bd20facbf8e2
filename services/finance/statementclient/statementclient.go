// Package statementclient is the imports.StatementParser over the
// converter's internal gRPC API (conversion.v1.StatementService): the
// finance service never parses a statement format itself.
package statementclient

import (
	"context"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/finance/imports"
)

// Client is the part of conversionv1.StatementServiceClient used; tests
// substitute a fake.
type Client interface {
	ParseStatements(ctx context.Context, in *conversionv1.ParseStatementsRequest, opts ...grpc.CallOption) (*conversionv1.ParseStatementsResponse, error)
}

// Parser implements imports.StatementParser on a Client.
type Parser struct {
	c Client
}

var _ imports.StatementParser = (*Parser)(nil)

// New returns a Parser calling c.
func New(c Client) *Parser { return &Parser{c: c} }

// ParseStatement asks the converter to read f. The caller's principal (as
// the gateway sent it) travels on, so the converter's logs carry the
// request id. Its refusals come back as the *problem.Problem they are
// (rpc.Problem): a file it cannot read is invalid-input naming message,
// from or a csv_mapping member, which are the import request's own field
// names; a converter that does not answer is unavailable.
func (p *Parser) ParseStatement(ctx context.Context, f imports.StatementFile) (imports.ParsedStatement, error) {
	if pr, ok := principal.FromIncoming(ctx); ok {
		ctx = principal.Outgoing(ctx, pr)
	}
	req := &conversionv1.ParseStatementsRequest{Message: f.Message, From: f.From}
	if m := f.CSV; m != nil {
		req.CsvMapping = &conversionv1.CsvMapping{
			Date: m.Date, Amount: m.Amount, Debit: m.Debit, Credit: m.Credit, CurrencyColumn: m.CurrencyColumn,
			Currency: m.Currency, Description: m.Description, Counterparty: m.Counterparty, Reference: m.Reference,
			DateFormat: m.DateFormat, DecimalSeparator: m.DecimalSeparator, Delimiter: m.Delimiter,
		}
	}
	resp, err := p.c.ParseStatements(ctx, req)
	if err != nil {
		return imports.ParsedStatement{}, rpc.Problem(err)
	}
	out := imports.ParsedStatement{DetectedType: resp.GetDetectedType()}
	for _, st := range resp.GetStatements() {
		for _, e := range st.GetEntries() {
			out.Entries = append(out.Entries, imports.StatementEntry{
				BookingDate: e.GetBookingDate(), ValueDate: e.GetValueDate(), Amount: e.GetAmount(),
				Currency: e.GetCurrency(), Credit: e.GetMark() == "C", Pending: e.GetPending(),
				BankReference: e.GetBankReference(), CustomerReference: e.GetCustomerReference(),
				EndToEndID: e.GetEndToEndId(), Counterparty: e.GetCounterpartyName(),
				Remittance: e.GetRemittance(), Info: e.GetInfo(),
			})
		}
	}
	return out, nil
}
