package mx

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// events is a document as event lines: start tags with their attributes,
// end tags, and the text between tags as one line however many pieces it
// came in.
type events struct {
	out  []string
	text []byte
}

func (e *events) add(ev string) {
	e.flush()
	e.out = append(e.out, ev)
}

func (e *events) flush() {
	if len(e.text) > 0 {
		e.out = append(e.out, "T"+string(e.text))
		e.text = e.text[:0]
	}
}

// scanEvents is the scanner's view of a document.
func scanEvents(doc string) ([]string, error) { return scanEventsExpecting(doc, false) }

// scanEventsExpecting is scanEvents, telling the scanner the open element's
// name (expectOff, expectEnd) as the tree reader does when expect is set.
func scanEventsExpecting(doc string, expect bool) ([]string, error) {
	src, err := prepare([]byte(doc))
	if err != nil {
		return nil, err
	}
	if err := checkChars(src); err != nil {
		return nil, err
	}
	s := scanner{src: src}
	var ev events
	var open [][2]int
	for {
		if expect && len(open) > 0 {
			s.expectOff, s.expectEnd = open[len(open)-1][0], open[len(open)-1][1]
		} else {
			s.expectOff, s.expectEnd = 0, 0
		}
		if err := s.next(); err != nil {
			return ev.out, err
		}
		switch s.kind {
		case tokEOF:
			ev.flush()
			return ev.out, nil
		case tokStart:
			open = append(open, [2]int{s.nameOff, s.nameEnd})
			start := "S" + s.name()
			for rest := s.attrs(); ; {
				n, v, r, ok := nextAttr(rest)
				if !ok {
					break
				}
				start += fmt.Sprintf(" %s=%q", n, attrValue(v))
				rest = r
			}
			ev.add(start)
		case tokEnd:
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			ev.add("E" + s.name())
		case tokText:
			if ev.text, err = decodeText(ev.text, s.text(), 0, !s.cdata); err != nil {
				return ev.out, err
			}
		}
	}
}

// xmlEvents is the same view through encoding/xml, the reference.
func xmlEvents(doc string) ([]string, error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		return nil, errors.New("not compared")
	}
	qname := func(n xml.Name) string {
		if n.Space != "" {
			return n.Space + ":" + n.Local
		}
		return n.Local
	}
	var ev events
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			ev.flush()
			return ev.out, nil
		}
		if err != nil {
			return ev.out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			start := "S" + qname(t.Name)
			for _, a := range t.Attr {
				start += fmt.Sprintf(" %s=%q", qname(a.Name), a.Value)
			}
			ev.add(start)
		case xml.EndElement:
			ev.add("E" + qname(t.Name))
		case xml.CharData:
			ev.text = append(ev.text, t...)
		}
	}
}

// scannerStricter are the scanner's refusals of what encoding/xml reads
// although the XML 1.0 spec forbids it.
var scannerStricter = []string{
	"expected space before attribute",       // S is required between attributes
	"invalid markup after <!",               // <!X> declarations belong in a DTD
	"invalid qualified name",                // Namespaces in XML: a name is NCName or NCName:NCName
	"invalid processing instruction target", // S is required after the target
	"is not a legal XML character",          // encoding/xml reads &#xD800; as U+FFFD
	// encoding/xml checks characters in text and names only; the spec
	// requires legal characters in the whole document.
	"invalid UTF-8",
	"illegal character code",
}

func checkScanner(t *testing.T, doc string) {
	t.Helper()
	got, gerr := scanEvents(doc)
	// Told the open element's name, the scanner reads the same events and
	// fails the same way.
	if egot, eerr := scanEventsExpecting(doc, true); fmt.Sprint(egot, eerr) != fmt.Sprint(got, gerr) {
		t.Fatalf("with the open element's name expected, %q reads %q, %v; without, %q, %v", doc, egot, eerr, got, gerr)
	}
	want, werr := xmlEvents(strings.TrimPrefix(doc, "\ufeff")) // prepare drops the BOM
	if werr != nil {
		return // refused by the reference: nothing to compare
	}
	if gerr != nil {
		for _, stricter := range scannerStricter {
			if strings.Contains(gerr.Error(), stricter) {
				return
			}
		}
		t.Fatalf("scanner refused what encoding/xml reads: %v\n%q", gerr, doc)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events differ for %q\nscanner:      %q\nencoding/xml: %q", doc, got, want)
	}
}

