// Package engine is the conversion engine: an Engine is built from the
// parsers (source formats), renderers (target formats) and detectors that
// format packages provide over the statement model (New), and detects,
// converts, validates, normalizes and enriches with them. Nothing registers
// itself: package builtin lists the formats the service ships. It has no gRPC
// or HTTP imports; grpcapi and the command-line converter both call it.
package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// Parser reads one source format.
type Parser struct {
	// Type is the format name clients send as `from` ("MT940", "camt.053").
	Type string
	// Versions this parser reads ("camt.053.001.02", …); empty for MT.
	Versions []string
	// Parse reads every statement in input. version is the detected version
	// (may be empty). Fatal faults are *statement.ParseError.
	Parse func(input []byte, version string, opts statement.Options) ([]*statement.Statement, []statement.Warning, error)
	// ParsePayments reads every payment in input (the payment model). A
	// parser has Parse or ParsePayments, never both: the model it produces
	// decides which renderers can take its output.
	ParsePayments func(input []byte, version string, opts statement.Options) ([]*payment.Payment, []statement.Warning, error)
}

// Renderer writes one target format.
type Renderer struct {
	// Type is the format name clients send as `to` ("MT940", "camt.053", "csv").
	Type string
	// MediaType is the media type of a rendered document ("text/plain",
	// "application/xml", "text/csv", …): what a bare document is served as.
	MediaType string
	// Versions the renderer can pin with targetVersion; DefaultVersion when
	// none is asked for. Empty for formats without versions.
	Versions       []string
	DefaultVersion string
	// Options lists the option names (wire spelling) that affect this target.
	Options []string
	// Accepts lists the source types this target can be made from.
	Accepts []string
	// Refuses names source types this target does not convert although a
	// client may expect it to, each with the reason and what to use
	// instead: Convert answers with it rather than with a bare
	// unsupported pair. Keys are type names as Accepts spells them.
	Refuses map[string]string
	// Render returns one or more pages (MT paging) for the statements.
	Render func(stmts []*statement.Statement, version string, opts statement.Options) ([]string, []statement.Warning, error)
	// RenderPayments writes payments (the payment model), one page per
	// message. A renderer has Render or RenderPayments, never both.
	RenderPayments func(ps []*payment.Payment, version string, opts statement.Options) ([]string, []statement.Warning, error)
}

// parsed is what a parser read: statements or payments.
type parsed struct {
	stmts []*statement.Statement
	pays  []*payment.Payment
}

func (p Parser) parse(input []byte, version string, opts statement.Options) (parsed, []statement.Warning, error) {
	if p.ParsePayments != nil {
		pays, warns, err := p.ParsePayments(input, version, opts)
		return parsed{pays: pays}, warns, err
	}
	stmts, warns, err := p.Parse(input, version, opts)
	return parsed{stmts: stmts}, warns, err
}

func (r Renderer) render(p Parser, d parsed, version string, opts statement.Options) ([]string, []statement.Warning, error) {
	switch {
	case p.ParsePayments != nil && r.RenderPayments != nil:
		return r.RenderPayments(d.pays, version, opts)
	case p.Parse != nil && r.Render != nil:
		return r.Render(d.stmts, version, opts)
	}
	return nil, nil, fmt.Errorf("%w: %s to %s (a payment and a statement model)", ErrUnsupported, p.Type, r.Type)
}

// Detector recognises a source format from the input's first bytes.
// It returns the type and version, or ok=false.
type Detector func(input []byte) (typ, version string, ok bool)

// HeadDetector is a Detector that reads the input through a Head, sharing
// what it scans with the detectors after it. h is the detector's only
// during the call: the engine reuses it.
type HeadDetector func(h *Head) (typ, version string, ok bool)

// Head is one input as the detectors see it. The detectors of one format
// package look for the same things in the same bytes (the first MT fields,
// the ISO 20022 namespaces), and every detector before the one that
// matches runs: a scan made through Scan is kept for the next detector
// that asks, so that the input is scanned once per detection rather than
// once per detector.
type Head struct {
	Input []byte
	scans [2]headScan // one per format package that asks, in practice
	more  []headScan
}

type headScan struct {
	key *ScanKey
	v   any
}

// heads are the Heads of detections done: every conversion needs one for
// the length of its detection only.
var heads = sync.Pool{New: func() any { return new(Head) }}

// ScanKey names one kind of scan: a package-level variable of the format
// package that makes it.
type ScanKey struct{ Name string }

// Scan returns what scan found in h.Input, running it only the first time
// key is asked for.
func (h *Head) Scan(key *ScanKey, scan func(input []byte) any) any {
	for i := range h.scans {
		switch h.scans[i].key {
		case key:
			return h.scans[i].v
		case nil:
			h.scans[i] = headScan{key, scan(h.Input)}
			return h.scans[i].v
		}
	}
	for _, s := range h.more {
		if s.key == key {
			return s.v
		}
	}
	v := scan(h.Input)
	h.more = append(h.more, headScan{key, v})
	return v
}

