package problem

import (
	"errors"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// domain marks ErrorInfo details written by this package.
const domain = "ledgerlane"

var codeOf = map[Type]codes.Code{
	InvalidInput:        codes.InvalidArgument,
	Unauthorized:        codes.Unauthenticated,
	ForbiddenScope:      codes.PermissionDenied,
	WritesDisabled:      codes.PermissionDenied,
	FieldHidden:         codes.PermissionDenied,
	DataExcluded:        codes.PermissionDenied,
	NotFound:            codes.NotFound,
	MethodNotAllowed:    codes.Unimplemented,
	NotAcceptable:       codes.InvalidArgument,
	VersionConflict:     codes.Aborted,
	SplitTransaction:    codes.FailedPrecondition,
	NoProviderValue:     codes.FailedPrecondition,
	CategoryLimit:       codes.FailedPrecondition,
	SystemCategory:      codes.FailedPrecondition,
	CategoryHasChildren: codes.FailedPrecondition,
	IdempotencyConflict: codes.AlreadyExists,
	IdempotencyInFlight: codes.Aborted,
	Conflict:            codes.FailedPrecondition,
	MessageTooLarge:     codes.ResourceExhausted,
	FieldImmutable:      codes.InvalidArgument,
	Unprocessable:       codes.InvalidArgument,
	RateLimited:         codes.ResourceExhausted,
	QuotaExceeded:       codes.ResourceExhausted,
	Internal:            codes.Internal,
	NotImplemented:      codes.Unimplemented,
	Unavailable:         codes.Unavailable,
	BatchUnavailable:    codes.Unavailable,
}

// Option adds an extension member to a problem carried over gRPC.
type Option func(map[string]string)

// Field names the offending request member (e.g. "expected_version").
func Field(name string) Option { return func(m map[string]string) { m["field"] = name } }

// RetryAfter asks the client to wait the given seconds.
func RetryAfter(seconds int) Option {
	return func(m map[string]string) { m["retry_after"] = strconv.Itoa(seconds) }
}

// Error returns a gRPC status error that carries type t, so the gateway answers
// exactly that problem document. detail is shown to the client: it must never
// carry message content or secrets.
func Error(t Type, detail string, opts ...Option) error {
	md := map[string]string{}
	for _, o := range opts {
		o(md)
	}
	code, ok := codeOf[t]
	if !ok {
		code = codes.Internal
	}
	st := status.New(code, detail)
	if withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: string(t), Domain: domain, Metadata: md}); err == nil {
		st = withInfo
	}
	return st.Err()
}

// FromError turns any error (normally a gRPC status from a backend) into a
// problem. Errors that carry no problem type are classified by gRPC code; an
// internal error never exposes its message.
func FromError(err error) *Problem {
	if err == nil {
		return nil
	}
	var pe *Problem
	if errors.As(err, &pe) {
		cp := *pe
		return &cp
	}
	st, ok := status.FromError(err)
	if !ok {
		return New(Internal, "")
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetDomain() != domain {
			continue
		}
		t := Type(info.GetReason())
		if !t.Known() {
			break
		}
		p := New(t, st.Message())
		p.Field = info.GetMetadata()["field"]
		if ra, err := strconv.Atoi(info.GetMetadata()["retry_after"]); err == nil {
			p.RetryAfter = ra
		}
		if t == Internal {
			p.Detail = ""
		}
		return p
	}
	switch st.Code() {
	case codes.InvalidArgument:
		return New(InvalidInput, st.Message())
	case codes.NotFound:
		return New(NotFound, st.Message())
	case codes.Unauthenticated:
		return New(Unauthorized, "")
	case codes.PermissionDenied:
		return New(ForbiddenScope, st.Message())
	case codes.Unimplemented:
		return New(NotImplemented, "this route is part of the contract but is not built yet")
	case codes.Unavailable, codes.DeadlineExceeded:
		return New(Unavailable, "a backend service did not answer")
	case codes.Canceled:
		return New(Unavailable, "request canceled")
	case codes.AlreadyExists, codes.Aborted, codes.FailedPrecondition:
		return New(Conflict, st.Message())
	case codes.ResourceExhausted:
		return New(RateLimited, st.Message())
	default:
		return New(Internal, "")
	}
}

// ToGRPC turns a *Problem, as plain-Go service roots return them, into the
// status error Error builds for it, so that it survives the wire. Any other
// error (a status error included) and nil pass through unchanged.
func ToGRPC(err error) error {
	var p *Problem
	if err == nil || !errors.As(err, &p) {
		return err
	}
	var opts []Option
	if p.Field != "" {
		opts = append(opts, Field(p.Field))
	}
	if p.RetryAfter > 0 {
		opts = append(opts, RetryAfter(p.RetryAfter))
	}
	return Error(p.Type, p.Detail, opts...)
}
