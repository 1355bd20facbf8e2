package grpcapi_test

import (
	"context"
	"testing"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
)

// The media type of the target travels with each conversion and each format.
func TestMediaType(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for to, want := range map[string]string{"camt.053": "application/xml", "csv": "text/csv", "ofx": "application/x-ofx"} {
		res, err := c.Convert(ctx, &conversionv1.ConvertRequest{To: to, Message: stmt})
		if err != nil {
			t.Fatalf("to %s: %v", to, err)
		}
		if got := res.GetMeta().GetMediaType(); got != want {
			t.Errorf("to %s: media_type %q, want %q", to, got, want)
		}
	}
	f, err := c.ListFormats(ctx, &conversionv1.ListFormatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.GetFormats() {
		if p.GetMediaType() == "" {
			t.Errorf("%s>%s has no media_type", p.GetFrom(), p.GetTo())
		}
		if p.GetTo() == "MT940" && p.GetMediaType() != "text/plain" {
			t.Errorf("MT940: media_type %q", p.GetMediaType())
		}
	}
}
