package grpcapi_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/grpcapi"
)

func statementClient(t *testing.T) conversionv1.StatementServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rpc.NewServer(slog.New(slog.DiscardHandler), nil)
	grpcapi.Register(srv, builtin.Engine())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rpc.Serve(ctx, srv, lis, time.Second) }()
	conn, err := rpc.Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); cancel(); <-done })
	return conversionv1.NewStatementServiceClient(conn)
}

func TestParseStatements(t *testing.T) {
	c := statementClient(t)
	ctx := context.Background()

	res, err := c.ParseStatements(ctx, &conversionv1.ParseStatementsRequest{Message: stmt})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetDetectedType() != "MT940" || len(res.GetStatements()) != 1 {
		t.Fatalf("parse: %v", res)
	}
	st := res.GetStatements()[0]
	if st.GetReference() != "STMT1" || st.GetAccountIban() != "DE89370400440532013000" || st.GetCurrency() != "EUR" || len(st.GetEntries()) != 1 {
		t.Fatalf("statement: %v", st)
	}
	e := st.GetEntries()[0]
	if e.GetBookingDate() != "2026-01-02" || e.GetValueDate() != "2026-01-02" || e.GetAmount() != "25.5" || e.GetMark() != "D" ||
		e.GetCurrency() != "EUR" || e.GetBankReference() != "BANKREF1" || e.GetCustomerReference() != "REF1" ||
		e.GetTransactionType() != "NTRF" {
		t.Fatalf("entry: %v", e)
	}

	camt, err := os.ReadFile("../../../../shared/samples/mx/genkgo/camt053.v2.multi.statement.xml")
	if err != nil {
		t.Skipf("shared samples not beside the repo: %v", err)
	}
	res, err = c.ParseStatements(ctx, &conversionv1.ParseStatementsRequest{Message: string(camt)})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetDetectedType() != "camt.053" || len(res.GetStatements()) != 2 {
		t.Fatalf("camt: %s %d statements", res.GetDetectedType(), len(res.GetStatements()))
	}
}

func TestParseStatementsOFX(t *testing.T) {
	c := statementClient(t)
	ctx := context.Background()
	tests := []struct {
		file, from, detected string
		entries              int
	}{
		{"ofx/ofxgo/busted_responses_wellsfargo.qfx", "", "qbo", 1}, // carries <INTU.BID>
		{"ofx/ofxgo/valid_responses_moneymrkt1_v103.ofx", "", "ofx", 3},
		{"ofx/ofxgo/valid_responses_moneymrkt1_v103.ofx", "OFX", "ofx", 3},
		{"ofx/ofxgo/busted_responses_wellsfargo.qfx", "qbo", "qbo", 1},
	}
	for _, tt := range tests {
		doc := sample(t, tt.file)
		if doc == "" {
			t.Skip("shared samples not beside the repo")
		}
		res, err := c.ParseStatements(ctx, &conversionv1.ParseStatementsRequest{Message: doc, From: tt.from})
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if res.GetDetectedType() != tt.detected || len(res.GetStatements()) != 1 || len(res.GetStatements()[0].GetEntries()) != tt.entries {
			t.Fatalf("%s: %s, %v", tt.file, res.GetDetectedType(), res.GetStatements())
		}
	}
	_, err := c.ParseStatements(ctx, &conversionv1.ParseStatementsRequest{Message: sample(t, "ofx/ofxgo/valid_responses_inv_v202.ofx")})
	if p := rpc.Problem(err); p.Type != problem.InvalidInput || p.Field != "message" || !strings.Contains(p.Detail, "investment") {
		t.Fatalf("investment statement: %+v", p)
	}
}

