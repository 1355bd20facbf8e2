package logging_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/ledgerlane/platform/pkg/logging"
)

func TestOrDiscard(t *testing.T) {
	var buf bytes.Buffer
	given := slog.New(slog.NewTextHandler(&buf, nil))
	if logging.OrDiscard(given) != given {
		t.Fatal("a given logger was replaced")
	}
	l := logging.OrDiscard(nil)
	if l == nil || l.Enabled(t.Context(), slog.LevelError) {
		t.Fatal("the default logs")
	}
}
