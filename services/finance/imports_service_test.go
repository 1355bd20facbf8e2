package finance_test

import (
	"context"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/imports"
)

// fakeParser answers with fixed entries, or a fixed error.
type fakeParser struct {
	parsed imports.ParsedStatement
	err    error
	got    imports.StatementFile
}

func (f *fakeParser) ParseStatement(_ context.Context, file imports.StatementFile) (imports.ParsedStatement, error) {
	f.got = file
	return f.parsed, f.err
}

func TestImportStatement(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	// A posted bank-synced row of the checking account, which the file
	// also lists: it is matched, not doubled.
	bank := pick(t, e, func(tx finance.Transaction) bool {
		return tx.AccountID == e.demo.AccountIDs.Checking && tx.Source == finance.SourceBankSync && !tx.IsPending
	})
	amount := bank.Amount.Amount
	entries := []imports.StatementEntry{
		{BookingDate: bank.Date.Format(finance.DateLayout), Amount: amount.Abs().String(), Currency: "USD", Credit: amount.IsPositive()},
		{BookingDate: "2026-05-01", Amount: "12.5", Currency: "USD", BankReference: "B1", Counterparty: "Corner Cafe", Remittance: []string{"coffee"}},
		{BookingDate: "2026-05-01", Amount: "12.5", Currency: "USD", BankReference: "B1"},
		{BookingDate: "2026-05-02", Amount: "2000", Currency: "USD", Credit: true, CustomerReference: "SALARY"},
		{BookingDate: "2026-05-02", Amount: "1", Currency: "EUR"},
		{BookingDate: "2026-05-03", Amount: "1", Currency: "USD", Pending: true, BankReference: "P1"},
	}
	p := &fakeParser{parsed: imports.ParsedStatement{DetectedType: "MT940", Entries: entries}}
	svc := imports.NewService(imports.Config{Kernel: e.svc, Store: e.store, Parser: p})
	req := imports.ImportRequest{AccountID: e.demo.AccountIDs.Checking, StatementFile: imports.StatementFile{Message: "file", From: "MT940"}}

	// The demo has imported rows of its own; only the new ones count here.
	before := map[string]bool{}
	for _, tx := range all(t, e, e.write, finance.TransactionQuery{Source: finance.SourceImport}) {
		before[tx.ID] = true
	}
	newRows := func() []finance.Transaction {
		var out []finance.Transaction
		for _, tx := range all(t, e, e.write, finance.TransactionQuery{Source: finance.SourceImport}) {
			if !before[tx.ID] {
				out = append(out, tx)
			}
		}
		return out
	}

	if m, due, _ := e.store.RecurringDue(ctx, e.demo.UserID); due {
		if _, err := e.store.ClearRecurringDue(ctx, m, e.svc.Now()); err != nil {
			t.Fatal(err)
		}
	}
	res, err := svc.ImportStatement(ctx, e.write, req)
	if err != nil {
		t.Fatal(err)
	}
	// Added rows wait for recurring detection, which runs in the background.
	if _, due, err := e.store.RecurringDue(ctx, e.demo.UserID); !due || err != nil {
		t.Fatalf("an import that added rows did not mark recurring detection due: %v", err)
	}
	got := res.Data
	if got.Added != 3 || got.Matched != 1 || got.Refused != 2 || got.DetectedType != "MT940" || p.got.From != "MT940" {
		t.Fatalf("first import: %+v", got)
	}
	if got.Rows[0] != (imports.RefusedRow{Row: 5, Reason: imports.RefuseCurrency, Detail: got.Rows[0].Detail}) ||
		got.Rows[1].Row != 6 || got.Rows[1].Reason != imports.RefusePending || got.Rows[1].Reference != "P1" {
		t.Fatalf("refused rows: %+v", got.Rows)
	}
	imported := newRows()
	if len(imported) != 3 {
		t.Fatalf("%d import rows, want 3", len(imported))
	}
	for _, tx := range imported {
		if tx.AccountID != e.demo.AccountIDs.Checking || tx.Version != 1 || tx.CategoryID != "" {
			t.Errorf("imported row %+v", tx)
		}
		if tx.Date.Format(finance.DateLayout) == "2026-05-02" && (tx.Amount.AmountString() != "2000.00" || tx.Merchant != "") {
			t.Errorf("salary row %+v", tx)
		}
	}

	// The same file again adds nothing.
	res, err = svc.ImportStatement(ctx, e.write, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Data; got.Added != 0 || got.Matched != 4 || got.Refused != 2 {
		t.Fatalf("second import: %+v", got)
	}
	if n := len(newRows()); n != 3 {
		t.Fatalf("%d import rows after the second import, want 3", n)
	}
}

func TestImportStatementRefusals(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	p := &fakeParser{parsed: imports.ParsedStatement{DetectedType: "MT940"}}
	svc := imports.NewService(imports.Config{Kernel: e.svc, Store: e.store, Parser: p})
	ok := imports.StatementFile{Message: "file"}
	tests := []struct {
		name   string
		caller finance.Caller
		req    imports.ImportRequest
		parser error
		typ    problem.Type
		field  string
	}{
		{"writes disabled", e.read, imports.ImportRequest{AccountID: e.demo.AccountIDs.Checking, StatementFile: ok}, nil, problem.WritesDisabled, ""},
		{"account not a uuid", e.write, imports.ImportRequest{AccountID: "checking", StatementFile: ok}, nil, problem.InvalidInput, "account_id"},
		{"unknown account", e.write, imports.ImportRequest{AccountID: "0f4b7a3e-5c2d-4e8a-9b1f-6d3c2a1e9f70", StatementFile: ok}, nil, problem.NotFound, "account_id"},
		{"excluded account is like unknown", e.redacted, imports.ImportRequest{AccountID: e.demo.ExcludedAccountID, StatementFile: ok}, nil, problem.NotFound, "account_id"},
		{"empty message", e.write, imports.ImportRequest{AccountID: e.demo.AccountIDs.Checking, StatementFile: imports.StatementFile{Message: " \n"}}, nil, problem.InvalidInput, "message"},
		{"the converter's refusal passes through", e.write, imports.ImportRequest{AccountID: e.demo.AccountIDs.Checking, StatementFile: ok},
			problem.New(problem.InvalidInput, "line 4, field :60F:: bad date").WithField("message"), problem.InvalidInput, "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.err = tt.parser
			_, err := svc.ImportStatement(ctx, tt.caller, tt.req)
			wantProblem(t, err, tt.typ, tt.field)
		})
	}

	p.err = nil
	p.parsed.Entries = make([]imports.StatementEntry, imports.MaxImportEntries+1)
	_, err := svc.ImportStatement(ctx, e.write, imports.ImportRequest{AccountID: e.demo.AccountIDs.Checking, StatementFile: ok})
	wantProblem(t, err, problem.InvalidInput, "message")

	bare := newEnv(t, nil)
	_, err = imports.NewService(imports.Config{Kernel: bare.svc, Store: bare.store}).ImportStatement(ctx, bare.write, imports.ImportRequest{AccountID: bare.demo.AccountIDs.Checking, StatementFile: ok})
	wantProblem(t, err, problem.NotImplemented, "")
}
