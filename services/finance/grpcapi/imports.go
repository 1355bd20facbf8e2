package grpcapi

import (
	"context"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/imports"
)

type importServer struct {
	financev1.UnimplementedImportServiceServer
	svc *imports.Service
}

func (s *importServer) ImportStatement(ctx context.Context, req *financev1.ImportStatementRequest) (*financev1.ImportStatementResponse, error) {
	return asCaller(ctx, func(c finance.Caller) (*financev1.ImportStatementResponse, error) {
		file := imports.StatementFile{Message: req.GetMessage(), From: req.GetFrom()}
		if m := req.GetCsvMapping(); m != nil {
			file.CSV = &imports.CSVMapping{
				Date: m.GetDate(), Amount: m.GetAmount(), Debit: m.GetDebit(), Credit: m.GetCredit(),
				CurrencyColumn: m.GetCurrencyColumn(), Currency: m.GetCurrency(), Description: m.GetDescription(),
				Counterparty: m.GetCounterparty(), Reference: m.GetReference(), DateFormat: m.GetDateFormat(),
				DecimalSeparator: m.GetDecimalSeparator(), Delimiter: m.GetDelimiter(),
			}
		}
		res, err := s.svc.ImportStatement(ctx, c, imports.ImportRequest{AccountID: req.GetAccountId(), StatementFile: file})
		if err != nil {
			return nil, err
		}
		out := &financev1.ImportResult{Added: int32(res.Data.Added), Matched: int32(res.Data.Matched),
			Refused: int32(res.Data.Refused), DetectedType: res.Data.DetectedType,
			Rows: make([]*financev1.ImportRefusedRow, 0, len(res.Data.Rows))}
		for _, r := range res.Data.Rows {
			out.Rows = append(out.Rows, &financev1.ImportRefusedRow{Row: int32(r.Row), Reference: r.Reference,
				Reason: r.Reason, Detail: r.Detail})
		}
		return &financev1.ImportStatementResponse{Data: out, RedactedFields: res.RedactedFields, Filtered: res.Filtered}, nil
	})
}
