// Package grpcapi exposes batch jobs and webhooks over gRPC. It only maps
// between protobuf and the jobs.Service; the rules live in the service. The
// service's errors (*problem.Problem) are returned as they are: the server's
// interceptor (pkg/rpc) carries them over the wire.
package grpcapi

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
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
	c, err := s.svc.CreateWebhook(ctx, caller(ctx), jobs.WebhookSettings{URL: req.GetUrl(), Description: req.GetDescription(), EventTypes: req.GetEventTypes()})
	if err != nil {
		return nil, err
	}
	e := c.Endpoint
	return &jobsv1.CreateWebhookResponse{
		Id: e.ID, Url: e.URL, Secret: c.Secret, CreatedAt: timestamppb.New(e.CreatedAt),
		EventTypes: jobs.EventTypesOf(e), Description: e.Description, Status: e.Status,
	}, nil
}

func endpointPB(e jobs.Endpoint) *jobsv1.WebhookEndpoint {
	out := &jobsv1.WebhookEndpoint{
		Id: e.ID, Url: e.URL, Status: e.Status, CreatedAt: timestamppb.New(e.CreatedAt),
		ConsecutiveFailures: int32(e.ConsecutiveFailures), EventTypes: jobs.EventTypesOf(e), Description: e.Description,
	}
	out.PreviousSecretExpiresAt = tsOrNil(e.PrevSecretUntil) // zero outside a rotation's overlap
	return out
}

func (s *webhookServer) ListWebhooks(ctx context.Context, _ *jobsv1.ListWebhooksRequest) (*jobsv1.ListWebhooksResponse, error) {
	es, err := s.svc.ListWebhooks(ctx, caller(ctx))
	if err != nil {
		return nil, err
	}
	out := &jobsv1.ListWebhooksResponse{Endpoints: make([]*jobsv1.WebhookEndpoint, len(es))}
	for i, e := range es {
		out.Endpoints[i] = endpointPB(e)
	}
	return out, nil
}

func (s *webhookServer) DeleteWebhook(ctx context.Context, req *jobsv1.DeleteWebhookRequest) (*jobsv1.DeleteWebhookResponse, error) {
	if err := s.svc.DeleteWebhook(ctx, caller(ctx), req.GetId()); err != nil {
		return nil, err
	}
	return &jobsv1.DeleteWebhookResponse{}, nil
}

func (s *webhookServer) UpdateWebhook(ctx context.Context, req *jobsv1.UpdateWebhookRequest) (*jobsv1.UpdateWebhookResponse, error) {
	u := jobs.WebhookUpdate{URL: req.Url, Description: req.Description}
	if l := req.GetEventTypes(); l != nil {
		u.SetEventTypes = true
		for i, v := range l.GetValues() {
			str, ok := v.GetKind().(*structpb.Value_StringValue)
			if !ok {
				f := fmt.Sprintf("event_types[%d]", i)
				return nil, problem.New(problem.InvalidInput, f+" must be a string").WithField(f)
			}
			u.EventTypes = append(u.EventTypes, str.StringValue)
		}
	}
	e, err := s.svc.UpdateWebhook(ctx, caller(ctx), req.GetId(), u)
	if err != nil {
		return nil, err
	}
	return &jobsv1.UpdateWebhookResponse{Endpoint: endpointPB(e)}, nil
}

func (s *webhookServer) ListEventTypes(ctx context.Context, _ *jobsv1.ListEventTypesRequest) (*jobsv1.ListEventTypesResponse, error) {
	out := &jobsv1.ListEventTypesResponse{}
	for _, t := range jobs.EventTypes {
		out.EventTypes = append(out.EventTypes, &jobsv1.EventType{Name: t.Name, Description: t.Description, Announced: t.Announced})
	}
	return out, nil
}

