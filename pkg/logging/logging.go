// Package logging builds the structured slog logger every binary uses.
package logging

import (
	"io"
	"log/slog"
	"os"
	"strings"
)

// New returns a JSON logger at level ("debug", "info", "warn", "error") tagged
// with the service name. Callers must never log secrets or message content.
func New(service, level string) *slog.Logger {
	return NewTo(os.Stderr, service, level)
}

// NewTo is New writing to w.
func NewTo(w io.Writer, service, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(WithTrace(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))).With("service", service)
}

// OrDiscard returns log, or a logger that discards everything when log is
// nil: the default of every Config that takes a logger.
func OrDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}
