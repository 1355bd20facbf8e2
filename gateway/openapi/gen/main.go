// Command gen writes the OpenAPI 3 document the gateway serves at
// GET /v1/openapi.json (gateway/openapi/openapi.json). `make gen` runs it after
// buf, from the repository root:
//
//	go run ./gateway/openapi/gen -in docs/openapi/api.swagger.json -out gateway/openapi/openapi.json
//
// It converts the OpenAPI v2 file protoc-gen-openapiv2 writes from the protos
// to OpenAPI 3 (kin-openapi's openapi2conv) and adds what the protos cannot
// say, from the one route table (gateway/route) and the one list of problem
// types (pkg/problem): security and scopes, metering, idempotency, body
// limits, success statuses, the problem document, the edge's headers, the
// hand-written routes' bodies and both GET /v1/connections variants; and the
// catalogues of problem types (docs/errors.md) and conversion warning codes
// (docs/conversion-warnings.md) as x-ledgerlane-problems and
// x-ledgerlane-warnings, which the /docs pages render; and the request and
// response examples the end-to-end suite recorded (docs/openapi/examples.json,
// `make examples`).
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	in := flag.String("in", "docs/openapi/api.swagger.json", "the OpenAPI v2 file buf generates")
	out := flag.String("out", "gateway/openapi/openapi.json", "where to write the OpenAPI 3 document")
	errorsMD := flag.String("errors", "docs/errors.md", "the problem types' meanings")
	warningsMD := flag.String("warnings", "docs/conversion-warnings.md", "the conversion warning codes")
	examples := flag.String("examples", "docs/openapi/examples.json", "the end-to-end suite's recorded exchanges (make examples)")
	flag.Parse()
	raw, err := os.ReadFile(*in)
	if err != nil {
		fail(err)
	}
	var cat Catalogs
	for _, f := range []struct {
		path string
		dst  *string
	}{{*errorsMD, &cat.ErrorsMD}, {*warningsMD, &cat.WarningsMD}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			fail(err)
		}
		*f.dst = string(b)
	}
	if cat.Examples, err = os.ReadFile(*examples); err != nil && !os.IsNotExist(err) {
		fail(err)
	}
	doc, err := Build(raw, cat)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, doc, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "openapi gen:", err)
	os.Exit(1)
}
