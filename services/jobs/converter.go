package jobs

import (
	"context"
	"errors"
)

// Converter converts one item. convertclient implements it over the
// converter service's gRPC API.
//
// Errors: one wrapping ErrConverterUnavailable is transient (the converter is
// unreachable, overloaded or out of time) and the item is retried; a
// *problem.Problem is the converter's verdict on the item (bad input,
// unknown format, strict loss) and fails it with that problem document; any
// other error fails it as internal.
type Converter interface {
	Convert(ctx context.Context, req ConvertRequest) (Conversion, error)
}

// ConvertRequest is one item's conversion, made as the job's tenant.
type ConvertRequest struct {
	// AccountID and Mode are the tenant the converter meters and logs the
	// call for; RequestID correlates its logs with the job.
	AccountID, Mode, RequestID string
	// From is empty for auto-detection.
	From, To string
	// Message is the item's plaintext.
	Message string
	Options Options
}

// Conversion is a converter's answer.
type Conversion struct {
	// Pages of output (one for most targets; MT output may be paged).
	Pages    []string
	Warnings []Warning
}

// ErrConverterUnavailable marks a converter failure worth retrying.
var ErrConverterUnavailable = errors.New("jobs: converter unavailable")
