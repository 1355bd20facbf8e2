package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ledgerlane/platform/pkg/pgtest"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/postgres"
)

// Rows written before options became a domain value hold the protojson
// encoding of conversion.v1.Options. They must read as the same options, and
// what is written now must read back as the same conversion.v1.Options.
func TestOptionsColumnCompatible(t *testing.T) {
	pool := pgtest.Pool(t, "jobs", postgres.Migrations)
	s := postgres.New(pool)
	ctx := context.Background()
	pb := &conversionv1.Options{
		TranslitProfile: "german", Field86Profile: "german", Strict: proto.Bool(true), TargetVersion: "camt.053.001.08",
		DateFormat: "dmy", OfxVersion: "220", IntuBid: "01234",
	}
	want := jobs.Options{
		TranslitProfile: "german", Field86Profile: "german", Strict: true, TargetVersion: "camt.053.001.08",
		DateFormat: "dmy", OFXVersion: "220", IntuBID: "01234",
	}
	legacy, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	for name, stored := range map[string][]byte{
		"all options":     legacy,
		"explicit empty":  []byte(`{}`),
		"strict false":    []byte(`{"strict":false}`),
		"no options, nil": nil,
	} {
		t.Run(name, func(t *testing.T) {
			id := uuid.NewString()
			_, err := pool.Exec(ctx, `INSERT INTO jobs (id, account_id, mode, status, from_format, to_format, options,
				item_count, pending_count, ttl_seconds, created_at, expires_at)
				VALUES ($1, $2, 'live', 'queued', '', 'camt.053', $3, 0, 0, 3600, $4, $5)`,
				id, uuid.NewString(), stored, now, now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			j, err := s.JobByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			exp := jobs.Options{}
			if name == "all options" {
				exp = want
			}
			if j.Options != exp {
				t.Fatalf("read %+v, want %+v", j.Options, exp)
			}
		})
	}

	// What the store writes now is what protojson reads as the same message.
	j := jobs.Job{ID: uuid.NewString(), AccountID: uuid.NewString(), Mode: "live", Status: jobs.JobQueued, To: "camt.053",
		Options: want, TTL: time.Hour, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.CreateJob(ctx, j, nil); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := pool.QueryRow(ctx, `SELECT options FROM jobs WHERE id = $1`, j.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	got := &conversionv1.Options{}
	if err := protojson.Unmarshal(raw, got); err != nil || !proto.Equal(got, pb) {
		t.Fatalf("stored %s: %v, reads as %v", raw, err, got)
	}
}