func deliveryPB(v jobs.DeliveryView) *jobsv1.WebhookDelivery {
	d := v.Delivery
	out := &jobsv1.WebhookDelivery{
		Id: d.ID, EndpointId: d.EndpointID, EventType: d.Event, EventId: d.EventID, Status: d.Status,
		Origin: d.Origin, ResendOf: d.ResendOf, JobId: d.JobID, CreatedAt: timestamppb.New(d.CreatedAt),
	}
	if d.Status == jobs.DeliveryPending {
		out.NextAttemptAt = tsOrNil(d.NextAttemptAt)
	}
	for _, a := range v.Attempts {
		pa := &jobsv1.DeliveryAttempt{Number: int32(a.N), AttemptedAt: timestamppb.New(a.At), Succeeded: a.Succeeded,
			Failure: a.Failure, DurationMs: int32(a.Duration.Milliseconds()), NextAttemptAt: tsOrNil(a.NextAttemptAt)}
		if a.StatusCode != 0 {
			code := int32(a.StatusCode)
			pa.ResponseStatus = &code
		}
		out.Attempts = append(out.Attempts, pa)
	}
	return out
}

func (s *webhookServer) ListDeliveries(ctx context.Context, req *jobsv1.ListDeliveriesRequest) (*jobsv1.ListDeliveriesResponse, error) {
	p, err := s.svc.ListDeliveries(ctx, caller(ctx), req.GetId(), req.GetStatus(), req.GetCursor(), req.PageSize)
	if err != nil {
		return nil, err
	}
	out := &jobsv1.ListDeliveriesResponse{NextCursor: p.NextCursor, Deliveries: []*jobsv1.WebhookDelivery{}}
	for _, d := range p.Deliveries {
		out.Deliveries = append(out.Deliveries, deliveryPB(d))
	}
	return out, nil
}

func (s *webhookServer) GetDelivery(ctx context.Context, req *jobsv1.GetDeliveryRequest) (*jobsv1.GetDeliveryResponse, error) {
	d, err := s.svc.GetDelivery(ctx, caller(ctx), req.GetId(), req.GetDeliveryId())
	if err != nil {
		return nil, err
	}
	return &jobsv1.GetDeliveryResponse{Delivery: deliveryPB(d)}, nil
}

func (s *webhookServer) ResendDelivery(ctx context.Context, req *jobsv1.ResendDeliveryRequest) (*jobsv1.ResendDeliveryResponse, error) {
	d, err := s.svc.ResendDelivery(ctx, caller(ctx), req.GetId(), req.GetDeliveryId())
	if err != nil {
		return nil, err
	}
	return &jobsv1.ResendDeliveryResponse{Delivery: deliveryPB(d)}, nil
}

func (s *webhookServer) SendTestEvent(ctx context.Context, req *jobsv1.SendTestEventRequest) (*jobsv1.SendTestEventResponse, error) {
	d, err := s.svc.SendTestEvent(ctx, caller(ctx), req.GetId())
	if err != nil {
		return nil, err
	}
	return &jobsv1.SendTestEventResponse{Delivery: deliveryPB(d)}, nil
}

func (s *webhookServer) RotateWebhookSecret(ctx context.Context, req *jobsv1.RotateWebhookSecretRequest) (*jobsv1.RotateWebhookSecretResponse, error) {
	r, err := s.svc.RotateWebhookSecret(ctx, caller(ctx), req.GetId())
	if err != nil {
		return nil, err
	}
	return &jobsv1.RotateWebhookSecretResponse{Id: r.Endpoint.ID, Secret: r.Secret,
		PreviousSecretExpiresAt: timestamppb.New(r.Endpoint.PrevSecretUntil)}, nil
}

func (s *webhookServer) EnableWebhook(ctx context.Context, req *jobsv1.EnableWebhookRequest) (*jobsv1.EnableWebhookResponse, error) {
	e, err := s.svc.EnableWebhook(ctx, caller(ctx), req.GetId())
	if err != nil {
		return nil, err
	}
	return &jobsv1.EnableWebhookResponse{Endpoint: endpointPB(e)}, nil
}
