package problem

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestToGRPC(t *testing.T) {
	if ToGRPC(nil) != nil {
		t.Fatal("nil must stay nil")
	}
	plain := errors.New("boom")
	if ToGRPC(plain) != plain {
		t.Fatal("a plain error must pass through")
	}
	st := status.Error(codes.NotFound, "x")
	if ToGRPC(st) != st {
		t.Fatal("a status error must pass through")
	}
	p := New(RateLimited, "slow down").WithField("f")
	p.RetryAfter = 3
	err := ToGRPC(fmt.Errorf("wrapped: %w", p))
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("code %v", status.Code(err))
	}
	if got := FromError(err); *got != *p {
		t.Fatalf("round trip: %+v, want %+v", got, p)
	}
	// The same status error as Error builds directly.
	want := FromError(Error(InvalidInput, "bad", Field("to")))
	if got := FromError(ToGRPC(New(InvalidInput, "bad").WithField("to"))); *got != *want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
