package route

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestTableMatchesHTTPRules keeps this table and proto/http.yaml identical:
// every bound gRPC method appears once in each, under the same method and path.
func TestTableMatchesHTTPRules(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "proto", "http.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fromYAML []string
	sel := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "- selector:"); ok {
			sel = strings.TrimSpace(v)
			continue
		}
		for _, m := range []string{"get", "post", "patch", "put", "delete"} {
			if v, ok := strings.CutPrefix(line, m+":"); ok && sel != "" {
				fromYAML = append(fromYAML, strings.ToUpper(m)+" "+strings.TrimSpace(v)+" "+sel)
				sel = ""
			}
		}
	}
	var fromTable []string
	for _, rt := range All() {
		fromTable = append(fromTable, rt.Method+" "+rt.Pattern+" "+rt.Selector)
	}
	sort.Strings(fromYAML)
	sort.Strings(fromTable)
	if !reflect.DeepEqual(fromYAML, fromTable) {
		t.Fatalf("route table and proto/http.yaml differ\nyaml:  %v\ntable: %v", fromYAML, fromTable)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		method, path string
		want         []string // selectors
		allowed      []string
	}{
		{"GET", "/v1/health", []string{"edge.v1.EdgeService.Health"}, []string{"GET"}},
		{"POST", "/v1/health", nil, []string{"GET"}},
		{"GET", "/v1/health/", nil, nil},
		{"GET", "/v1/nope", nil, nil},
		{"GET", "/v1/transactions/search", []string{"finance.v1.TransactionService.SearchTransactions"}, []string{"GET", "PATCH"}},
		{"GET", "/v1/transactions/abc", []string{"finance.v1.TransactionService.GetTransaction"}, []string{"GET", "PATCH"}},
		{"PUT", "/v1/transactions/abc", nil, []string{"GET", "PATCH"}},
		{"GET", "/v1/connections", []string{"conversion.v1.AccountingConnectionService.ListConnections", "finance.v1.AccountService.ListConnections"}, []string{"GET", "POST"}},
		{"DELETE", "/v1/jobs/1", []string{"jobs.v1.JobService.DeleteJob"}, []string{"DELETE", "GET"}},
		{"GET", "/v1/accounts//balances", nil, nil},
		{"POST", "/v1/convert", []string{"conversion.v1.ConversionService.Convert"}, []string{"POST"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			m := Lookup(tt.method, tt.path)
			var got []string
			for _, rt := range m.Routes {
				got = append(got, rt.Selector)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("routes = %v, want %v", got, tt.want)
			}
			if !reflect.DeepEqual(m.Allowed, tt.allowed) {
				t.Errorf("allowed = %v, want %v", m.Allowed, tt.allowed)
			}
		})
	}
}

// Lookup runs on every request: it splits the path and nothing else, and
// allocates only the Match it returns (Routes and Allowed).
func TestLookupAllocations(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { Lookup(http.MethodPost, "/v1/convert") })
	if allocs > 3 {
		t.Errorf("Lookup(POST /v1/convert) allocates %.0f times, want at most 3", allocs)
	}
}

func BenchmarkLookup(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Lookup(http.MethodPost, "/v1/convert")
	}
}

func TestEveryAuthenticatedRouteHasAScope(t *testing.T) {
	for _, rt := range All() {
		if (rt.Surface == Public) != (rt.Scope == "") {
			t.Errorf("%s %s: surface %s with scope %q", rt.Method, rt.Pattern, rt.Surface, rt.Scope)
		}
		if rt.Method == http.MethodGet && rt.Metered {
			t.Errorf("%s %s: a GET is never metered", rt.Method, rt.Pattern)
		}
	}
}

// The policy columns, checked against what the spec and docs/limits.md say.
func TestPolicyColumns(t *testing.T) {
	for _, rt := range All() {
		name := rt.Method + " " + rt.Pattern
		switch {
		case rt.Method == http.MethodGet && rt.Idempotency != IdempotencyNone:
			t.Errorf("%s: a read takes no Idempotency-Key", name)
		case rt.Method != http.MethodGet && rt.Surface == Finance && rt.Selector != "finance.v1.DebtService.CreatePayoffPlan" && rt.Idempotency != IdempotencyRequired:
			t.Errorf("%s: finance writes require an Idempotency-Key", name)
		// A grant's settings are finance data changed on the conversion
		// surface (the tenant's credential): required, as finance writes.
		case rt.Method != http.MethodGet && strings.HasPrefix(rt.Selector, "finance.v1.GrantService.") && rt.Idempotency != IdempotencyRequired:
			t.Errorf("%s: finance grant writes require an Idempotency-Key", name)
		case rt.Method != http.MethodGet && rt.Surface == Conversion && !strings.HasPrefix(rt.Selector, "finance.v1.GrantService.") &&
			rt.Idempotency != IdempotencyOptional:
			t.Errorf("%s: conversion writes honour an Idempotency-Key", name)
		}
		if rt.Units == UnitsPerItem && !rt.Metered {
			t.Errorf("%s: units per item on an unmetered route", name)
		}
		if rt.Status != 0 && (rt.Status < 200 || rt.Status > 299) {
			t.Errorf("%s: success status %d", name, rt.Status)
		}
		if m := rt.GRPCMethod(); !strings.HasPrefix(m, "/") || strings.Count(m, "/") != 2 {
			t.Errorf("%s: gRPC method %q", name, m)
		}
	}
}
