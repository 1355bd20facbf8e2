// Package grpcapi exposes the converter over gRPC.
package grpcapi

import (
	"google.golang.org/grpc"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
)

type conversionServer struct {
	conversionv1.UnimplementedConversionServiceServer
}

type connectionServer struct {
	conversionv1.UnimplementedAccountingConnectionServiceServer
}

// Register adds the converter's services to s. Methods not built yet answer
// codes.Unimplemented, which the gateway turns into 501 not-implemented.
func Register(s grpc.ServiceRegistrar) {
	conversionv1.RegisterConversionServiceServer(s, &conversionServer{})
	conversionv1.RegisterAccountingConnectionServiceServer(s, &connectionServer{})
}
