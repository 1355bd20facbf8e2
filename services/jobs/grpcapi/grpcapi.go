// Package grpcapi exposes batch jobs and webhooks over gRPC. It only maps
// between protobuf and the jobs.Service; the rules live in the service. The
// service's errors (*problem.Problem) are returned as they are: the server's
// interceptor (pkg/rpc) carries them over the wire.
package grpcapi

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
	"github.com/ledgerlane/platform/services/jobs"
	"github.com/ledgerlane/platform/services/jobs/convertclient"
)

type jobServer struct {
	jobsv1.UnimplementedJobServiceServer
	svc *jobs.Service
}

type webhookServer struct {
	jobsv1.UnimplementedWebhookServiceServer
	svc *jobs.Service
}

// Register adds the jobs service's gRPC services to s.
func Register(s grpc.ServiceRegistrar, svc *jobs.Service) {
	jobsv1.RegisterJobServiceServer(s, &jobServer{svc: svc})
	jobsv1.RegisterWebhookServiceServer(s, &webhookServer{svc: svc})
}

func caller(ctx context.Context) jobs.Caller {
	p, _ := principal.FromIncoming(ctx)
	return jobs.Caller{AccountID: p.AccountID, Mode: p.Mode, CredentialID: p.CredentialID, IdempotencyKey: p.IdempotencyKey}
}

// tsOrNil leaves unset times out of the message instead of sending 1970.
func tsOrNil(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func jobPB(j jobs.Job) *jobsv1.Job {
	return &jobsv1.Job{
		Id: j.ID, Status: j.Status,
		ItemCount: int32(j.ItemCount), SucceededCount: int32(j.Succeeded), FailedCount: int32(j.Failed), PendingCount: int32(j.Pending),
		CreatedAt:   tsOrNil(j.CreatedAt),
		StartedAt:   tsOrNil(j.StartedAt),
		CompletedAt: tsOrNil(j.CompletedAt),
		ExpiresAt:   tsOrNil(j.ExpiresAt),
		Reference:   j.Reference,
	}
}

func (s *jobServer) CreateBatch(ctx context.Context, req *jobsv1.CreateBatchRequest) (*jobsv1.CreateBatchResponse, error) {
	msgs := make([]string, len(req.GetItems()))
	for i, it := range req.GetItems() {
		msgs[i] = it.GetMessage()
	}
	br := jobs.BatchRequest{To: req.GetTo(), From: req.GetFrom(), Options: convertclient.OptionsFromPB(req.GetOptions()), Messages: msgs, Reference: req.GetReference()}
	if req.TtlSeconds != nil {
		v := req.GetTtlSeconds()
		br.TTLSeconds = &v
	}
	j, err := s.svc.CreateBatch(ctx, caller(ctx), br)
	if err != nil {
		return nil, err
	}
	if j.Replayed {
		if err := rpc.MarkReplayed(ctx); err != nil {
			return nil, err
		}
	}
	return &jobsv1.CreateBatchResponse{Job: jobPB(j)}, nil
}

func (s *jobServer) GetJob(ctx context.Context, req *jobsv1.GetJobRequest) (*jobsv1.GetJobResponse, error) {
	v, err := s.svc.GetJob(ctx, caller(ctx), req.GetId())
	if err != nil {
		return nil, err
	}
	out := jobPB(v.Job)
	out.Items = make([]*jobsv1.JobItem, len(v.Items))
	for i, it := range v.Items {
		pi := &jobsv1.JobItem{Index: int32(it.Index), Status: it.Status, Result: it.Result}
		for _, w := range it.Warnings {
			pi.Warnings = append(pi.Warnings, &conversionv1.Warning{Code: w.Code, Severity: w.Severity, Message: w.Message, Path: w.Path})
		}
		if p := it.Problem; p != nil {
			pi.Problem = &jobsv1.Problem{Type: p.Type, Title: p.Title, Status: int32(p.Status), Detail: p.Detail}
		}
		out.Items[i] = pi
	}
	return &jobsv1.GetJobResponse{Job: out}, nil
}

func (s *jobServer) DeleteJob(ctx context.Context, req *jobsv1.DeleteJobRequest) (*jobsv1.DeleteJobResponse, error) {
	if err := s.svc.DeleteJob(ctx, caller(ctx), req.GetId()); err != nil {
		return nil, err
	}
	return &jobsv1.DeleteJobResponse{}, nil
}

func (s *webhookServer) CreateWebhook(ctx context.Context, req *jobsv1.CreateWebhookRequest) (*jobsv1.CreateWebhookResponse, error) {
	c, err := s.svc.CreateWebhook(ctx, caller(ctx), req.GetUrl())
	if err != nil {
		return nil, err
	}
	return &jobsv1.CreateWebhookResponse{
		Id: c.Endpoint.ID, Url: c.Endpoint.URL, Secret: c.Secret, CreatedAt: timestamppb.New(c.Endpoint.CreatedAt),
	}, nil
}

func (s *webhookServer) ListWebhooks(ctx context.Context, _ *jobsv1.ListWebhooksRequest) (*jobsv1.ListWebhooksResponse, error) {
	es, err := s.svc.ListWebhooks(ctx, caller(ctx))
	if err != nil {
		return nil, err
	}
	out := &jobsv1.ListWebhooksResponse{Endpoints: make([]*jobsv1.WebhookEndpoint, len(es))}
	for i, e := range es {
		out.Endpoints[i] = &jobsv1.WebhookEndpoint{
			Id: e.ID, Url: e.URL, Status: e.Status, CreatedAt: timestamppb.New(e.CreatedAt),
			ConsecutiveFailures: int32(e.ConsecutiveFailures),
		}
	}
	return out, nil
}

func (s *webhookServer) DeleteWebhook(ctx context.Context, req *jobsv1.DeleteWebhookRequest) (*jobsv1.DeleteWebhookResponse, error) {
	if err := s.svc.DeleteWebhook(ctx, caller(ctx), req.GetId()); err != nil {
		return nil, err
	}
	return &jobsv1.DeleteWebhookResponse{}, nil
}
