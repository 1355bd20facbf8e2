// Package grpcapi exposes batch jobs and webhooks over gRPC.
package grpcapi

import (
	"google.golang.org/grpc"

	jobsv1 "github.com/ledgerlane/platform/proto/jobs/v1"
)

type jobServer struct {
	jobsv1.UnimplementedJobServiceServer
}

type webhookServer struct {
	jobsv1.UnimplementedWebhookServiceServer
}

// Register adds the jobs service's gRPC services to s.
func Register(s grpc.ServiceRegistrar) {
	jobsv1.RegisterJobServiceServer(s, &jobServer{})
	jobsv1.RegisterWebhookServiceServer(s, &webhookServer{})
}
