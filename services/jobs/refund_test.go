package jobs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
)

// downConverter answers messages starting with "down" as an unreachable
// converter does and the rest as fakeConverter does.
type downConverter struct{ fakeConverter }

func (f *downConverter) Convert(ctx context.Context, in *conversionv1.ConvertRequest, opts ...grpc.CallOption) (*conversionv1.ConvertResponse, error) {
	if strings.HasPrefix(in.GetMessage(), "down") {
		return nil, status.Error(codes.Unavailable, "connection refused")
	}
	return f.fakeConverter.Convert(ctx, in, opts...)
}

// recordingRefunder records refunds; its first fail calls fail, as metering
// does while it is down.
type recordingRefunder struct {
	mu   sync.Mutex
	fail int
	got  []jobs.Refund
}

func (r *recordingRefunder) Refund(_ context.Context, f jobs.Refund) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, f)
	if len(r.got) <= r.fail {
		return errors.New("metering unavailable")
	}
	return nil
}

func (r *recordingRefunder) calls() []jobs.Refund {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]jobs.Refund(nil), r.got...)
}

// TestItemsFailedByAnOutageAreRefunded: the units of items that failed
// because the converter stayed unavailable past its retries are given back,
// once per job (one reference, retried while metering does not answer), for
// the window the batch was counted in; items that failed on their content
// stay counted, and a job without such items asks for nothing.
func TestItemsFailedByAnOutageAreRefunded(t *testing.T) {
	cases := []struct {
		name      string
		msgs      []string
		fail      int   // refund calls that fail first
		wantUnits int64 // 0: no refund asked
	}{
		{name: "every item failed by the outage", msgs: []string{"down 1", "down 2", "down 3"}, wantUnits: 3},
		{name: "mixed with content failures and successes", msgs: []string{"down 1", "bad 2", "ok 3", "down 4"}, wantUnits: 2},
		{name: "metering down at first", msgs: []string{"down 1"}, fail: 2, wantUnits: 1},
		{name: "content failures only", msgs: []string{"bad 1", "ok 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			ref := &recordingRefunder{fail: tc.fail}
			svc := e.service(t, &downConverter{}, func(c *jobs.Config) {
				c.RetryBase, c.RetryCeiling, c.ConvertRetryFor = 10*time.Millisecond, 20*time.Millisecond, 50*time.Millisecond
				c.Refunder = ref
			})
			start(t, func(ctx context.Context) { _ = svc.RunWorkers(ctx) })
			start(t, func(ctx context.Context) { _ = svc.RunFanout(ctx) })
			j, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: tc.msgs})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, "completion", 20*time.Second, func() bool {
				v, err := svc.GetJob(ctx, alice, j.ID)
				return err == nil && v.Job.Status == jobs.JobCompleted
			})
			if tc.wantUnits == 0 {
				// Events are handled in order: once a later job that needs
				// a refund has one, this job's event has been handled.
				later, err := svc.CreateBatch(ctx, alice, jobs.BatchRequest{To: "camt.053", Messages: []string{"down"}})
				if err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the later job's refund", 30*time.Second, func() bool { return len(ref.calls()) > 0 })
				for _, r := range ref.calls() {
					if r.Reference != "job:"+later.ID {
						t.Fatalf("refund %+v, want none for job %s", r, j.ID)
					}
				}
				return
			}
			waitFor(t, "the refund", 30*time.Second, func() bool { return len(ref.calls()) > tc.fail })
			for _, r := range ref.calls() {
				want := jobs.Refund{AccountID: alice.AccountID, Mode: "live", CountedAt: j.CreatedAt, Units: tc.wantUnits, Reference: "job:" + j.ID}
				if !r.CountedAt.Equal(want.CountedAt) {
					t.Fatalf("refund counted at %v, want the job's creation %v", r.CountedAt, want.CountedAt)
				}
				r.CountedAt = want.CountedAt
				if r != want {
					t.Fatalf("refund %+v, want %+v", r, want)
				}
			}
		})
	}
}