// FormatSet is what one format package adds to an engine: its parsers,
// renderers and detectors (mt.Formats, mx.Formats, filefmt.Formats).
type FormatSet struct {
	Parsers   []Parser
	Renderers []Renderer
	Detectors []Detector
	// HeadDetectors, when a set has them, are its Detectors reading a
	// Head, in the same order: the engine runs these instead, so that
	// detectors of several sets share their scans. Detectors stays the
	// set's detectors for whoever runs them on bare input.
	HeadDetectors []HeadDetector
}

// Engine converts between the formats it was built from. It does not change
// after New and is safe for concurrent use.
type Engine struct {
	parsers   map[string]Parser
	renderers map[string]Renderer
	detectors []HeadDetector
	// keys maps each type's own spelling ("MT940") to its key in parsers
	// and renderers (lower case), so that looking it up allocates no
	// lowered copy (key).
	keys map[string]string
}

// key is name as parsers and renderers are keyed: in lower case.
func (e *Engine) key(name string) string {
	if k, ok := e.keys[name]; ok {
		return k
	}
	return strings.ToLower(name)
}

// New returns an engine over the formats of sets. Detectors are tried in the
// order given. A type that two parsers (or two renderers) name, or a
// renderer without a media type, is a wiring mistake and panics.
func New(sets ...FormatSet) *Engine {
	e := &Engine{parsers: map[string]Parser{}, renderers: map[string]Renderer{}, keys: map[string]string{}}
	for _, set := range sets {
		for _, p := range set.Parsers {
			key := strings.ToLower(p.Type)
			if _, dup := e.parsers[key]; dup {
				panic("engine: two parsers for " + p.Type)
			}
			if (p.Parse == nil) == (p.ParsePayments == nil) {
				panic("engine: parser " + p.Type + " needs exactly one of Parse and ParsePayments")
			}
			e.parsers[key] = p
			e.keys[p.Type] = key
		}
		for _, r := range set.Renderers {
			key := strings.ToLower(r.Type)
			if _, dup := e.renderers[key]; dup {
				panic("engine: two renderers for " + r.Type)
			}
			if r.MediaType == "" {
				panic("engine: renderer " + r.Type + " has no media type")
			}
			if (r.Render == nil) == (r.RenderPayments == nil) {
				panic("engine: renderer " + r.Type + " needs exactly one of Render and RenderPayments")
			}
			e.renderers[key] = r
			e.keys[r.Type] = key
		}
		if len(set.HeadDetectors) > 0 {
			if len(set.HeadDetectors) != len(set.Detectors) {
				panic("engine: a set's HeadDetectors are not its Detectors")
			}
			e.detectors = append(e.detectors, set.HeadDetectors...)
			continue
		}
		for _, d := range set.Detectors {
			e.detectors = append(e.detectors, func(h *Head) (string, string, bool) { return d(h.Input) })
		}
	}
	return e
}

// Format is one supported pair, as GET /v1/formats lists it.
type Format struct {
	From     string
	To       string
	Versions []string
	Options  []string
	// MediaType is the target's (Renderer.MediaType).
	MediaType string
}

