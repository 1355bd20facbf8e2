package mx

import (
	"strings"
	"unicode/utf8"
)

// xmlWriter writes indented XML by hand. The camt schemas fix the element
// order, so the renderer states it explicitly rather than relying on struct
// field order and omitempty rules of encoding/xml.
type xmlWriter struct {
	b     strings.Builder
	depth int
}

func (w *xmlWriter) indent() {
	w.b.WriteByte('\n')
	for i := 0; i < w.depth; i++ {
		w.b.WriteString("  ")
	}
}

func (w *xmlWriter) open(name string) {
	w.indent()
	w.b.WriteByte('<')
	w.b.WriteString(name)
	w.b.WriteByte('>')
	w.depth++
}

func (w *xmlWriter) close(name string) {
	w.depth--
	w.indent()
	w.b.WriteString("</")
	w.b.WriteString(name)
	w.b.WriteByte('>')
}

// leaf writes <name>text</name>; callers skip empty values themselves since
// every camt text type has minLength 1.
func (w *xmlWriter) leaf(name, text string) {
	w.indent()
	w.b.WriteByte('<')
	w.b.WriteString(name)
	w.b.WriteByte('>')
	escapeTo(&w.b, text)
	w.b.WriteString("</")
	w.b.WriteString(name)
	w.b.WriteByte('>')
}

// amt writes <name Ccy="EUR">1.23</name>.
func (w *xmlWriter) amt(name, ccy, value string) {
	w.indent()
	w.b.WriteByte('<')
	w.b.WriteString(name)
	w.b.WriteString(` Ccy="`)
	escapeTo(&w.b, ccy)
	w.b.WriteString(`">`)
	w.b.WriteString(value)
	w.b.WriteString("</")
	w.b.WriteString(name)
	w.b.WriteByte('>')
}

// escapeTo writes s as XML character data. Characters XML 1.0 cannot carry
// at all (most C0 controls, U+FFFE/U+FFFF, invalid UTF-8) become U+FFFD so the
// document stays well-formed. Runs of plain characters are copied at once.
func escapeTo(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var repl string
		size := 1
		switch {
		case c == '&':
			repl = "&amp;"
		case c == '<':
			repl = "&lt;"
		case c == '>':
			repl = "&gt;"
		case c == '"':
			repl = "&quot;"
		case c == '\'':
			repl = "&apos;"
		case c == '\r':
			repl = "&#xD;"
		case c == '\t' || c == '\n' || c >= 0x20 && c < 0x80:
			i++
			continue
		case c < 0x20:
			repl = "\uFFFD"
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if xmlChar(r) && !(r == utf8.RuneError && n == 1) {
				i += n
				continue
			}
			repl, size = "\uFFFD", n
		}
		b.WriteString(s[last:i])
		b.WriteString(repl)
		i += size
		last = i
	}
	b.WriteString(s[last:])
}

func xmlChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return false
	}
	return r <= 0x10FFFF
}
