package gateway

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// backendConn marks every error a backend call returns as the backend's own
// answer. grpc-gateway reports its own failures (a body or query parameter it
// could not decode) through the same error hook; only the backend's 400 and
// 422 are about the message's content and count against quota.
type backendConn struct{ grpc.ClientConnInterface }

func (c backendConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if err := c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...); err != nil {
		return &backendError{err}
	}
	return nil
}

// backendError is an error a backend answered. It implements GRPCStatus
// itself, so status.FromError sees the backend's status unchanged.
type backendError struct{ err error }

func (e *backendError) Error() string              { return e.err.Error() }
func (e *backendError) Unwrap() error              { return e.err }
func (e *backendError) GRPCStatus() *status.Status { return status.Convert(e.err) }

// verdict is what the response writer learns about the answer it carries.
// Admission settles by it: a metered 400 or 422 counts only when the backend
// decided it (contentLevel); anything the edge or grpc-gateway refused does
// not.
type verdict struct {
	contentLevel bool
}

// verdictWriter is a response writer that records the verdict; both writers
// admission hands to a handler are one.
type verdictWriter interface {
	http.ResponseWriter
	verdict() *verdict
}

// markContentLevel records on w, and on every writer it wraps (Unwrap, as
// http.ResponseController looks through them), that its answer came from the
// backend.
func markContentLevel(w http.ResponseWriter) {
	for w != nil {
		if vw, ok := w.(verdictWriter); ok {
			vw.verdict().contentLevel = true
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}