// Formats lists what the engine was built from: every (from, to) pair one of
// its renderers accepts from one of its parsers. Nothing here is kept by hand.
func (e *Engine) Formats() []Format {
	var out []Format
	for _, r := range e.renderers {
		for _, from := range r.Accepts {
			p, ok := e.parsers[strings.ToLower(from)]
			if !ok {
				continue
			}
			out = append(out, Format{From: p.Type, To: r.Type, Versions: append([]string(nil), r.Versions...),
				Options: append([]string(nil), r.Options...), MediaType: r.MediaType})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// Request is one conversion.
type Request struct {
	Input   []byte
	From    string // empty: detect
	To      string
	Options statement.Options
}

// Result is a conversion's outcome.
type Result struct {
	Pages           []string
	Warnings        []statement.Warning
	DetectedType    string
	DetectedVersion string
	TargetType      string
	TargetVersion   string
	// MediaType is the target's (Renderer.MediaType).
	MediaType string
	Duration  time.Duration
}

// Errors callers map to problem types.
var (
	// ErrUnsupported: unknown from/to, or a pair the engine does not have.
	ErrUnsupported = errors.New("unsupported conversion")
	// ErrUndetectable: from omitted and the input matches no detector.
	ErrUndetectable = errors.New("source format could not be detected")
)

// StrictError is returned when strict=true and a lossy step happened.
type StrictError struct{ Warnings []statement.Warning }

func (e *StrictError) Error() string {
	codes := make([]string, 0, len(e.Warnings))
	for _, w := range e.Warnings {
		codes = append(codes, w.Code)
	}
	return "strict: lossy conversion (" + strings.Join(codes, ", ") + ")"
}

// Convert parses req.Input and renders it as req.To.
func (e *Engine) Convert(req Request) (*Result, error) {
	start := time.Now()
	r, target, err := e.resolveTarget(req.To, req.Options.TargetVersion)
	if err != nil {
		return nil, err
	}
	p, version, err := e.source(req.Input, req.From)
	if err != nil {
		return nil, err
	}
	if !accepts(r, p.Type) {
		for from, why := range r.Refuses {
			if strings.EqualFold(from, p.Type) {
				return nil, fmt.Errorf("%w: %s to %s: %s", ErrUnsupported, p.Type, r.Type, why)
			}
		}
		return nil, fmt.Errorf("%w: %s to %s", ErrUnsupported, p.Type, r.Type)
	}
	if target == "" {
		target = r.DefaultVersion
	} else if len(r.Versions) > 0 && !contains(r.Versions, target) {
		return nil, fmt.Errorf("%w: target version %q (supported: %s)", ErrUnsupported, target, strings.Join(r.Versions, ", "))
	}
	doc, warns, err := p.parse(req.Input, version, req.Options)
	if err != nil {
		return nil, err
	}
	pages, rw, err := r.render(p, doc, target, req.Options)
	if err != nil {
		return nil, err
	}
	if len(warns) == 0 && len(rw) > 0 {
		warns = rw // the renderer's own list: no copy
	} else {
		warns = append(warns, rw...)
	}
	if req.Options.Strict {
		var lossy []statement.Warning
		for _, w := range warns {
			if w.Lossy {
				lossy = append(lossy, w)
			}
		}
		if len(lossy) > 0 {
			return nil, &StrictError{Warnings: lossy}
		}
	}
	return &Result{
		Pages: pages, Warnings: warns,
		DetectedType: p.Type, DetectedVersion: version,
		TargetType: r.Type, TargetVersion: target, MediaType: r.MediaType,
		Duration: time.Since(start),
	}, nil
}

// resolveTarget finds the renderer for to and the version asked for. A client
// may name a full message version as the target (to=camt.053.001.08): that
// means the type camt.053 with that version, and an explicit targetVersion
// that says otherwise is refused rather than silently preferred.
func (e *Engine) resolveTarget(to, targetVersion string) (Renderer, string, error) {
	key := e.key(to)
	if r, ok := e.renderers[key]; ok {
		return r, targetVersion, nil
	}
	// ISO 20022 identifiers are area.type.variant.version: camt.053.001.08.
	if parts := strings.Split(key, "."); len(parts) == 4 {
		if r, ok := e.renderers[parts[0]+"."+parts[1]]; ok && len(r.Versions) > 0 {
			if targetVersion != "" && !strings.EqualFold(targetVersion, key) {
				return Renderer{}, "", &FieldError{Field: "targetVersion",
					Reason: fmt.Sprintf("%s conflicts with the version named in to (%s)", targetVersion, to)}
			}
			return r, key, nil
		}
	}
	return Renderer{}, "", fmt.Errorf("%w: unknown target %q", ErrUnsupported, to)
}

// source finds the parser for input: the one named by from, or the one a
// detector recognises. A named source still gets its version from the input.
func (e *Engine) source(input []byte, from string) (Parser, string, error) {
	version := ""
	h := heads.Get().(*Head)
	h.Input = input
	for _, d := range e.detectors {
		if t, v, ok := d(h); ok {
			if from == "" || strings.EqualFold(from, t) {
				from, version = t, v
			}
			break
		}
	}
	*h = Head{} // no input or scan kept alive in the pool
	heads.Put(h)
	if from == "" {
		return Parser{}, "", ErrUndetectable
	}
	p, ok := e.parsers[e.key(from)]
	if !ok {
		return Parser{}, "", fmt.Errorf("%w: unknown source %q", ErrUnsupported, from)
	}
	return p, version, nil
}

func accepts(r Renderer, from string) bool {
	for _, a := range r.Accepts {
		if strings.EqualFold(a, from) {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// FieldError is an invalid option or parameter, named for the client.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// ValidateOptions checks option values against what the engine knows.
func ValidateOptions(o statement.Options) error {
	check := func(field, v string, allowed ...string) error {
		if v == "" || contains(allowed, v) {
			return nil
		}
		return &FieldError{Field: field, Reason: fmt.Sprintf("must be one of %s", strings.Join(allowed, ", "))}
	}
	if err := check("translitProfile", o.TranslitProfile, "base", "german"); err != nil {
		return err
	}
	if err := check("field86Profile", o.Field86Profile, "plain", "german", "sepa"); err != nil {
		return err
	}
	if err := check("dateFormat", o.DateFormat, "dmy", "mdy", "ymd"); err != nil {
		return err
	}
	if err := check("ofxVersion", o.OFXVersion, "102", "220"); err != nil {
		return err
	}
	if o.IntuBid != "" && strings.Trim(o.IntuBid, "0123456789") != "" || len(o.IntuBid) > 10 {
		return &FieldError{Field: "intuBid", Reason: "must be 1 to 10 digits"}
	}
	return nil
}
