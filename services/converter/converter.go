// Package converter owns message conversion: SWIFT MT and ISO 20022 (MX)
// parsing, detection and rendering, and the file targets CSV, OFX and QBO.
// The engine lands with the statement-conversion issue; until then every
// conversion route answers 501 not-implemented through the gateway.
package converter
