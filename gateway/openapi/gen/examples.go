package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// recorded is one operation's entry in docs/openapi/examples.json.
type recorded struct {
	Request  any `json:"request"`
	Status   int `json:"status"`
	Response any `json:"response"`
}

// addExamples sets each recorded operation's request body example and its
// answer's, under the status it answered. An entry naming an operation or
// status the document does not have is an error: the file is stale.
func addExamples(doc *openapi3.T, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	var all map[string]recorded
	if err := json.Unmarshal(raw, &all); err != nil {
		return fmt.Errorf("examples: %w", err)
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ex := all[k]
		method, path, _ := strings.Cut(k, " ")
		item := doc.Paths.Value(path)
		var op *openapi3.Operation
		if item != nil {
			op = item.GetOperation(method)
		}
		if op == nil {
			return fmt.Errorf("examples: %s is not an operation of the document (run make examples)", k)
		}
		if ex.Request != nil && op.RequestBody != nil && op.RequestBody.Value != nil {
			if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil {
				mt.Example = ex.Request
			}
		}
		r := op.Responses.Value(strconv.Itoa(ex.Status))
		if r == nil || r.Value == nil {
			return fmt.Errorf("examples: %s answers %d, which the document does not list (run make examples)", k, ex.Status)
		}
		if mt := r.Value.Content.Get("application/json"); mt != nil {
			mt.Example = ex.Response
		}
	}
	return nil
}