func TestParseStatementsCSV(t *testing.T) {
	c := statementClient(t)
	ctx := context.Background()
	file := "Date;Amount;Text;Ref\n31.03.2024;-12,50;Coffee;R1\n01.04.2024;1000;Salary;R2\n"
	mapping := &conversionv1.CsvMapping{Date: "Date", Amount: "Amount", Description: "Text", Reference: "Ref",
		Currency: "EUR", DateFormat: "dmy", DecimalSeparator: ",", Delimiter: ";"}
	res, err := c.ParseStatements(ctx, &conversionv1.ParseStatementsRequest{Message: file, From: "csv", CsvMapping: mapping})
	if err != nil {
		t.Fatal(err)
	}
	es := res.GetStatements()[0].GetEntries()
	if res.GetDetectedType() != "csv" || len(es) != 2 || es[0].GetAmount() != "12.5" || es[0].GetMark() != "D" ||
		es[0].GetBookingDate() != "2024-03-31" || es[1].GetMark() != "C" || es[1].GetBankReference() != "R2" ||
		es[0].GetRemittance()[0] != "Coffee" || es[0].GetCurrency() != "EUR" {
		t.Fatalf("csv: %v", res)
	}
}

func TestParseStatementsErrors(t *testing.T) {
	c := statementClient(t)
	ctx := context.Background()
	pacs := sample(t, "pairs/cbpr_mt_to_mx/P_4_3_2__mt_205_COV_pacs_009_A_B.input.fin")
	tests := []struct {
		name  string
		req   *conversionv1.ParseStatementsRequest
		field string
		inMsg string
	}{
		{"empty", &conversionv1.ParseStatementsRequest{}, "message", "empty"},
		{"garbage", &conversionv1.ParseStatementsRequest{Message: "hello, world"}, "from", "detected"},
		{"unknown from", &conversionv1.ParseStatementsRequest{Message: stmt, From: "pdf"}, "from", "pdf"},
		{"no statement in the file", &conversionv1.ParseStatementsRequest{Message: ":20:broken"}, "message", "line 1, field :25:"},
		{"no statement, named as MT940", &conversionv1.ParseStatementsRequest{Message: ":20:broken\r\n:25:NL91ABNA0417164300\r\n", From: "MT940"}, "message", "holds no statement"},
		{"broken MT940 names its line", &conversionv1.ParseStatementsRequest{Message: strings.Replace(stmt, "C260101", "C261301", 1)}, "message", "line 4"},
		{"csv without mapping", &conversionv1.ParseStatementsRequest{Message: "a,b\n1,2\n", From: "csv"}, "csv_mapping", "mapping"},
		{"mapping without csv", &conversionv1.ParseStatementsRequest{Message: stmt, CsvMapping: &conversionv1.CsvMapping{Date: "d"}}, "csv_mapping", "csv"},
		{"csv mapping names a missing column", &conversionv1.ParseStatementsRequest{Message: "a,b\n1,2\n", From: "csv",
			CsvMapping: &conversionv1.CsvMapping{Date: "Date", Amount: "b", Currency: "EUR"}}, "csv_mapping.date", "Date"},
		{"csv bad amount names line and column", &conversionv1.ParseStatementsRequest{Message: "d,a\n2024-01-01,1.2.3\n", From: "csv",
			CsvMapping: &conversionv1.CsvMapping{Date: "d", Amount: "a", Currency: "EUR"}}, "message", "line 2"},
	}
	if pacs != "" {
		tests = append(tests, struct {
			name  string
			req   *conversionv1.ParseStatementsRequest
			field string
			inMsg string
		}{"a payment is not a statement", &conversionv1.ParseStatementsRequest{Message: pacs}, "from", "not a statement"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.ParseStatements(ctx, tt.req)
			p := rpc.Problem(err)
			if p.Type != problem.InvalidInput || p.Field != tt.field || !strings.Contains(p.Detail, tt.inMsg) {
				t.Fatalf("problem %+v", p)
			}
		})
	}
}

// sample is a file of the shared samples, or "" when they are not beside
// the repo.
func sample(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile("../../../../shared/samples/" + path)
	if err != nil {
		t.Logf("no sample %s: %v", path, err)
		return ""
	}
	return string(b)
}
