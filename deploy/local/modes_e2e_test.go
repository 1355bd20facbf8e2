package local_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/metering"
)

// TestTestModeIsASandboxForJobs (issue 27, 2; the jobs service's
// objects: jobs, webhook endpoints, accounting connections): every object
// the jobs service keeps belongs to the mode of
// the credential that made it. For each route × credential mode × object
// mode, a credential of the object's mode reaches it and one of the other
// mode gets 404 exactly as for another tenant's id; a webhook endpoint
// receives the job.completed events of its own mode only.
func TestTestModeIsASandboxForJobs(t *testing.T) {
	st := stack(t, false)
	keys := map[string]string{}
	for _, k := range st.Keys {
		keys[k.Name] = k.Key
	}
	scopes := append(metering.DefaultConversionScopes(), "webhooks:manage", "connections:manage")
	for _, mode := range []string{metering.ModeLive, metering.ModeTest} {
		secret, _, err := st.Metering.Service().IssueCredential(context.Background(), metering.IssueParams{
			AccountID: st.AccountID, Name: "modes-" + mode, Kind: metering.KindAPIKey, Surface: metering.SurfaceConversion,
			Mode: mode, Scopes: scopes})
		if err != nil {
			t.Fatal(err)
		}
		keys[mode] = secret
	}
	c := client{t: t, base: st.URL, keys: keys}

	// One receiver per mode, each registered by a credential of its mode.
	var mu sync.Mutex
	got := map[string][]string{} // mode → bodies received
	hooks := map[string]string{} // mode → endpoint id
	for _, mode := range []string{metering.ModeLive, metering.ModeTest} {
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got[mode] = append(got[mode], string(b))
			mu.Unlock()
		}))
		t.Cleanup(recv.Close)
		r := c.call("POST", "/v1/webhooks", mode, `{"url":"`+recv.URL+`/`+mode+`"}`, "Content-Type", "application/json")
		if r.status != 200 {
			t.Fatalf("%s webhook: %d %s", mode, r.status, r.body)
		}
		hooks[mode] = r.json["id"].(string)
	}
	// One job per mode.
	jobs := map[string]string{}
	for _, mode := range []string{metering.ModeLive, metering.ModeTest} {
		r := c.call("POST", "/v1/convert/batch", mode, `{"to":"camt.053","items":[{"message":":20:MODE-`+mode+`"}]}`,
			"Content-Type", "application/json")
		if r.status != 202 {
			t.Fatalf("%s batch: %d %s", mode, r.status, r.body)
		}
		jobs[mode] = r.json["id"].(string)
	}
	// Each endpoint gets its own mode's job, and only that.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		done := len(got[metering.ModeLive]) >= 1 && len(got[metering.ModeTest]) >= 1
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // a stray delivery to the other endpoint would be here by now
	mu.Lock()
	for mode, bodies := range got {
		other := metering.ModeTest
		if mode == metering.ModeTest {
			other = metering.ModeLive
		}
		for _, b := range bodies {
			if !strings.Contains(b, jobs[mode]) || strings.Contains(b, jobs[other]) {
				t.Errorf("the %s endpoint received %s", mode, b)
			}
		}
	}
	mu.Unlock()

	// One accounting connection per mode.
	conns := map[string]string{}
	for _, mode := range []string{metering.ModeLive, metering.ModeTest} {
		r := c.call("POST", "/v1/connections", mode, `{"platform":"sandbox","display_name":"Books `+mode+`"}`, "Content-Type", "application/json")
		if r.status != 200 {
			t.Fatalf("%s connection: %d %s", mode, r.status, r.body)
		}
		conns[mode] = r.json["id"].(string)
	}

	// The matrix: route × credential mode × object mode.
	for _, cred := range []string{metering.ModeLive, metering.ModeTest} {
		for _, obj := range []string{metering.ModeLive, metering.ModeTest} {
			want := 200
			if cred != obj {
				want = 404
			}
			if r := c.call("GET", "/v1/jobs/"+jobs[obj], cred, ""); r.status != want {
				t.Errorf("GET a %s job with a %s key: %d, want %d", obj, cred, r.status, want)
			}
			list := c.call("GET", "/v1/webhooks", cred, "")
			if sees := strings.Contains(string(list.body), hooks[obj]); list.status != 200 || sees != (cred == obj) {
				t.Errorf("a %s key lists the %s endpoint: %v (%d)", cred, obj, sees, list.status)
			}
			conList := c.call("GET", "/v1/connections", cred, "")
			if sees := strings.Contains(string(conList.body), conns[obj]); conList.status != 200 || sees != (cred == obj) {
				t.Errorf("a %s key lists the %s connection: %v (%d)", cred, obj, sees, conList.status)
			}
			if cred != obj {
				c.call("DELETE", "/v1/jobs/"+jobs[obj], cred, "").wantProblem(t, 404, "not-found")
				c.call("DELETE", "/v1/webhooks/"+hooks[obj], cred, "").wantProblem(t, 404, "not-found")
				c.call("DELETE", "/v1/connections/"+conns[obj], cred, "").wantProblem(t, 404, "not-found")
				c.call("POST", "/v1/connections/"+conns[obj]+"/statements", cred, `{"message":"x"}`, "Content-Type", "application/json").
					wantProblem(t, 404, "not-found")
			}
		}
	}
	// Deleting with the right mode works, and the other mode's object stays.
	for _, mode := range []string{metering.ModeLive, metering.ModeTest} {
		if r := c.call("DELETE", "/v1/jobs/"+jobs[mode], mode, ""); r.status != 200 && r.status != 204 {
			t.Errorf("DELETE own %s job: %d %s", mode, r.status, r.body)
		}
		if r := c.call("DELETE", "/v1/webhooks/"+hooks[mode], mode, ""); r.status != 200 && r.status != 204 {
			t.Errorf("DELETE own %s endpoint: %d %s", mode, r.status, r.body)
		}
		if r := c.call("DELETE", "/v1/connections/"+conns[mode], mode, ""); r.status != 200 && r.status != 204 {
			t.Errorf("DELETE own %s connection: %d %s", mode, r.status, r.body)
		}
	}
}

// TestTestModeNeverReadsLiveFinanceData (issue 27, 2): a finance user
// belongs to a mode (the demo's is live); a test credential for a live user
// is refused when it is issued, naming mode, so test mode never reads real
// transactions; a live one is issued.
func TestTestModeNeverReadsLiveFinanceData(t *testing.T) {
	st := stack(t, false)
	issue := func(mode string) error {
		_, _, err := st.Metering.Service().IssueCredential(context.Background(), metering.IssueParams{
			AccountID: st.AccountID, Name: "fin-" + mode, Kind: metering.KindAccessToken, Surface: metering.SurfaceFinance,
			Mode: mode, Scopes: metering.FinanceReadScopes(), FinanceUserID: st.Demo.UserID, GrantID: st.Demo.GrantReadID})
		return err
	}
	err := issue(metering.ModeTest)
	var pr *problem.Problem
	if !errors.As(err, &pr) || pr.Type != problem.InvalidInput || pr.Field != "mode" {
		t.Fatalf("a test credential for the live demo user: %v", err)
	}
	if err := issue(metering.ModeLive); err != nil {
		t.Fatalf("a live credential: %v", err)
	}
}
