package grpcapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/filefmt"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// statementServer is the internal conversion.v1.StatementService: the
// finance service's statement import reads files through it.
type statementServer struct {
	conversionv1.UnimplementedStatementServiceServer
	eng *engine.Engine
}

// Sources only this service reads: the engine's csv, ofx and qbo are
// targets. A CSV file cannot be read without a mapping, so it is never
// detected; an OFX or QBO file is detected when no engine format is.
const (
	csvSource = "csv"
	ofxSource = "ofx"
	qboSource = "qbo"
)

func (s statementServer) ParseStatements(_ context.Context, req *conversionv1.ParseStatementsRequest) (*conversionv1.ParseStatementsResponse, error) {
	input := []byte(req.GetMessage())
	if len(input) == 0 {
		return nil, problem.New(problem.InvalidInput, "message is empty").WithField("message")
	}
	isCSV := strings.EqualFold(req.GetFrom(), csvSource)
	if req.GetCsvMapping() != nil && !isCSV {
		return nil, problem.New(problem.InvalidInput, `csv_mapping is only for from "csv"`).WithField("csv_mapping")
	}
	var parsed *engine.Parsed
	from := strings.ToLower(req.GetFrom())
	if from == "" && filefmt.DetectOFX(input) {
		from = ofxSource
		if strings.Contains(req.GetMessage(), "<INTU.BID>") {
			from = qboSource
		}
	}
	switch {
	case from == ofxSource || from == qboSource:
		stmts, err := filefmt.ParseOFX(input)
		if err != nil {
			return nil, toProblem(err)
		}
		parsed = &engine.Parsed{Statements: stmts, DetectedType: from}
	case isCSV:
		if req.GetCsvMapping() == nil {
			return nil, problem.New(problem.InvalidInput, `from "csv" needs a csv_mapping`).WithField("csv_mapping")
		}
		stmts, err := filefmt.ParseCSV(input, csvMappingOf(req.GetCsvMapping()))
		if err != nil {
			return nil, toProblem(err)
		}
		parsed = &engine.Parsed{Statements: stmts, DetectedType: csvSource}
	default:
		var err error
		if parsed, err = s.eng.Parse(input, req.GetFrom(), statement.Options{}); err != nil {
			return nil, fromProblem(toProblem(err))
		}
		if p := emptyStatement(parsed); p != nil {
			return nil, p
		}
	}
	out := &conversionv1.ParseStatementsResponse{
		DetectedType: parsed.DetectedType, DetectedVersion: parsed.DetectedVersion,
		Statements: make([]*conversionv1.ParsedStatement, 0, len(parsed.Statements)),
		Warnings:   warningsOf(parsed.Warnings),
	}
	for _, st := range parsed.Statements {
		out.Statements = append(out.Statements, parsedStatementProto(st))
	}
	return out, nil
}

// fromProblem renames the field of an unsupported source: Convert's mapping
// blames "to", but here the request has no target and the source is at fault.
func fromProblem(p *problem.Problem) *problem.Problem {
	if p.Field == "to" {
		return problem.New(p.Type, strings.TrimSuffix(p.Detail, "; see GET /v1/formats")).WithField("from")
	}
	return p
}

func csvMappingOf(m *conversionv1.CsvMapping) filefmt.CSVMapping {
	return filefmt.CSVMapping{
		Date: m.GetDate(), Amount: m.GetAmount(), Debit: m.GetDebit(), Credit: m.GetCredit(),
		CurrencyColumn: m.GetCurrencyColumn(), Currency: m.GetCurrency(), Description: m.GetDescription(),
		Counterparty: m.GetCounterparty(), Reference: m.GetReference(), DateFormat: m.GetDateFormat(),
		DecimalSeparator: m.GetDecimalSeparator(), Delimiter: m.GetDelimiter(),
	}
}

func parsedStatementProto(st *statement.Statement) *conversionv1.ParsedStatement {
	out := &conversionv1.ParsedStatement{
		Reference: st.Reference, AccountIban: st.Account.IBAN, AccountOther: st.Account.Other,
		Currency: st.Account.Currency, Entries: make([]*conversionv1.StatementEntry, 0, len(st.Entries)),
	}
	for _, e := range st.Entries {
		booking := e.BookingDate
		if booking.IsZero() {
			booking = e.ValueDate
		}
		pe := &conversionv1.StatementEntry{
			BookingDate: dateString(booking), ValueDate: dateString(e.ValueDate),
			Amount: e.Value.String(), Currency: e.Currency, Mark: string(e.Mark),
			Reversal: e.Reversal, Pending: e.Pending,
			BankReference: e.BankReference, CustomerReference: e.CustomerReference, EndToEndId: e.EndToEndID,
			CounterpartyName: e.Counterparty.Name, CounterpartyIban: e.Counterparty.IBAN,
			CounterpartyAccount: e.Counterparty.Account, CounterpartyBic: e.Counterparty.BIC,
			Remittance: e.Remittance, Info: e.Info, TransactionType: e.TransactionType,
		}
		if pe.Currency == "" {
			pe.Currency = st.Account.Currency
		}
		out.Entries = append(out.Entries, pe)
	}
	return out
}

func dateString(d statement.Date) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

// emptyStatement refuses a file that holds no statement: one whose
// statements carry neither a balance nor an entry (":20:broken" reads as a
// statement with every other field missing). An import of it would answer
// "0 added" as if the file had been read; /v1/convert refuses the same file
// (camt needs a balance). The answer names the line and field of the first
// missing mandatory field, as a parse error does.
func emptyStatement(parsed *engine.Parsed) *problem.Problem {
	for i, st := range parsed.Statements {
		if len(st.Balances) > 0 || len(st.Entries) > 0 {
			continue
		}
		where := fmt.Sprintf("statement %d", i+1)
		for _, w := range parsed.Warnings {
			if w.Code == mt.CodeMissingField && w.Path != "" {
				where = w.Path + ": " + w.Message
				break
			}
		}
		return problem.New(problem.InvalidInput, where+": the file holds no statement (no balance and no entry)").WithField("message")
	}
	return nil
}
