package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestFinding(t *testing.T) {
	for _, c := range []struct{ where, want string }{
		{"", "warning X: lost"},
		{"line 3, field :61:", "warning X: lost (line 3, field :61:)"},
	} {
		if got := finding("warning", "X", "lost", c.where); got != c.want {
			t.Errorf("finding(%q) = %q, want %q", c.where, got, c.want)
		}
	}
}

func TestRun(t *testing.T) {
	in := ":20:S1\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR100,00\n:61:2601020102D25,50NTRFREF1\n:86:Invoice\n:62F:C260102EUR74,50\n-"
	var out, errs bytes.Buffer
	if err := run([]string{"-to", "csv"}, strings.NewReader(in), &out, &errs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "-25.50") {
		t.Fatalf("csv: %s", out.String())
	}
	out.Reset()
	if err := run([]string{"-formats"}, nil, &out, &errs); err != nil || !strings.Contains(out.String(), "camt.053") {
		t.Fatalf("formats: %v %s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"-validate"}, strings.NewReader(in), &out, &errs); err != nil || !strings.Contains(out.String(), "valid MT940") {
		t.Fatalf("validate: %v %s", err, out.String())
	}
	// No line ends in a space, and no finding prints empty parentheses.
	for _, line := range strings.Split(out.String()+errs.String(), "\n") {
		if strings.HasSuffix(line, " ") || strings.Contains(line, "()") {
			t.Fatalf("untidy line %q", line)
		}
	}
	out.Reset()
	if err := run([]string{"-validate"}, strings.NewReader(strings.Replace(in, "C260101", "C261301", 1)), &out, &errs); err == nil || !strings.Contains(out.String(), "error INVALID_MESSAGE") {
		t.Fatalf("validate invalid: %v %s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"-normalize"}, strings.NewReader(in), &out, &errs); err != nil || !strings.Contains(out.String(), ":20:S1\r\n") {
		t.Fatalf("normalize: %v %q", err, out.String())
	}
	for _, args := range [][]string{{}, {"-to", "camt.053", "-date-format", "iso"}, {"-to", "pdf"}} {
		if err := run(args, strings.NewReader(in), &out, &errs); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
}
