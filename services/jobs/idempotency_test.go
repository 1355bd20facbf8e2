package jobs_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/jobs"
)

// TestSubmissionWithKeyIsFoundAgain (issue 11, item 2; found by the fault
// suite's kill -9 jobs mid-submission): a job committed for an
// Idempotency-Key whose answer was lost (the replica died before answering,
// the gateway answered 503 and released the key) is what the client's retry
// with that key gets, not a second job. The key is scoped to the
// credential; another request under it is a conflict.
func TestSubmissionWithKeyIsFoundAgain(t *testing.T) { eachStore(t, submissionWithKeyIsFoundAgain) }

func submissionWithKeyIsFoundAgain(t *testing.T, e *env) {
	svc := e.service(t, &fakeConverter{}, nil)
	ctx := context.Background()
	withKey := func(cred, key string) jobs.Caller {
		c := alice
		c.CredentialID, c.IdempotencyKey = cred, key
		return c
	}
	req := jobs.BatchRequest{To: "camt.053", Messages: []string{"a", "b"}}
	first, err := svc.CreateBatch(ctx, withKey("cred-1", "k1"), req)
	if err != nil || first.Replayed {
		t.Fatal(first.Replayed, err)
	}
	other := jobs.BatchRequest{To: "camt.053", Messages: []string{"a", "c"}}
	for _, tc := range []struct {
		name    string
		caller  jobs.Caller
		req     jobs.BatchRequest
		sameJob bool
		problem problem.Type
	}{
		{name: "the retry with the key", caller: withKey("cred-1", "k1"), req: req, sameJob: true},
		{name: "another request under the key", caller: withKey("cred-1", "k1"), req: other, problem: problem.IdempotencyConflict},
		{name: "the key of another credential", caller: withKey("cred-2", "k1"), req: req},
		{name: "another key", caller: withKey("cred-1", "k2"), req: req},
		{name: "no key", caller: alice, req: req},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := svc.CreateBatch(ctx, tc.caller, tc.req)
			if tc.problem != "" {
				wantProblem(t, err, tc.problem, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (j.ID == first.ID) != tc.sameJob {
				t.Fatalf("job %s, first %s: same %v, want %v", j.ID, first.ID, j.ID == first.ID, tc.sameJob)
			}
			// The edge bills a found job only when told (gateway settle).
			if j.Replayed != tc.sameJob {
				t.Fatalf("Replayed %v, want %v", j.Replayed, tc.sameJob)
			}
		})
	}

	// Two replicas committing the same key at once: one job.
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			j, err := svc.CreateBatch(ctx, withKey("cred-1", "k3"), req)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = j.ID
		})
	}
	wg.Wait()
	for _, id := range got {
		if id != got[0] {
			t.Fatalf("concurrent submissions with one key: jobs %v", got)
		}
	}
}
