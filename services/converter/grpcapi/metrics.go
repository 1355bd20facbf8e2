package grpcapi

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	conversionv1 "github.com/ledgerlane/platform/proto/conversion/v1"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Conversion metrics, on the default registry (served by pkg/rpc's
// METRICS_ADDR endpoint). Label values come only from fixed sets: format
// names from the engine's formats, "other" for a name the engine does not
// know, "unknown" when the source was neither named nor detected.
var (
	conversionsTotal = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_converter_conversions_total",
		Help: "Convert calls by source format, target format and outcome (ok, parse_error, strict, unsupported, invalid_options, error).",
	}, []string{"from", "to", "outcome"})
	conversionDuration = promauto.With(prometheus.DefaultRegisterer).NewHistogramVec(prometheus.HistogramOpts{
		Name:    "ledgerlane_converter_conversion_duration_seconds",
		Help:    "Engine time of successful conversions by source and target format.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"from", "to"})
	inputBytesTotal = promauto.With(prometheus.DefaultRegisterer).NewCounterVec(prometheus.CounterOpts{
		Name: "ledgerlane_converter_input_bytes_total",
		Help: "Bytes of input handed to the conversion engine, by source format.",
	}, []string{"from"})
)

// Outcome label values.
const (
	outcomeOK             = "ok"
	outcomeParseError     = "parse_error"
	outcomeStrict         = "strict"
	outcomeUnsupported    = "unsupported"
	outcomeInvalidOptions = "invalid_options"
	outcomeError          = "error"
)

// formatNames maps lower-cased source and target names to eng's spelling.
func formatNames(eng *engine.Engine) (from, to map[string]string) {
	from, to = map[string]string{}, map[string]string{}
	for _, f := range eng.Formats() {
		from[strings.ToLower(f.From)] = f.From
		to[strings.ToLower(f.To)] = f.To
	}
	return from, to
}

func labelFor(names map[string]string, requested string) string {
	if requested == "" {
		return "unknown"
	}
	if n, ok := names[strings.ToLower(requested)]; ok {
		return n
	}
	return "other"
}

// observeConvert records one Convert call; res is nil when err is not.
// inputBytes is zero when the engine was not reached.
func (c conversionServer) observeConvert(req *conversionv1.ConvertRequest, res *engine.Result, err error, inputBytes int) {
	fromNames, toNames := c.fromNames, c.toNames
	from, to := labelFor(fromNames, req.GetFrom()), labelFor(toNames, req.GetTo())
	if res != nil {
		from, to = labelFor(fromNames, res.DetectedType), labelFor(toNames, res.TargetType)
	}
	outcome := outcomeOf(err)
	conversionsTotal.WithLabelValues(from, to, outcome).Inc()
	if inputBytes > 0 {
		inputBytesTotal.WithLabelValues(from).Add(float64(inputBytes))
	}
	if outcome == outcomeOK && res != nil {
		conversionDuration.WithLabelValues(from, to).Observe(res.Duration.Seconds())
	}
}

// outcomeOf classifies a Convert error. An undetectable source counts as
// unsupported (with from "unknown"); an empty message as parse_error.
func outcomeOf(err error) string {
	if err == nil {
		// Before the targets below: errors.As makes each escape, so
		// declaring them costs three allocations on every successful call.
		return outcomeOK
	}
	var pe *statement.ParseError
	var fe *engine.FieldError
	var se *engine.StrictError
	switch {
	case errors.Is(err, errEmptyMessage), errors.As(err, &pe):
		return outcomeParseError
	case errors.As(err, &se):
		return outcomeStrict
	case errors.Is(err, engine.ErrUnsupported), errors.Is(err, engine.ErrUndetectable):
		return outcomeUnsupported
	case errors.As(err, &fe):
		return outcomeInvalidOptions
	}
	return outcomeError
}

// errEmptyMessage stands for an empty message in observeConvert.
var errEmptyMessage = errors.New("message is empty")
