package grpcapi

import (
	"context"
	"errors"
	"strings"

	"github.com/ledgerlane/platform/pkg/problem"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Validate reports whether the message reads as its format; an invalid
// message is a successful answer with valid=false and its findings.
func (c conversionServer) Validate(_ context.Context, req *conversionv1.ValidateRequest) (*conversionv1.ValidateResponse, error) {
	opts, err := checkRequest(req.GetMessage(), req.GetOptions())
	if err != nil {
		return nil, err
	}
	v, err := c.eng.Validate([]byte(req.GetMessage()), req.GetFrom(), opts)
	if err != nil {
		return nil, sourceProblem(err)
	}
	issues := func(in []engine.Issue) []*conversionv1.ValidationIssue {
		out := make([]*conversionv1.ValidationIssue, 0, len(in))
		for _, is := range in {
			out = append(out, &conversionv1.ValidationIssue{Code: is.Code, Severity: is.Severity, Message: is.Message, Path: is.Path, Line: int32(is.Line)})
		}
		return out
	}
	return &conversionv1.ValidateResponse{
		Valid: v.Valid, DetectedType: v.DetectedType, DetectedVersion: v.DetectedVersion,
		Errors: issues(v.Errors), Warnings: issues(v.Warnings),
	}, nil
}

// Normalize rewrites the message in its own format (engine.Normalize).
func (c conversionServer) Normalize(_ context.Context, req *conversionv1.NormalizeRequest) (*conversionv1.NormalizeResponse, error) {
	opts, err := checkRequest(req.GetMessage(), req.GetOptions())
	if err != nil {
		return nil, err
	}
	res, err := c.eng.Normalize([]byte(req.GetMessage()), req.GetFrom(), opts)
	if err != nil {
		return nil, sourceProblem(err)
	}
	// MT pages are one multi-message file again.
	return &conversionv1.NormalizeResponse{
		Message: strings.Join(res.Pages, "\r\n"), DetectedType: res.DetectedType, DetectedVersion: res.DetectedVersion,
		Warnings: warningsOf(res.Warnings),
	}, nil
}

// checkRequest validates what Validate and Normalize share: the options
// and a message to work on.
func checkRequest(message string, o *conversionv1.Options) (statement.Options, error) {
	opts := optionsOf(o)
	if err := engine.ValidateOptions(opts); err != nil {
		return opts, toProblem(err)
	}
	if message == "" {
		return opts, problem.New(problem.InvalidInput, "message is empty").WithField("message")
	}
	return opts, nil
}

// sourceProblem is toProblem for calls without a target: an unsupported
// format is the source's fault.
func sourceProblem(err error) *problem.Problem {
	if errors.Is(err, engine.ErrUnsupported) {
		return problem.New(problem.InvalidInput, err.Error()+"; see GET /v1/formats").WithField("from")
	}
	return toProblem(err)
}

// Enrich lists the message's BICs and IBANs with what their structure
// tells; the message itself comes back as given. There is no bank
// directory: institution names, cities and the BIC behind an IBAN are left
// empty (docs/conversion-formats.md).
func (c conversionServer) Enrich(_ context.Context, req *conversionv1.EnrichRequest) (*conversionv1.EnrichResponse, error) {
	opts, err := checkRequest(req.GetMessage(), req.GetOptions())
	if err != nil {
		return nil, err
	}
	e, err := c.eng.Enrich([]byte(req.GetMessage()), req.GetFrom(), opts)
	if err != nil {
		return nil, sourceProblem(err)
	}
	out := &conversionv1.EnrichResponse{
		Message: req.GetMessage(), DetectedType: e.DetectedType, DetectedVersion: e.DetectedVersion,
		Warnings: warningsOf(e.Warnings),
	}
	for _, b := range e.BICs {
		out.Bics = append(out.Bics, &conversionv1.BicDetails{Bic: b.Value, Path: b.Path, Valid: b.Valid, CountryCode: b.CountryCode})
	}
	for _, i := range e.IBANs {
		out.Ibans = append(out.Ibans, &conversionv1.IbanDetails{Iban: i.Value, Path: i.Path, Valid: i.Valid, CountryCode: i.CountryCode, BankCode: i.BankCode})
	}
	return out, nil
}
