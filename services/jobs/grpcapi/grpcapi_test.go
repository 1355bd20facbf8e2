package grpcapi_test

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ledgerlane/platform/pkg/natsconn"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/convertclient"
	"github.com/ledgerlane/platform/services/jobs/grpcapi"
	"github.com/ledgerlane/platform/services/jobs/memory"
	"github.com/ledgerlane/platform/services/jobs/natsqueue"
	"github.com/ledgerlane/platform/services/jobs/webhook"
)

type echo struct{}

func (echo) Convert(_ context.Context, in *conversionv1.ConvertRequest, _ ...grpc.CallOption) (*conversionv1.ConvertResponse, error) {
	if in.GetOptions().GetTargetVersion() != "camt.053.001.08" {
		return nil, rpc.Status(problem.New(problem.InvalidInput, "options did not travel"))
	}
	return &conversionv1.ConvertResponse{Result: []string{"<Document/>"}, Warnings: []*conversionv1.Warning{{Code: "W1", Severity: "info"}}}, nil
}

func serve(t *testing.T) (jobsv1.JobServiceClient, jobsv1.WebhookServiceClient) {
	t.Helper()
	nc, js, err := natsconn.Connect(natsconn.TestURL(t), "grpcapi-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	names := natsqueue.NamesWithPrefix("g" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	svc := jobs.NewService(jobs.Config{Store: memory.New(), Queue: natsqueue.New(js, names), Converter: convertclient.New(echo{}),
		Webhooks: webhook.NewClient(true), Keys: jobs.NewRandomKeyring(), AllowPrivate: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = js.DeleteStream(context.Background(), names.WorkStream)
		_ = js.DeleteStream(context.Background(), names.EventStream)
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The service's server, with the interceptor that carries its problems.
	srv := rpc.NewServer(slog.New(slog.DiscardHandler), nil)
	grpcapi.Register(srv, svc)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return jobsv1.NewJobServiceClient(conn), jobsv1.NewWebhookServiceClient(conn)
}

func as(account string) context.Context {
	return principal.Outgoing(context.Background(), principal.Principal{AccountID: account, Mode: "test"})
}

func TestGRPC(t *testing.T) {
	jc, wc := serve(t)
	alice, bob := as("0e8a3c6e-2f4b-4f54-9f53-000000000001"), as("0e8a3c6e-2f4b-4f54-9f53-000000000002")

	_, err := jc.CreateBatch(alice, &jobsv1.CreateBatchRequest{To: "camt.053", Items: []*jobsv1.BatchItem{{Message: "x"}}, TtlSeconds: proto.Int32(0)})
	if p := rpc.Problem(err); p.Type != problem.InvalidInput || p.Field != "ttl_seconds" {
		t.Fatalf("ttl 0: %+v", p)
	}
	cr, err := jc.CreateBatch(alice, &jobsv1.CreateBatchRequest{
		To: "camt.053", Options: &conversionv1.Options{TargetVersion: "camt.053.001.08"},
		Items: []*jobsv1.BatchItem{{Message: "a"}, {Message: "b"}}, TtlSeconds: proto.Int32(120),
	})
	if err != nil {
		t.Fatal(err)
	}
	j := cr.GetJob()
	if j.GetStatus() != "queued" || j.GetItemCount() != 2 || j.GetPendingCount() != 2 || j.GetStartedAt() != nil ||
		j.GetExpiresAt().AsTime().Sub(j.GetCreatedAt().AsTime()) != 120*time.Second {
		t.Fatalf("created: %v", j)
	}
	var got *jobsv1.Job
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := jc.GetJob(alice, &jobsv1.GetJobRequest{Id: j.GetId()})
		if err != nil {
			t.Fatal(err)
		}
		if got = r.GetJob(); got.GetStatus() == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not completed: %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.GetSucceededCount() != 2 || len(got.GetItems()) != 2 || got.GetCompletedAt() == nil || got.GetStartedAt() == nil {
		t.Fatalf("job: %v", got)
	}
	for i, it := range got.GetItems() {
		if it.GetIndex() != int32(i) || it.GetStatus() != "ok" || it.GetResult() != "<Document/>" || len(it.GetWarnings()) != 1 || it.GetProblem() != nil {
			t.Fatalf("item %d: %v", i, it)
		}
	}
	if _, err := jc.GetJob(bob, &jobsv1.GetJobRequest{Id: j.GetId()}); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("bob: %v", err)
	}
	if _, err := jc.DeleteJob(alice, &jobsv1.DeleteJobRequest{Id: j.GetId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := jc.DeleteJob(alice, &jobsv1.DeleteJobRequest{Id: j.GetId()}); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("second delete: %v", err)
	}

	wr, err := wc.CreateWebhook(alice, &jobsv1.CreateWebhookRequest{Url: "https://hooks.example.com/in"})
	if err != nil || !strings.HasPrefix(wr.GetSecret(), "whsec_") || wr.GetId() == "" || wr.GetCreatedAt() == nil {
		t.Fatalf("create webhook: %v %v", err, wr)
	}
	lr, err := wc.ListWebhooks(alice, &jobsv1.ListWebhooksRequest{})
	if err != nil || len(lr.GetEndpoints()) != 1 || lr.GetEndpoints()[0].GetStatus() != "active" || lr.GetEndpoints()[0].GetUrl() != "https://hooks.example.com/in" {
		t.Fatalf("list: %v %v", err, lr)
	}
	if _, err := wc.DeleteWebhook(bob, &jobsv1.DeleteWebhookRequest{Id: wr.GetId()}); rpc.Problem(err).Type != problem.NotFound {
		t.Fatalf("bob delete: %v", err)
	}
	if _, err := wc.DeleteWebhook(alice, &jobsv1.DeleteWebhookRequest{Id: wr.GetId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := jc.GetJob(context.Background(), &jobsv1.GetJobRequest{Id: j.GetId()}); rpc.Problem(err).Type != problem.Unauthorized {
		t.Fatalf("no principal: %v", err)
	}
}

// TestWebhookSettingsOverGRPC: event types and description travel both
// ways; PATCH's ListValue tells absent from a list and refuses a
// non-string element naming it; the event types are listed.
func TestWebhookSettingsOverGRPC(t *testing.T) {
	_, wc := serve(t)
	alice := as("0e8a3c6e-2f4b-4f54-9f53-000000000001")
	cr, err := wc.CreateWebhook(alice, &jobsv1.CreateWebhookRequest{Url: "https://hooks.example.com/in",
		EventTypes: []string{"job.completed"}, Description: "ops"})
	if err != nil || cr.GetDescription() != "ops" || !slices.Equal(cr.GetEventTypes(), []string{"job.completed"}) || cr.GetStatus() != "active" {
		t.Fatalf("create: %v %v", err, cr)
	}
	// Absent event types stay.
	ur, err := wc.UpdateWebhook(alice, &jobsv1.UpdateWebhookRequest{Id: cr.GetId(), Description: proto.String("")})
	if err != nil || ur.GetEndpoint().GetDescription() != "" || !slices.Equal(ur.GetEndpoint().GetEventTypes(), []string{"job.completed"}) {
		t.Fatalf("update description: %v %v", err, ur)
	}
	star, _ := structpb.NewList([]any{"*"})
	if ur, err = wc.UpdateWebhook(alice, &jobsv1.UpdateWebhookRequest{Id: cr.GetId(), EventTypes: star}); err != nil ||
		!slices.Equal(ur.GetEndpoint().GetEventTypes(), []string{"*"}) {
		t.Fatalf("update to every type: %v %v", err, ur)
	}
	bad, _ := structpb.NewList([]any{"job.completed", 7.0})
	_, err = wc.UpdateWebhook(alice, &jobsv1.UpdateWebhookRequest{Id: cr.GetId(), EventTypes: bad})
	if p := rpc.Problem(err); p.Type != problem.InvalidInput || p.Field != "event_types[1]" {
		t.Fatalf("non-string type: %+v", p)
	}
	types, err := wc.ListEventTypes(alice, &jobsv1.ListEventTypesRequest{})
	if err != nil || len(types.GetEventTypes()) != len(jobs.EventTypes) || types.GetEventTypes()[0].GetName() != "job.completed" ||
		types.GetEventTypes()[0].GetAnnounced() || types.GetEventTypes()[1].GetAnnounced() {
		t.Fatalf("event types: %v %v", err, types)
	}
	rr, err := wc.RotateWebhookSecret(alice, &jobsv1.RotateWebhookSecretRequest{Id: cr.GetId()})
	if err != nil || !strings.HasPrefix(rr.GetSecret(), "whsec_") || rr.GetPreviousSecretExpiresAt() == nil {
		t.Fatalf("rotate: %v %v", err, rr)
	}
	lr, _ := wc.ListWebhooks(alice, &jobsv1.ListWebhooksRequest{})
	if !lr.GetEndpoints()[0].GetPreviousSecretExpiresAt().AsTime().Equal(rr.GetPreviousSecretExpiresAt().AsTime()) {
		t.Fatalf("listed: %v", lr)
	}
	dr, err := wc.ListDeliveries(alice, &jobsv1.ListDeliveriesRequest{Id: cr.GetId()})
	if err != nil || dr.GetDeliveries() == nil && len(dr.GetDeliveries()) != 0 {
		t.Fatalf("deliveries: %v %v", err, dr)
	}
	tr, err := wc.SendTestEvent(alice, &jobsv1.SendTestEventRequest{Id: cr.GetId()})
	if err != nil || tr.GetDelivery().GetEventType() != "webhook.test" || tr.GetDelivery().GetStatus() != "pending" || tr.GetDelivery().GetEventId() == "" {
		t.Fatalf("test: %v %v", err, tr)
	}
}
