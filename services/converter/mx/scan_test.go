package mx

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// scanEvents is the scanner's view of a document: start tags with their
// attributes, end tags and the decoded text between tags, one line each.
func scanEvents(doc string) ([]string, error) {
	src, err := prepare([]byte(doc))
	if err != nil {
		return nil, err
	}
	if err := checkChars(src); err != nil {
		return nil, err
	}
	s := scanner{src: src}
	var out []string
	var text []byte
	flush := func() {
		if len(text) > 0 {
			out = append(out, "T"+string(text))
			text = text[:0]
		}
	}
	for {
		if err := s.next(); err != nil {
			return out, err
		}
		switch s.kind {
		case tokEOF:
			flush()
			return out, nil
		case tokStart:
			flush()
			ev := "S" + s.name
			for rest := s.attrs; ; {
				n, v, r, ok := nextAttr(rest)
				if !ok {
					break
				}
				ev += fmt.Sprintf(" %s=%q", n, attrValue(v))
				rest = r
			}
			out = append(out, ev)
		case tokEnd:
			flush()
			out = append(out, "E"+s.name)
		case tokText:
			if text, err = decodeText(text, s.text, 0, !s.cdata); err != nil {
				return out, err
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
	var out []string
	var text []byte
	flush := func() {
		if len(text) > 0 {
			out = append(out, "T"+string(text))
			text = text[:0]
		}
	}
	qname := func(n xml.Name) string {
		if n.Space != "" {
			return n.Space + ":" + n.Local
		}
		return n.Local
	}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			flush()
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			flush()
			ev := "S" + qname(t.Name)
			for _, a := range t.Attr {
				ev += fmt.Sprintf(" %s=%q", qname(a.Name), a.Value)
			}
			out = append(out, ev)
		case xml.EndElement:
			flush()
			out = append(out, "E"+qname(t.Name))
		case xml.CharData:
			text = append(text, t...)
		}
	}
}

func TestScannerMatchesEncodingXML(t *testing.T) {
	docs := []string{
		minimal08,
		appHdr + minimal08,
		`<a x="1" y='2'>t&amp;&#65;&#x42;<![CDATA[<raw>&amp;]]><!-- c --><?pi data?>u</a>`,
		"<a>line1\r\nline2\rline3</a>",
		"<?xml version=\"1.0\"?>\n<!DOCTYPE a [<!ENTITY e \"x\">]>\n<a/>",
		`<p:a xmlns:p="urn:x" p:b="v"><p:c/></p:a>`,
		"<a b=\"&lt;&#x9;\"/>",
	}
	for _, doc := range docs {
		checkScanner(t, doc)
	}
}

// scannerStricter are the scanner's refusals of what encoding/xml reads
// although the XML 1.0 spec forbids it.
var scannerStricter = []string{
	"expected space before attribute",       // S is required between attributes
	"invalid markup after <!",               // <!X> declarations belong in a DTD
	"invalid qualified name",                // Namespaces in XML: a name is NCName or NCName:NCName
	"invalid processing instruction target", // S is required after the target
	// encoding/xml checks characters in text and names only; the spec
	// requires legal characters in the whole document.
	"invalid UTF-8",
	"illegal character code",
}

func checkScanner(t *testing.T, doc string) {
	t.Helper()
	got, gerr := scanEvents(doc)
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
