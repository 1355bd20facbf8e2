package jobs_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	"github.com/ledgerlane/platform/services/jobs"
)

// The job.completed body is written without protobuf, but it must be what
// protojson writes for jobs.v1.JobCompletedEvent (proto names, default
// values): the same members, values and timestamp format.
func TestEventBodyMatchesProtoContract(t *testing.T) {
	ts := func(t time.Time) *timestamppb.Timestamp {
		if t.IsZero() {
			return nil
		}
		return timestamppb.New(t)
	}
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for name, j := range map[string]jobs.Job{
		"completed": {ID: "5b0c2a7e-0000-4000-8000-000000000001", Status: jobs.JobCompleted, ItemCount: 5, Succeeded: 4, Failed: 1,
			CreatedAt: created, StartedAt: created.Add(120 * time.Millisecond), CompletedAt: created.Add(time.Second + 123456*time.Nanosecond),
			ExpiresAt: created.Add(time.Hour + time.Second + 123456789*time.Nanosecond), Reference: "payroll 2026-11 \"Zürich\" <3>"},
		"zero counts, not started": {ID: "5b0c2a7e-0000-4000-8000-000000000002", Status: jobs.JobCompleted,
			CreatedAt: created.In(time.FixedZone("CET", 3600)), CompletedAt: created.Add(time.Microsecond), ExpiresAt: created.Add(time.Hour)},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := jobs.EventBody(j)
			if err != nil {
				t.Fatal(err)
			}
			want := &jobsv1.JobCompletedEvent{
				Event: jobs.EventJobCompleted, Id: j.ID, Status: j.Status,
				ItemCount: int32(j.ItemCount), SucceededCount: int32(j.Succeeded), FailedCount: int32(j.Failed),
				CreatedAt: ts(j.CreatedAt), StartedAt: ts(j.StartedAt), CompletedAt: ts(j.CompletedAt), ExpiresAt: ts(j.ExpiresAt),
				Reference: j.Reference,
			}
			var parsed jobsv1.JobCompletedEvent
			if err := protojson.Unmarshal(got, &parsed); err != nil || !proto.Equal(&parsed, want) {
				t.Fatalf("body %s: %v, reads as %v", got, err, &parsed)
			}
			ref, err := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			var a, b map[string]any
			if err := json.Unmarshal(got, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(ref, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("body %s\nprotojson %s", got, ref)
			}
		})
	}
}
