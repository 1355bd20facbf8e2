package fieldcheck

import (
	"net/url"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
)

// messages are request types of the API, with the shapes the checker must
// know: nested messages, lists, maps, optional scalars, enums, Value and
// ListValue, and the well-known types (through the last few).
var messages = []proto.Message{
	&financev1.UpdateTransactionRequest{},
	&jobsv1.CreateBatchRequest{},
	&financev1.CreateGoalRequest{},
	&financev1.UpdateBudgetAllocationsRequest{},
	&financev1.ListTransactionsRequest{},
	&conversionv1.ConvertRequest{},
	&timestamppb.Timestamp{},
	&wrapperspb.Int64Value{},
	&structpb.Struct{},
}

func TestBodyNamesTheField(t *testing.T) {
	upd := (&financev1.UpdateTransactionRequest{}).ProtoReflect().Descriptor()
	batch := (&jobsv1.CreateBatchRequest{}).ProtoReflect().Descriptor()
	for _, tc := range []struct {
		body, field string
		batch       bool
	}{
		{`{"bogus":1}`, "bogus", false},
		{`{"expected_version":"abc"}`, "expected_version", false},
		{`{"expectedVersion":1.5}`, "expectedVersion", false},
		{`{"expected_version":4294967296}`, "expected_version", false},
		{`{"location":5}`, "location", false},
		{`{"location":{"city":5}}`, "location.city", false},
		{`{"memo":"é","location":{"nowhere":1}}`, "location.nowhere", false},
		{`{"revert_to_provider":"amount"}`, "revert_to_provider", false},
		{`{"revert_to_provider":["amount",1]}`, "revert_to_provider", false},
		{`{"memo":"a","memo":"b"}`, "memo", false},
		{`{"clear_location":"yes"}`, "clear_location", false},
		{`[1,2]`, "body", false},
		{`{"memo":`, "body", false},
		{`{} {}`, "body", false},
		{`{"to":"camt.053","items":[{"message":1}]}`, "items.message", true},
		{`{"to":"camt.053","ttl_seconds":"soon"}`, "ttl_seconds", true},
		{`{"to":"camt.053","options":{"strict":"maybe"}}`, "options.strict", true},
	} {
		md := upd
		if tc.batch {
			md = batch
		}
		f, bad := Body([]byte(tc.body), md)
		if !bad || f.Field != tc.field {
			t.Errorf("%s: got %+v %v, want field %s", tc.body, f, bad, tc.field)
		}
	}
	for _, ok := range []string{
		`{"expected_version":3,"memo":"x","amount":"-12.50","tags":["a"],"location":{"city":"Berlin"}}`,
		`{"expectedVersion":"3","amount":{"amount":"1.00","currency":"EUR"},"tags":null,"merchant":null}`,
		`{"expected_version":3e0}`,
	} {
		if f, bad := Body([]byte(ok), upd); bad {
			t.Errorf("%s: refused as %+v", ok, f)
		}
	}
}

func TestQueryNamesTheParameter(t *testing.T) {
	md := (&financev1.ListTransactionsRequest{}).ProtoReflect().Descriptor()
	f, bad := Query(url.Values{"page_size": {"abc"}}, md)
	if !bad || f.Field != "page_size" {
		t.Fatalf("got %+v %v", f, bad)
	}
	if f, bad := Query(url.Values{"page_size": {"20"}, "pagesize": {"x"}}, md); bad {
		t.Fatalf("refused %+v", f)
	}
}

func TestUnknownQuery(t *testing.T) {
	md := (&financev1.ListTransactionsRequest{}).ProtoReflect().Descriptor()
	for _, c := range []struct {
		q    url.Values
		want string // "" when every parameter names a field
	}{
		{url.Values{}, ""},
		{url.Values{"page_size": {"3"}, "pageSize": {"3"}}, ""},
		{url.Values{"pagesize": {"3"}}, "pagesize"},
		{url.Values{"page_size": {"3"}, "zz": {""}, "aa": {""}}, "aa"},
		{url.Values{"page_size.x": {"3"}}, "page_size.x"},
	} {
		f, bad := UnknownQuery(c.q, md)
		if bad != (c.want != "") || f.Field != c.want {
			t.Errorf("%v: got %+v %v, want %q", c.q, f, bad, c.want)
		}
	}
}

// FuzzBodyAgreesWithProtojson: the checker refuses every body protojson
// (the gateway's decoder) refuses, for every message above, naming a field
// or the body; and it refuses a body protojson takes only as not JSON (the
// standard library's grammar is the stricter: protojson takes "0e").
func FuzzBodyAgreesWithProtojson(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"expected_version":3,"memo":"x","amount":"-12.50","tags":["a"],"location":{"city":"Berlin"}}`,
		`{"to":"camt.053","items":[{"message":"x"}],"ttl_seconds":60,"options":{"strict":true}}`,
		`{"name":"Car","target_amount":"100.00","target_date":"2027-01-01"}`,
		`"2026-01-01T00:00:00Z"`, `"12"`, `{"a":[1,null,{"b":true}]}`, `{"page_size":"5","category_id":["a"]}`,
		`{"expected_version":1e2}`, `{"expected_version":-0}`, `{"memo":null}`, `[]`, `null`, `{"x":1}`,
	} {
		for i := range messages {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		m := messages[int(which)%len(messages)]
		msg := m.ProtoReflect().New().Interface()
		err := protojson.Unmarshal(body, msg)
		finding, bad := Body(body, m.ProtoReflect().Descriptor())
		if (err != nil && !bad) || (err == nil && bad && finding.Field != "body") {
			t.Fatalf("%T %q: protojson %v, checker %+v %v", m, body, err, finding, bad)
		}
		if bad && finding.Field == "" {
			t.Fatalf("%q: a finding without a field", body)
		}
	})
}
