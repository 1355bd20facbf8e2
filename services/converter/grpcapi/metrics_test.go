package grpcapi

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
)

const mt940 = ":20:STMT1\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR100,00\n" +
	":61:2601020102D25,50NTRFREF1//BANKREF1\n:86:Rechnung Müller\n:62F:C260102EUR74,50\n-"

func durationCount(t *testing.T, from, to string) uint64 {
	t.Helper()
	var m dto.Metric
	if err := conversionDuration.WithLabelValues(from, to).(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// The registry is shared by the whole test binary, so each case compares
// the labelled child before and after one Convert call.
func TestConvertMetrics(t *testing.T) {
	srv := newConversionServer(builtin.Engine())
	camt, err := srv.eng.Convert(engine.Request{Input: []byte(mt940), To: "camt.053"})
	if err != nil {
		t.Fatal(err)
	}
	strict := true
	tests := []struct {
		name              string
		req               *conversionv1.ConvertRequest
		from, to, outcome string
		bytes             bool // input reached the engine
	}{
		{"ok detected", &conversionv1.ConvertRequest{To: "camt.053", Message: mt940}, "MT940", "camt.053", "ok", true},
		{"ok named in other case", &conversionv1.ConvertRequest{From: "mt940", To: "CAMT.053", Raw: []byte(mt940)}, "MT940", "camt.053", "ok", true},
		{"parse error", &conversionv1.ConvertRequest{From: "MT940", To: "camt.053", Message: strings.Replace(mt940, "C260101", "C261301", 1)}, "MT940", "camt.053", "parse_error", true},
		{"empty message", &conversionv1.ConvertRequest{To: "camt.053"}, "unknown", "camt.053", "parse_error", false},
		{"strict", &conversionv1.ConvertRequest{To: "MT940", Message: camt.Pages[0], Options: &conversionv1.Options{Strict: &strict}}, "unknown", "MT940", "strict", true},
		{"unknown target is not a label", &conversionv1.ConvertRequest{To: "pdf?id=42", Message: mt940}, "unknown", "other", "unsupported", true},
		{"unknown source is not a label", &conversionv1.ConvertRequest{From: "acct-1234", To: "camt.053", Message: "hello"}, "other", "camt.053", "unsupported", true},
		{"undetectable", &conversionv1.ConvertRequest{To: "camt.053", Message: "hello"}, "unknown", "camt.053", "unsupported", true},
		{"invalid options", &conversionv1.ConvertRequest{To: "camt.053", Message: mt940, Options: &conversionv1.Options{DateFormat: "iso"}}, "unknown", "camt.053", "invalid_options", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := conversionsTotal.WithLabelValues(tt.from, tt.to, tt.outcome)
			b := inputBytesTotal.WithLabelValues(tt.from)
			c0, b0, d0 := testutil.ToFloat64(c), testutil.ToFloat64(b), durationCount(t, tt.from, tt.to)
			_, err := srv.Convert(context.Background(), tt.req)
			if (err == nil) != (tt.outcome == "ok") {
				t.Fatalf("err = %v", err)
			}
			if got := testutil.ToFloat64(c) - c0; got != 1 {
				t.Errorf("conversions_total{%s,%s,%s} rose by %v, want 1", tt.from, tt.to, tt.outcome, got)
			}
			wantBytes := 0.0
			if tt.bytes {
				wantBytes = float64(len(tt.req.GetRaw()) + len(tt.req.GetMessage()))
			}
			if got := testutil.ToFloat64(b) - b0; got != wantBytes {
				t.Errorf("input_bytes_total{%s} rose by %v, want %v", tt.from, got, wantBytes)
			}
			wantObs := uint64(0)
			if tt.outcome == "ok" {
				wantObs = 1
			}
			if got := durationCount(t, tt.from, tt.to) - d0; got != wantObs {
				t.Errorf("duration observations rose by %d, want %d", got, wantObs)
			}
		})
	}
	for _, c := range []prometheus.Collector{conversionsTotal, conversionDuration, inputBytesTotal} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil || len(problems) > 0 {
			t.Errorf("lint: %v %v", err, problems)
		}
	}
}

// outcomeOf runs on every Convert call: a success costs no allocation.
func TestOutcomeOfSuccessAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = outcomeOf(nil) }); n != 0 {
		t.Errorf("outcomeOf(nil) allocates %.0f times", n)
	}
}
