// Package converter owns message conversion: SWIFT MT and ISO 20022 (MX)
// parsing, detection and rendering, and the file targets CSV, OFX and QBO.
//
// The conversion engine (engine) is built from the format packages' parsers,
// renderers and detectors (mt, mx, filefmt; builtin lists them all) over one
// statement model (statement). grpcapi serves it as conversion.v1 behind
// POST /v1/convert, /v1/validate, /v1/normalize, /v1/enrich and
// GET /v1/formats; server wires it for cmd/converter and the local stack;
// cmd/mtconvert runs the same engine on files.
package converter
