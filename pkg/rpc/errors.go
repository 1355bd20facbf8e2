package rpc

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
)

// This file is the one place where problems cross gRPC (docs/errors.md):
// the server interceptor NewServer installs turns a *problem.Problem a
// handler returns into a status error (Status), and Problem turns a status
// error back into a *problem.Problem for the gateway and for service clients.

// domain marks the ErrorInfo details written by Status.
const domain = "ledgerlane"

var codeOf = map[problem.Type]codes.Code{
	problem.InvalidInput:        codes.InvalidArgument,
	problem.Unauthorized:        codes.Unauthenticated,
	problem.ForbiddenScope:      codes.PermissionDenied,
	problem.WritesDisabled:      codes.PermissionDenied,
	problem.FieldHidden:         codes.PermissionDenied,
	problem.DataExcluded:        codes.PermissionDenied,
	problem.NotFound:            codes.NotFound,
	problem.MethodNotAllowed:    codes.Unimplemented,
	problem.NotAcceptable:       codes.InvalidArgument,
	problem.VersionConflict:     codes.Aborted,
	problem.SplitTransaction:    codes.FailedPrecondition,
	problem.NoProviderValue:     codes.FailedPrecondition,
	problem.CategoryLimit:       codes.FailedPrecondition,
	problem.SystemCategory:      codes.FailedPrecondition,
	problem.CategoryHasChildren: codes.FailedPrecondition,
	problem.IdempotencyConflict: codes.AlreadyExists,
	problem.IdempotencyInFlight: codes.Aborted,
	problem.Conflict:            codes.FailedPrecondition,
	problem.DirectDebitRequired: codes.FailedPrecondition,
	problem.MessageTooLarge:     codes.ResourceExhausted,
	problem.FieldImmutable:      codes.InvalidArgument,
	problem.Unprocessable:       codes.InvalidArgument,
	problem.RateLimited:         codes.ResourceExhausted,
	problem.QuotaExceeded:       codes.ResourceExhausted,
	problem.Internal:            codes.Internal,
	problem.NotImplemented:      codes.Unimplemented,
	problem.Unavailable:         codes.Unavailable,
	problem.BatchUnavailable:    codes.Unavailable,
	problem.SyncCursorExpired:   codes.OutOfRange,
	problem.AuthorizationFailed: codes.InvalidArgument,
	problem.ConnectionInactive:  codes.FailedPrecondition,
	problem.PlatformRejected:    codes.FailedPrecondition,
	problem.PlatformUnavailable: codes.Unavailable,
}

// Status is p's wire form: a status error with the gRPC code of p's type,
// p.Detail as its message, and an ErrorInfo detail (reason: the type,
// domain "ledgerlane", metadata "field" and "retry_after") from which Problem
// rebuilds p exactly. A nil p gives nil.
//
// Handlers need not call it: the interceptor of NewServer applies it to every
// *problem.Problem they return. It is for code that answers gRPC without that
// interceptor (a fake client in a test, a handler registered in process).
func Status(p *problem.Problem) error {
	if p == nil {
		return nil
	}
	md := map[string]string{}
	if p.Field != "" {
		md["field"] = p.Field
	}
	if p.RetryAfter > 0 {
		md["retry_after"] = strconv.Itoa(p.RetryAfter)
	}
	code, ok := codeOf[p.Type]
	if !ok {
		code = codes.Internal
	}
	st := status.New(code, p.Detail)
	if withInfo, err := st.WithDetails(&errdetails.ErrorInfo{Reason: string(p.Type), Domain: domain, Metadata: md}); err == nil {
		st = withInfo
	}
	return st.Err()
}

// CarriesProblem reports whether st carries a problem a service raised (as
// Status writes it), as opposed to an error gRPC or grpc-gateway raised
// itself.
func CarriesProblem(st *status.Status) bool {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == domain {
			return true
		}
	}
	return false
}

// Problem turns any error (normally a status error from a backend) into a
// problem; nil gives nil. A *problem.Problem in err's chain is returned as a
// copy. A status error Status built gives back its problem; any other status
// error is classified by its code. An internal error never exposes its
// message.
func Problem(err error) *problem.Problem {
	if err == nil {
		return nil
	}
	var pe *problem.Problem
	if errors.As(err, &pe) {
		cp := *pe
		return &cp
	}
	st, ok := status.FromError(err)
	if !ok {
		return problem.New(problem.Internal, "")
	}
	for _, d := range st.Details() {
		info, ok := d.(*errdetails.ErrorInfo)
		if !ok || info.GetDomain() != domain {
			continue
		}
		t := problem.Type(info.GetReason())
		if !t.Known() {
			break
		}
		p := problem.New(t, st.Message())
		p.Field = info.GetMetadata()["field"]
		if ra, err := strconv.Atoi(info.GetMetadata()["retry_after"]); err == nil {
			p.RetryAfter = ra
		}
		if t == problem.Internal {
			p.Detail = ""
		}
		return p
	}
	switch st.Code() {
	case codes.InvalidArgument:
		return problem.New(problem.InvalidInput, st.Message())
	case codes.NotFound:
		return problem.New(problem.NotFound, st.Message())
	case codes.Unauthenticated:
		return problem.New(problem.Unauthorized, "")
	case codes.PermissionDenied:
		return problem.New(problem.ForbiddenScope, st.Message())
	case codes.Unimplemented:
		return problem.New(problem.NotImplemented, "this route is part of the contract but is not built yet")
	case codes.Unavailable, codes.DeadlineExceeded:
		return problem.New(problem.Unavailable, "a backend service did not answer")
	case codes.Canceled:
		return problem.New(problem.Unavailable, "request canceled")
	case codes.AlreadyExists, codes.Aborted, codes.FailedPrecondition:
		return problem.New(problem.Conflict, st.Message())
	case codes.ResourceExhausted:
		return problem.New(problem.RateLimited, st.Message())
	default:
		return problem.New(problem.Internal, "")
	}
}

// problemUnary is the error interceptor of every server NewServer builds; it
// runs innermost, so the logging and metrics interceptors see the code the
// client gets.
func problemUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err != nil {
			return nil, wireError(ctx, log, info.FullMethod, err)
		}
		return resp, nil
	}
}

// problemStream is problemUnary for streaming methods.
func problemStream(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if err := h(srv, ss); err != nil {
			return wireError(ss.Context(), log, info.FullMethod, err)
		}
		return nil
	}
}

// wireError is what a handler's error becomes on the wire:
//   - a *problem.Problem anywhere in its chain: Status of it (an
//     unavailable one wrapped with its cause, as pg.Error makes them, is
//     logged with that cause);
//   - a status error: unchanged;
//   - the call's own context error (the caller left or its deadline passed):
//     Canceled or DeadlineExceeded, as gRPC itself answers them;
//   - anything else: logged here with the request id, and answered as an
//     internal problem that carries nothing of it.
func wireError(ctx context.Context, log *slog.Logger, method string, err error) error {
	var p *problem.Problem
	if errors.As(err, &p) {
		if p.Type == problem.Unavailable && error(p) != err {
			// A store's unavailability (pg.Error) reaches here with its
			// cause, which the caller never sees: the log keeps it.
			pr, _ := principal.FromIncoming(ctx)
			log.WarnContext(ctx, "dependency unavailable", "method", method, "request_id", pr.RequestID, "err", err)
		}
		return Status(p)
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return status.FromContextError(err).Err()
	}
	pr, _ := principal.FromIncoming(ctx)
	log.ErrorContext(ctx, "internal error", "method", method, "request_id", pr.RequestID, "err", err)
	return Status(problem.New(problem.Internal, ""))
}