// FuzzScanner: on any input the scanner either fails cleanly or reads the
// same elements, attributes and text as encoding/xml.
func FuzzScanner(f *testing.F) {
	f.Add([]byte(minimal08))
	f.Add([]byte(`<a x="1">t&amp;<![CDATA[x]]><!--c--><?p d?></a>`))
	f.Add([]byte("<a>\r\n&#x10FFFF;</a>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte("<?xml")) {
			checkScanner(t, string(data))
		}
	})
}

// checkCharsByteByByte is checkChars without the eight-byte step: the
// reference the fast path must agree with.
func checkCharsByteByByte(src string) error {
	for i := 0; i < len(src); {
		c := src[i]
		if c >= 0x20 && c < 0x80 || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if c < 0x80 {
			return &syntaxError{pos: i, msg: fmt.Sprintf("illegal character code %U", rune(c))}
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 {
			return &syntaxError{pos: i, msg: "invalid UTF-8"}
		}
		if !xmlChar(r) {
			return &syntaxError{pos: i, msg: fmt.Sprintf("illegal character code %U", r)}
		}
		i += n
	}
	return nil
}

// TestCheckCharsWordAtATime: the eight-byte step finds the same first bad
// character as a byte-by-byte read, for every byte value at every offset of
// a word and beside the bytes that borrow (0x1F, 0x20) or carry the top bit.
func TestCheckCharsWordAtATime(t *testing.T) {
	base := "<Document>abcdefghijklmnopqrstuvwxyz</Document>"
	near := []string{"", " ", "\x1f", "\x20", "\x7f", "\xc3\xa9", "\t", "\n", "\r"}
	for c := 0; c < 256; c++ {
		for off := 0; off < 17; off++ {
			for _, n := range near {
				src := base[:off] + n + string([]byte{byte(c)}) + base[off:]
				got, want := checkChars(src), checkCharsByteByByte(src)
				if fmt.Sprint(got) != fmt.Sprint(want) || got != nil && got.(*syntaxError).pos != want.(*syntaxError).pos {
					t.Fatalf("checkChars(%q) = %v, byte by byte %v", src, got, want)
				}
			}
		}
	}
}

// TestScannerExpectedEndTag: told the open element's name, the scanner
// still reads end tags that only start with it, or end at EOF, as it does
// without (the name it takes is the whole one, or the same error).
func TestScannerExpectedEndTag(t *testing.T) {
	for _, doc := range []string{
		"<ab></ab>", "<ab></abc>", "<ab></ab >", "<ab></a>", "<ab></ab", "<ab></ab.x>", "<ab></ab:c>",
		"<p:ab></p:ab>", "<p:ab></p:abc>", "<p:ab></p:a>", "<p:ab></q:ab>", "<a><b></b></a>", "<a><b/></a>",
		"<a><b></a></b>", "<ab></ab\t>", "<ab></ab-1>", "<ab></ab\u00e9>",
	} {
		got, gerr := scanEvents(doc)
		egot, eerr := scanEventsExpecting(doc, true)
		if fmt.Sprint(egot, eerr) != fmt.Sprint(got, gerr) {
			t.Errorf("%q: expecting reads %q, %v; without, %q, %v", doc, egot, eerr, got, gerr)
		}
	}
}

// TestPrepareLabels: a declared encoding is read case-insensitively, as
// strings.ToLower would, and anything else is refused with its label.
func TestPrepareLabels(t *testing.T) {
	reads := func(label string) bool { // the rule, spelled the plain way
		switch strings.ToLower(label) {
		case "", "utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin1", "latin-1", "iso-8859-15", "windows-1252", "cp1252":
			return true
		}
		return false
	}
	for _, label := range []string{"UTF-8", "utf-8", "Utf8", "US-ASCII", "ISO-8859-1", "Latin-1", "ISO-8859-15", "Windows-1252", "CP1252",
		"", "UTF-16", "EBCDIC", "utf-8 ", "utf\u212A", "\u212Aoi8-r", "windows-1252-and-a-long-tail", "UTF-8\x00"} {
		doc := `<?xml version="1.0" encoding="` + label + `"?><a>x</a>`
		_, err := prepare([]byte(doc))
		if (err == nil) != reads(label) {
			t.Errorf("label %q: prepare error %v, want read %v", label, err, reads(label))
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", clip(label))) {
			t.Errorf("label %q: error %v does not name it", label, err)
		}
	}
}
