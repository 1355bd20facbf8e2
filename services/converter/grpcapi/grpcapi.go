// Package grpcapi exposes the converter over gRPC.
package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	_ "github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
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

func (conversionServer) Convert(_ context.Context, req *conversionv1.ConvertRequest) (*conversionv1.ConvertResponse, error) {
	opts := optionsOf(req.GetOptions())
	if err := engine.ValidateOptions(opts); err != nil {
		observeConvert(req, nil, err, 0)
		return nil, toProblem(err)
	}
	input := req.GetRaw()
	if len(input) == 0 {
		input = []byte(req.GetMessage())
	}
	if len(input) == 0 {
		observeConvert(req, nil, errEmptyMessage, 0)
		return nil, problem.Error(problem.InvalidInput, "message is empty", problem.Field("message"))
	}
	res, err := engine.Convert(engine.Request{Input: input, From: req.GetFrom(), To: req.GetTo(), Options: opts})
	observeConvert(req, res, err, len(input))
	if err != nil {
		return nil, toProblem(err)
	}
	out := &conversionv1.ConvertResponse{
		Result: res.Pages,
		Meta: &conversionv1.ConvertMeta{
			DetectedType: res.DetectedType, DetectedVersion: res.DetectedVersion,
			TargetType: res.TargetType, DurationMs: int32(res.Duration.Milliseconds()), Pages: int32(len(res.Pages)),
		},
	}
	out.Warnings = warningsOf(res.Warnings)
	return out, nil
}

func (conversionServer) ListFormats(context.Context, *conversionv1.ListFormatsRequest) (*conversionv1.ListFormatsResponse, error) {
	out := &conversionv1.ListFormatsResponse{}
	for _, f := range engine.Formats() {
		out.Formats = append(out.Formats, &conversionv1.Format{From: f.From, To: f.To, Versions: f.Versions, Options: f.Options})
	}
	return out, nil
}

func optionsOf(o *conversionv1.Options) statement.Options {
	return statement.Options{
		TranslitProfile: o.GetTranslitProfile(), Field86Profile: o.GetField86Profile(), Strict: o.GetStrict(),
		TargetVersion: o.GetTargetVersion(), DateFormat: o.GetDateFormat(), OFXVersion: o.GetOfxVersion(), IntuBid: o.GetIntuBid(),
	}
}

func warningsOf(ws []statement.Warning) []*conversionv1.Warning {
	out := make([]*conversionv1.Warning, 0, len(ws))
	for _, w := range ws {
		out = append(out, &conversionv1.Warning{Code: w.Code, Severity: w.Severity, Message: w.Message, Path: w.Path})
	}
	return out
}

// toProblem maps engine errors to problem types: input faults are 400 naming
// where they are, strict-mode losses 422.
func toProblem(err error) error {
	var pe *statement.ParseError
	var fe *engine.FieldError
	var se *engine.StrictError
	switch {
	case errors.As(err, &pe):
		return problem.Error(problem.InvalidInput, pe.Error(), problem.Field("message"))
	case errors.As(err, &fe):
		return problem.Error(problem.InvalidInput, fe.Error(), problem.Field(fe.Field))
	case errors.As(err, &se):
		return problem.Error(problem.Unprocessable, se.Error())
	case errors.Is(err, engine.ErrUndetectable):
		return problem.Error(problem.InvalidInput, err.Error()+": name it with from", problem.Field("from"))
	case errors.Is(err, engine.ErrUnsupported):
		return problem.Error(problem.InvalidInput, err.Error()+"; see GET /v1/formats", problem.Field("to"))
	}
	return problem.Error(problem.Internal, "")
}
