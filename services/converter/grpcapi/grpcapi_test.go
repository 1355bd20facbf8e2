package grpcapi_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/grpcapi"
)

func client(t *testing.T) conversionv1.ConversionServiceClient {
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
	return conversionv1.NewConversionServiceClient(conn)
}

const stmt = ":20:STMT1\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR100,00\n" +
	":61:2601020102D25,50NTRFREF1//BANKREF1\n:86:Rechnung Müller\n:62F:C260102EUR74,50\n-"

func TestConvert(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	res, err := c.Convert(ctx, &conversionv1.ConvertRequest{To: "camt.053", Raw: []byte(stmt), ContentType: "text/plain"})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.GetMeta(); m.GetDetectedType() != "MT940" || m.GetTargetType() != "camt.053" || m.GetPages() != 1 || !strings.Contains(res.GetResult()[0], "<Ntry>") {
		t.Fatalf("convert: %v", res)
	}
	f, err := c.ListFormats(ctx, &conversionv1.ListFormatsRequest{})
	if err != nil || len(f.GetFormats()) < 10 {
		t.Fatalf("formats: %v %v", f, err)
	}
	tests := []struct {
		name  string
		req   *conversionv1.ConvertRequest
		typ   problem.Type
		field string
		inMsg string
	}{
		{"parse error names line and field", &conversionv1.ConvertRequest{To: "camt.053", Message: strings.Replace(stmt, "C260101", "C261301", 1)}, problem.InvalidInput, "message", "line 4"},
		{"unknown target", &conversionv1.ConvertRequest{To: "pdf", Message: stmt}, problem.InvalidInput, "to", "pdf"},
		{"bad option", &conversionv1.ConvertRequest{To: "camt.053", Message: stmt, Options: &conversionv1.Options{DateFormat: "iso"}}, problem.InvalidInput, "dateFormat", ""},
		{"empty message", &conversionv1.ConvertRequest{To: "camt.053"}, problem.InvalidInput, "message", ""},
		{"undetectable", &conversionv1.ConvertRequest{To: "camt.053", Message: "hello"}, problem.InvalidInput, "from", ""},
		{"MT970 refused by name", &conversionv1.ConvertRequest{To: "camt.053", Message: "{1:F01COBADEFFXXXX0000000000}{2:I970ABNANL2AXXXXN}{4:\n" + strings.TrimSuffix(stmt, "-") + "-}"}, problem.InvalidInput, "to", "MT970 (netting statement) is not converted"},
		{"strict refuses lossy output", &conversionv1.ConvertRequest{To: "MT940", Message: mustMX(t, c), Options: &conversionv1.Options{Strict: ptr(true)}}, problem.Unprocessable, "", "strict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Convert(ctx, tt.req)
			p := rpc.Problem(err)
			if p.Type != tt.typ || p.Field != tt.field || !strings.Contains(p.Detail, tt.inMsg) {
				t.Fatalf("problem %+v", p)
			}
		})
	}
}

// mustMX is the statement as camt.053 carrying an umlaut, which MT cannot.
func mustMX(t *testing.T, c conversionv1.ConversionServiceClient) string {
	t.Helper()
	res, err := c.Convert(context.Background(), &conversionv1.ConvertRequest{To: "camt.053", Message: stmt})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetResult()[0]
}

func ptr[T any](v T) *T { return &v }
