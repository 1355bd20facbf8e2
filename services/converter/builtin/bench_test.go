package builtin_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// The benchmarks of this file are the converter's part of `make bench`
// (docs/benchmarks.md): every family the engine converts, measured through
// engine.Convert (detection, parse, render, warnings: what a request costs
// beyond the edge) on the shared real files. They only read the engine's
// public API and the format sets' detectors, so `make bench-compare` can run
// this file unchanged against an older commit.

// sharedDir is the shared folder beside the repository, found from this
// file's path; LEDGERLANE_SHARED overrides it (a worktree elsewhere).
func sharedDir(b testing.TB) string {
	if dir := os.Getenv("LEDGERLANE_SHARED"); dir != "" {
		return dir
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared")
	if _, err := os.Stat(filepath.Join(dir, "samples")); err != nil {
		b.Skipf("shared samples not found at %s (set LEDGERLANE_SHARED)", dir)
	}
	return dir
}

// detect names input's type the way the engine does: the first detector of
// the shipped format sets that recognises it.
func detect(input []byte) string {
	for _, set := range builtin.Formats() {
		for _, d := range set.Detectors {
			if typ, _, ok := d(input); ok {
				return typ
			}
		}
	}
	return ""
}

// pairCase is one shared pair: its input and the type of its expectation.
type pairCase struct {
	name     string
	input    []byte
	from, to string // detected; "" when no detector knows it
}

// sharedPairs reads every shared CBPR+ pair (input and expected output).
func sharedPairs(t testing.TB, dir string) []pairCase {
	var out []pairCase
	for _, glob := range []string{"cbpr_mt_to_mx/*.input.fin", "cbpr_mx_to_mt/*.input.xml"} {
		files, _ := filepath.Glob(filepath.Join(dir, "samples", "pairs", glob))
		for _, in := range files {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			stem := strings.TrimSuffix(strings.TrimSuffix(in, ".input.fin"), ".input.xml")
			exp, err := os.ReadFile(stem + ".expected.xml")
			if err != nil {
				exp, err = os.ReadFile(stem + ".expected.fin")
			}
			c := pairCase{name: filepath.Base(stem), input: src, from: detect(src)}
			if err == nil {
				c.to = detect(exp)
			}
			out = append(out, c)
		}
	}
	return out
}

type family struct {
	from, to string
	inputs   [][]byte
	bytes    int64
}

// runFamily converts the family's inputs round robin and reports messages/s
// next to ns/op (one op is one message), and cpu-ns/op: the process's CPU
// time per message, which other work on a shared machine inflates far less
// than the wall time of ns/op.
func runFamily(b *testing.B, eng *engine.Engine, f *family) {
	b.ReportAllocs()
	b.SetBytes(f.bytes / int64(len(f.inputs)))
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := eng.Convert(engine.Request{Input: f.inputs[i], To: f.to}); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(f.inputs) {
			i = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFamilies converts every shared CBPR+ pair input, grouped by its
// detected source type and the type of its expected output
// (MT103-pacs.008, pacs.008-MT103, ...). Inputs the engine refuses are left
// out and counted in the log, so a family appears once it converts.
func BenchmarkFamilies(b *testing.B) {
	dir := sharedDir(b)
	eng := builtin.Engine()
	byName := map[string]*family{}
	skipped := 0
	for _, c := range sharedPairs(b, dir) {
		if c.from == "" || c.to == "" {
			skipped++
			continue
		}
		if _, err := eng.Convert(engine.Request{Input: c.input, To: c.to}); err != nil {
			skipped++
			continue
		}
		name := c.from + "-" + c.to
		f := byName[name]
		if f == nil {
			f = &family{from: c.from, to: c.to}
			byName[name] = f
		}
		f.inputs = append(f.inputs, c.input)
		f.bytes += int64(len(c.input))
	}
	if len(byName) == 0 {
		b.Skip("no shared pair converts")
	}
	b.Logf("%d families; %d pair inputs left out (undetected or refused)", len(byName), skipped)
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		b.Run(n, func(b *testing.B) { runFamily(b, eng, byName[n]) })
	}
}

// statementFiles reads the real bank MT940/MT942 files of the shared samples
// that the engine converts to camt.053 (the expectation files beside them
// and the deliberately broken ones are left out). LEDGERLANE_MT940_LIST
// names a file listing other paths, one a line: bench/peer.sh passes the
// files the peer parser also reads.
func statementFiles(b *testing.B, eng *engine.Engine) [][]byte {
	var out [][]byte
	if list := os.Getenv("LEDGERLANE_MT940_LIST"); list != "" {
		names, err := os.ReadFile(list)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range strings.Fields(string(names)) {
			src, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := mt.Parse(src, statement.Options{}); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
			out = append(out, src)
		}
		return out
	}
	root := filepath.Join(sharedDir(b), "samples", "mt")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".yml") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := eng.Convert(engine.Request{Input: src, From: "MT940", To: "camt.053"}); err == nil {
			out = append(out, src)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if len(out) == 0 {
		b.Skip("no shared MT940 file converts")
	}
	return out
}

// BenchmarkStatementFiles is the statement engine on the shared real bank
// files, one op being all of them: "parse" is mt.Parse alone, "camt.053" the
// whole engine.Convert to camt.053 (MB/s is over the MT input in both).
func BenchmarkStatementFiles(b *testing.B) {
	eng := builtin.Engine()
	files := statementFiles(b, eng)
	var total int64
	for _, f := range files {
		total += int64(len(f))
	}
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(total)
		n := 0
		for b.Loop() {
			for _, f := range files {
				st, _, err := mt.Parse(f, statement.Options{})
				if err != nil {
					b.Fatal(err)
				}
				n += len(st)
			}
		}
		b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "stmts/s")
	})
	b.Run("camt.053", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(total)
		for b.Loop() {
			for _, f := range files {
				if _, err := eng.Convert(engine.Request{Input: f, From: "MT940", To: "camt.053"}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*len(files))/b.Elapsed().Seconds(), "files/s")
	})
}
