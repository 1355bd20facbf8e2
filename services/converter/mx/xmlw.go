package mx

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// xmlWriter writes indented XML by hand. The camt schemas fix the element
// order, so the renderer states it explicitly rather than relying on struct
// field order and omitempty rules of encoding/xml.
//
// Elements are appended to b, a small buffer that flush moves into out at
// entry boundaries: it stays in cache, and out, a strings.Builder, neither
// zeroes its memory nor copies it to make the result string.
type xmlWriter struct {
	out   strings.Builder
	b     []byte
	depth int
}

// staging holds the xmlWriter staging buffers finished documents gave back.
// A buffer that grew past maxStaging (a huge entry) is left to the collector
// rather than kept.
var staging = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxStaging = 64 << 10

// withStaging runs f with w.b a pooled staging buffer, and takes it back.
// w.b must not be kept past f: everything written is flushed into w.out.
func (w *xmlWriter) withStaging(f func() error) error {
	p := staging.Get().(*[]byte)
	w.b = (*p)[:0]
	defer func() {
		if cap(w.b) <= maxStaging {
			*p = w.b[:0]
			staging.Put(p)
		}
		w.b = nil
	}()
	return f()
}

func (w *xmlWriter) flush() {
	w.out.Write(w.b)
	w.b = w.b[:0]
}

// set stores b, which the caller appended to w.b. While the array has not
// moved only the length is stored: storing the pointer costs a GC write
// barrier, which a whole conversion (GC busy with the parser's garbage)
// pays per element otherwise.
func (w *xmlWriter) set(b []byte) {
	if cap(b) == cap(w.b) {
		w.b = w.b[:len(b)]
		return
	}
	w.b = b
}

// indentation is a line break and enough two-space steps for any camt
// document, sliced instead of written a step at a time.
const indentation = "\n                                                                "

func appendIndent(b []byte, depth int) []byte {
	if n := 1 + 2*depth; n <= len(indentation) {
		return append(b, indentation[:n]...)
	}
	b = append(b, indentation...)
	for i := (len(indentation) - 1) / 2; i < depth; i++ {
		b = append(b, "  "...)
	}
	return b
}

func appendStart(b []byte, depth int, name string) []byte {
	b = appendIndent(b, depth)
	b = append(b, '<')
	b = append(b, name...)
	return append(b, '>')
}

func appendEnd(b []byte, name string) []byte {
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, '>')
}

func (w *xmlWriter) open(name string) {
	w.set(appendStart(w.b, w.depth, name))
	w.depth++
}

func (w *xmlWriter) close(name string) {
	w.depth--
	w.set(appendEnd(appendIndent(w.b, w.depth), name))
}

// leaf writes <name>text</name>; callers skip empty values themselves since
// every camt text type has minLength 1.
func (w *xmlWriter) leaf(name, text string) {
	b := appendStart(w.b, w.depth, name)
	b = appendEscaped(b, text)
	w.set(appendEnd(b, name))
}

// rawLeaf writes <name>text</name> for text the renderer formatted itself
// (dates, numbers), which never needs escaping.
func (w *xmlWriter) rawLeaf(name string, text []byte) {
	b := appendStart(w.b, w.depth, name)
	b = append(b, text...)
	w.set(appendEnd(b, name))
}

// amt writes <name Ccy="EUR">1.23</name>.
func (w *xmlWriter) amt(name, ccy string, value []byte) {
	b := appendIndent(w.b, w.depth)
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, ` Ccy="`...)
	b = appendEscaped(b, ccy)
	b = append(b, `">`...)
	b = append(b, value...)
	w.set(appendEnd(b, name))
}

// plainASCII marks the ASCII bytes appendEscaped copies unchanged, so that
// it can skip over runs of them with one table look-up per byte.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	for _, c := range "&<>\"'" {
		t[c] = false
	}
	t['\t'], t['\n'] = true, true
	return t
}()

// appendEscaped appends s as XML character data. Characters XML 1.0 cannot carry
// at all (most C0 controls, U+FFFE/U+FFFF, invalid UTF-8) become U+FFFD so the
// document stays well-formed. Runs of plain characters are copied at once.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainASCII[c] {
			i++
			continue
		}
		// A well-formed two-byte sequence (U+0080–U+07FF: Latin accents,
		// umlauts) is always an XML character; skip the general decoder.
		if c >= 0xC2 && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			i += 2
			continue
		}
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
		b = append(b, s[last:i]...)
		b = append(b, repl...)
		i += size
		last = i
	}
	return append(b, s[last:]...)
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
