package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/deploy/local"
)

// fuzzClient bounds each request: an input that hangs the stack is a finding
// too.
var fuzzClient = &http.Client{Timeout: 10 * time.Second}

var fuzzMethods = []string{"GET", "POST", "PATCH", "DELETE", "PUT", "HEAD", "OPTIONS"}

var fuzzContentTypes = []string{"", "application/json", "text/plain", "application/xml", "application/x-swift-mt", "image/png", "application/json; charset=\xff"}

// FuzzEdge sends arbitrary requests (method, path, query, one X-Service-*
// header, body, content type, credential) to the whole in-process stack and
// fails on any 5xx but the 501 of routes not built yet: no input may make the
// platform answer with a server error. CI runs it for a bounded time
// (.ci/run); `go test` runs the seeds.
func FuzzEdge(f *testing.F) {
	// A stepped clock on the highest plan keeps the token bucket out of the
	// way, so inputs reach the backends instead of a 429.
	clock := newStepClock()
	st, err := local.Start(context.Background(), local.Config{
		HTTPAddr: "127.0.0.1:0", RedisURL: os.Getenv("TEST_REDIS_URL"), NATSURL: os.Getenv("TEST_NATS_URL"),
		Log: slog.New(slog.DiscardHandler), Now: clock.Now, DemoPlan: "scale", SandboxInterval: -1,
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	var keys []string
	for _, k := range st.Keys {
		keys = append(keys, k.Key)
	}
	tx := st.Demo.ExcludedAccountID
	seeds := []struct {
		method         uint8
		path, query    string
		header, hvalue string
		body           string
		ct, key        uint8
	}{
		{0, "/v1/transactions/search", "q=%FF", "", "", "", 0, 5},
		{0, "/v1/transactions/%FF%FE", "", "", "", "", 0, 5},
		{1, "/v1/convert", "to=%FF", "", "", ":20:X", 2, 0},
		{1, "/v1/convert", "to=camt.053.001.08", "To-Version", "camt.053.001.02", ":20:X\n:25:A\n:28C:1\n:60F:C260101EUR1,\n:62F:C260101EUR1,\n-", 2, 0},
		{1, "/v1/convert", "", "To", "camt.053", `{"message":":20:X"}`, 1, 0},
		{2, "/v1/transactions/" + tx, "", "", "", `{"expected_version":3}{"memo":"x"}`, 1, 6},
		{2, "/v1/transactions/" + tx, "", "", "", `{"expected_version":1,"tags":[],"amount":{"amount":"1.00","currency":"EUR"}}`, 1, 6},
		{2, "/v1/transactions/" + tx, "", "", "", `{"expected_version":1,"date":"9999-12-31"}`, 1, 6},
		{1, "/v1/validate", "", "", "", `{"message":"\u0000"}`, 1, 0},
		{1, "/v1/enrich", "", "", "", `{"message":":20:X","mesage":1}`, 1, 0},
		{1, "/v1/convert/batch", "", "", "", `{"to":"camt.053","items":[{"message":":20:X"}]}`, 1, 2},
		{1, "/v1/transactions/bulk-categorize", "", "", "", `{"transaction_ids":["x"],"category_id":"\xff"}`, 1, 6},
		{1, "/v1/categories", "", "", "", `{"name":"a\u0000"}`, 1, 6},
		{1, "/v1/imports", "", "", "", `{"account_id":"` + st.Demo.AccountIDs.EuroChecking + `","message":":20:X\n:25:A\n:28C:1\n:60F:C260101EUR1,\n:61:2601010101D1,NTRFNONREF\n:62F:C260101EUR0,\n-"}`, 1, 6},
		{1, "/v1/imports", "", "", "", `{"account_id":"` + st.Demo.AccountIDs.EuroChecking + `","from":"csv","message":"d;a\n31.12.0000;-1,5\n","csv_mapping":{"date":"d","amount":"a","currency":"EUR","delimiter":";","decimal_separator":",","date_format":"dmy"}}`, 1, 6},
		{1, "/v1/imports", "", "", "", `{"account_id":"` + st.Demo.AccountIDs.EuroChecking + `","message":"OFXHEADER:100\n<OFX><STMTRS><CURDEF>EUR<BANKTRANLIST><STMTTRN><DTPOSTED>99991231<TRNAMT>-1</STMTTRN></BANKTRANLIST></STMTRS></OFX>"}`, 1, 6},
		{0, "/v1/transactions", "cursor=%00&page_size=0", "", "", "", 0, 4},
		{0, "/v1/jobs/%00", "", "", "", "", 0, 2},
		{3, "/v1/webhooks/\xff", "", "", "", "", 0, 2},
		{1, "/v1/webhooks", "", "", "", `{"url":"http://[::1"}`, 1, 2},
		{5, "/v1/formats", "", "", "", "", 0, 0},
		{6, "/v1/usage", "", "", "", "", 0, 3},
		{1, "/v1/portal/billing/limits", "", "", "", `{"overage_cap_cents":-1}`, 1, 3},
		{1, "/v1/debt/payoff-plan", "", "", "", `{"extra":"1e999"}`, 1, 5},
		{1, "/v1/debt/payoff-plan", "", "", "", `{"strategy":"snowball","total_monthly_budget":"999999999999.99"}`, 1, 5},
		{0, "/v1/holdings", "account_id=%00&page_size=201&cursor=x", "", "", "", 0, 5},
		{0, "/v1/insights/month-summary", "month=9999-12&currency=EUR", "", "", "", 0, 5},
		{0, "/v1/insights/spending-by-category", "start_date=0001-01-01&end_date=9999-12-31", "", "", "", 0, 5},
		{0, "/v1/bills/upcoming", "days_ahead=2147483647", "", "", "", 0, 5},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.header, s.hvalue, []byte(s.body), s.ct, s.key)
	}
	f.Fuzz(func(t *testing.T, method uint8, path, query, header, hvalue string, body []byte, ct, key uint8) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		url := st.URL + path
		if query != "" {
			url += "?" + query
		}
		req, err := http.NewRequest(fuzzMethods[int(method)%len(fuzzMethods)], url, bytes.NewReader(body))
		if err != nil {
			return // not a request a client can send
		}
		if c := fuzzContentTypes[int(ct)%len(fuzzContentTypes)]; c != "" {
			req.Header.Set("Content-Type", c)
		}
		if header != "" {
			req.Header.Set("X-Service-"+header, hvalue)
		}
		if i := int(key) % (len(keys) + 1); i < len(keys) {
			req.Header.Set("Authorization", "Bearer "+keys[i])
		}
		clock.Add(10 * time.Millisecond)
		resp, err := fuzzClient.Do(req)
		if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
			t.Fatalf("%s %s: no answer within %s", req.Method, url, fuzzClient.Timeout)
		}
		if err != nil {
			return // refused by the client library or the server's HTTP parser
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 500 {
			var p struct{ Type string }
			_ = json.Unmarshal(b, &p)
			if resp.StatusCode == 501 && p.Type == "not-implemented" {
				return
			}
			t.Fatalf("%s %s: %d %s", req.Method, url, resp.StatusCode, b)
		}
	})
}
