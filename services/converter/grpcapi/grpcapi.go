// Package grpcapi exposes the converter over gRPC.
package grpcapi

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

type conversionServer struct {
	conversionv1.UnimplementedConversionServiceServer
	eng *engine.Engine
	// fromNames and toNames map lower-cased format names to the engine's
	// spelling: the metrics' label values (metrics.go).
	fromNames, toNames map[string]string
}

func newConversionServer(eng *engine.Engine) conversionServer {
	from, to := formatNames(eng)
	return conversionServer{eng: eng, fromNames: from, toNames: to}
}

// Register adds the converter's services to s, converting with eng
// (builtin.Engine in the service). Methods not built yet answer
// codes.Unimplemented, which the gateway turns into 501 not-implemented.
// (conversion.v1.AccountingConnectionService is the jobs service's.)
func Register(s grpc.ServiceRegistrar, eng *engine.Engine) {
	conversionv1.RegisterConversionServiceServer(s, newConversionServer(eng))
	conversionv1.RegisterStatementServiceServer(s, statementServer{eng: eng})
}

func (c conversionServer) Convert(_ context.Context, req *conversionv1.ConvertRequest) (*conversionv1.ConvertResponse, error) {
	opts := optionsOf(req.GetOptions())
	if err := engine.ValidateOptions(opts); err != nil {
		c.observeConvert(req, nil, err, 0)
		return nil, toProblem(err)
	}
	input := req.GetRaw()
	if len(input) == 0 {
		input = []byte(req.GetMessage())
	}
	if len(input) == 0 {
		c.observeConvert(req, nil, errEmptyMessage, 0)
		return nil, problem.New(problem.InvalidInput, "message is empty").WithField("message")
	}
	res, err := c.eng.Convert(engine.Request{Input: input, From: req.GetFrom(), To: req.GetTo(), Options: opts})
	c.observeConvert(req, res, err, len(input))
	if err != nil {
		return nil, toProblem(err)
	}
	out := &conversionv1.ConvertResponse{
		Result: res.Pages,
		Meta: &conversionv1.ConvertMeta{
			DetectedType: res.DetectedType, DetectedVersion: res.DetectedVersion,
			TargetType: res.TargetType, DurationMs: int32(res.Duration.Milliseconds()), Pages: int32(len(res.Pages)),
			MediaType: res.MediaType,
		},
	}
	out.Warnings = warningsOf(res.Warnings)
	return out, nil
}

func (c conversionServer) ListFormats(context.Context, *conversionv1.ListFormatsRequest) (*conversionv1.ListFormatsResponse, error) {
	out := &conversionv1.ListFormatsResponse{}
	for _, f := range c.eng.Formats() {
		out.Formats = append(out.Formats, &conversionv1.Format{From: f.From, To: f.To, Versions: f.Versions, Options: f.Options, MediaType: f.MediaType})
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
func toProblem(err error) *problem.Problem {
	var pe *statement.ParseError
	var fe *engine.FieldError
	var se *engine.StrictError
	switch {
	case errors.As(err, &pe):
		return problem.New(problem.InvalidInput, pe.Error()).WithField("message")
	case errors.As(err, &fe):
		return problem.New(problem.InvalidInput, fe.Error()).WithField(fe.Field)
	case errors.As(err, &se):
		return problem.New(problem.Unprocessable, se.Error())
	case errors.Is(err, engine.ErrUndetectable):
		return problem.New(problem.InvalidInput, err.Error()+": name it with from").WithField("from")
	case errors.Is(err, engine.ErrUnsupported):
		return problem.New(problem.InvalidInput, err.Error()+"; see GET /v1/formats").WithField("to")
	}
	return problem.New(problem.Internal, "")
}
