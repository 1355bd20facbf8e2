// Command mtconvert converts payment messages on disk with the same engine as
// POST /v1/convert: MT940/MT942/MT950 ⇄ camt.053/camt.052, and to CSV, OFX
// and QBO. It reads a file (or stdin) and writes the result to stdout (or a
// file); warnings go to stderr.
//
//	mtconvert -to camt.053 statement.sta > statement.xml
//	mtconvert -to MT940 -translit german < camt053.xml
//	mtconvert -validate statement.sta      (exit status 1 when invalid)
//	mtconvert -normalize statement.sta     (as POST /v1/normalize)
//	mtconvert -formats
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ledgerlane/platform/services/converter/builtin"
	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/statement"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mtconvert:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mtconvert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		to       = fs.String("to", "", "target format (see -formats); required")
		from     = fs.String("from", "", "source format; detected when empty")
		out      = fs.String("o", "", "write the result here instead of stdout")
		translit = fs.String("translit", "", "translitProfile: base or german")
		field86  = fs.String("field86", "", "field86Profile: plain, german or sepa")
		strict   = fs.Bool("strict", false, "fail instead of warning on lossy steps")
		version  = fs.String("target-version", "", "targetVersion, e.g. camt.053.001.02")
		dates    = fs.String("date-format", "", "dateFormat for CSV: dmy, mdy or ymd")
		ofx      = fs.String("ofx-version", "", "ofxVersion: 102 or 220")
		intuBid  = fs.String("intu-bid", "", "intuBid for QBO")
		formats  = fs.Bool("formats", false, "list the supported conversions and exit")
		validate = fs.Bool("validate", false, "only check the message (as POST /v1/validate); exit status 1 when invalid")
		normal   = fs.Bool("normalize", false, "rewrite the message in its own format (as POST /v1/normalize)")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	eng := builtin.Engine()
	if *formats {
		for _, f := range eng.Formats() {
			fmt.Fprintf(stdout, "%-10s -> %-10s %s\n", f.From, f.To, strings.Join(f.Versions, " "))
		}
		return nil
	}
	if *to == "" && !*validate && !*normal {
		return errors.New("-to is required (see -formats)")
	}
	in := stdin
	if fs.NArg() > 0 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	input, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	opts := statement.Options{TranslitProfile: *translit, Field86Profile: *field86, Strict: *strict,
		TargetVersion: *version, DateFormat: *dates, OFXVersion: *ofx, IntuBid: *intuBid}
	if err := engine.ValidateOptions(opts); err != nil {
		return err
	}
	if *validate {
		return report(eng, input, *from, opts, stdout)
	}
	var res *engine.Result
	if *normal {
		res, err = eng.Normalize(input, *from, opts)
	} else {
		res, err = eng.Convert(engine.Request{Input: input, From: *from, To: *to, Options: opts})
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, finding(w.Severity, w.Code, w.Message, w.Path))
	}
	w := stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	for _, page := range res.Pages {
		if _, err := io.WriteString(w, page); err != nil {
			return err
		}
	}
	return nil
}

// report prints what the engine's Validate found, one finding a line, and
// fails when the message is invalid.
func report(eng *engine.Engine, input []byte, from string, opts statement.Options, w io.Writer) error {
	v, err := eng.Validate(input, from, opts)
	if err != nil {
		return err
	}
	for _, is := range append(v.Errors, v.Warnings...) {
		where := is.Path
		if is.Line > 0 && !strings.Contains(where, "line ") {
			where = fmt.Sprintf("line %d, %s", is.Line, is.Path)
		}
		fmt.Fprintln(w, finding(is.Severity, is.Code, is.Message, where))
	}
	if !v.Valid {
		return fmt.Errorf("%s message is not valid (%d errors)", v.DetectedType, len(v.Errors))
	}
	fmt.Fprintln(w, strings.TrimSpace("valid "+v.DetectedType+" "+v.DetectedVersion))
	return nil
}

// finding is one warning or error as a line: "warning CODE: message (where)",
// without the parentheses when the finding has no place.
func finding(severity, code, message, where string) string {
	line := severity + " " + code + ": " + message
	if where != "" {
		line += " (" + where + ")"
	}
	return line
}
