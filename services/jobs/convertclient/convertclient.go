// Package convertclient is the jobs.Converter over the converter service's
// gRPC API: it calls conversion.v1.ConversionService/Convert as the job's
// tenant and classifies its errors for the workers.
package convertclient

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/rpc"
	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/jobs"
)

// Client is the part of conversionv1.ConversionServiceClient used; tests
// substitute a fake.
type Client interface {
	Convert(ctx context.Context, in *conversionv1.ConvertRequest, opts ...grpc.CallOption) (*conversionv1.ConvertResponse, error)
}

// Converter implements jobs.Converter on a Client.
type Converter struct {
	c Client
}

var _ jobs.Converter = (*Converter)(nil)

// New returns a Converter calling c.
func New(c Client) *Converter { return &Converter{c: c} }

// Convert calls the converter with the tenant's principal: account and mode
// as given, the conversion surface and the convert scope (the gateway checked
// it when the batch was accepted). Transport trouble (unavailable, deadline,
// canceled, resource exhausted, aborted) wraps jobs.ErrConverterUnavailable;
// any other error is returned as the *problem.Problem it carries (rpc.Problem).
func (c *Converter) Convert(ctx context.Context, req jobs.ConvertRequest) (jobs.Conversion, error) {
	ctx = principal.Outgoing(ctx, principal.Principal{
		AccountID: req.AccountID, Mode: req.Mode, Surface: principal.SurfaceConversion, Scopes: []string{"convert"},
		RequestID: req.RequestID,
	})
	resp, err := c.c.Convert(ctx, &conversionv1.ConvertRequest{
		From: req.From, To: req.To, Message: req.Message, Options: OptionsPB(req.Options),
	})
	if err != nil {
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
			return jobs.Conversion{}, fmt.Errorf("%w: %w", jobs.ErrConverterUnavailable, err)
		}
		return jobs.Conversion{}, rpc.Problem(err)
	}
	out := jobs.Conversion{Pages: resp.GetResult()}
	for _, w := range resp.GetWarnings() {
		out.Warnings = append(out.Warnings, jobs.Warning{Code: w.GetCode(), Severity: w.GetSeverity(), Message: w.GetMessage(), Path: w.GetPath()})
	}
	return out, nil
}

// OptionsPB is o as conversion.v1.Options; nil for the zero value. Strict
// travels only when set: the converter reads unset as false.
func OptionsPB(o jobs.Options) *conversionv1.Options {
	if o.IsZero() {
		return nil
	}
	pb := &conversionv1.Options{
		TranslitProfile: o.TranslitProfile, Field86Profile: o.Field86Profile, TargetVersion: o.TargetVersion,
		DateFormat: o.DateFormat, OfxVersion: o.OFXVersion, IntuBid: o.IntuBID,
	}
	if o.Strict {
		pb.Strict = &o.Strict
	}
	return pb
}

// OptionsFromPB is the inverse of OptionsPB; nil gives the zero value.
func OptionsFromPB(pb *conversionv1.Options) jobs.Options {
	return jobs.Options{
		TranslitProfile: pb.GetTranslitProfile(), Field86Profile: pb.GetField86Profile(), Strict: pb.GetStrict(),
		TargetVersion: pb.GetTargetVersion(), DateFormat: pb.GetDateFormat(), OFXVersion: pb.GetOfxVersion(), IntuBID: pb.GetIntuBid(),
	}
}
