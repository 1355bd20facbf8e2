package mx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is the XML 1.0 tokenizer the camt parser reads with. It works on
// one string holding the whole document, so element names, attribute values
// and most text are substrings of it and cost no allocation; encoding/xml's
// Decoder reads byte by byte through an io.Reader and allocates for every
// token, which made it most of the cost of a camt.053 conversion.
//
// It is a tokenizer, not a validator: it checks what a well-formed document
// needs for the tokens to mean what they say (names, quoting, entity and
// character references, comment, CDATA and processing-instruction syntax,
// legal characters) and leaves matching end tags to the parser. Entities
// declared in a DOCTYPE are not expanded (nor are they by encoding/xml): a
// reference to one is an error, which also rules out entity-expansion attacks.
type scanner struct {
	src string
	pos int

	// The current token, as offsets into src (name, attrs and text give the
	// strings). Offsets are not pointers: the parsers' loop rewrites them for
	// every token, and string fields cost a write barrier each time while
	// the collector marks, a tenth of reading a payment (issue 30).
	kind             tokKind
	nameOff, nameEnd int  // qualified name of a start or end tag
	attrOff, attrEnd int  // raw attribute text of a start tag, between name and '>'
	textOff, textEnd int  // character data or CDATA content, undecoded
	cdata            bool // text is a CDATA section: no references to decode
	// colon is the offset of the colon in name, -1 when it has none;
	// sawColon is set by readName for the name it read.
	colon    int
	sawColon bool
	// expectOff and expectEnd, when set by the reader, are the qualified
	// name of the element open (a span of src, valid since its start tag
	// was read): an end tag with that name is taken without reading it
	// again.
	expectOff, expectEnd int
	// selfClose: the start tag was <x/>; the next token is its end.
	selfClose, pendingEnd bool
}

// name is the qualified name of the current start or end tag.
func (s *scanner) name() string { return s.src[s.nameOff:s.nameEnd] }

// attrs is the raw attribute text of the current start tag.
func (s *scanner) attrs() string { return s.src[s.attrOff:s.attrEnd] }

// text is the current character data or CDATA content, undecoded.
func (s *scanner) text() string { return s.src[s.textOff:s.textEnd] }

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokStart
	tokEnd
	tokText
)

// syntaxError is malformed XML at a byte offset of the scanned string.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func (s *scanner) fail(pos int, format string, args ...any) error {
	return &syntaxError{pos: pos, msg: fmt.Sprintf(format, args...)}
}

// line is the 1-based line of byte offset pos.
func (s *scanner) line(pos int) int {
	if pos > len(s.src) {
		pos = len(s.src)
	}
	return 1 + strings.Count(s.src[:pos], "\n")
}

// next reads the next token into s.
func (s *scanner) next() error {
	if s.pendingEnd {
		s.pendingEnd = false
		s.kind = tokEnd // s.name() is still the start tag's
		return nil
	}
	for {
		if s.pos >= len(s.src) {
			s.kind = tokEOF
			return nil
		}
		if s.src[s.pos] != '<' {
			end := strings.IndexByte(s.src[s.pos:], '<')
			if end < 0 {
				end = len(s.src)
			} else {
				end += s.pos
			}
			s.kind, s.textOff, s.textEnd, s.cdata = tokText, s.pos, end, false
			s.pos = end
			return nil
		}
		start := s.pos
		rest := s.src[s.pos+1:]
		switch {
		case rest == "":
			return s.fail(start, "unexpected EOF")
		case rest[0] == '/':
			return s.endTag(start)
		case rest[0] == '?':
			if err := s.procInst(start); err != nil {
				return err
			}
		case strings.HasPrefix(rest, "!--"):
			if err := s.comment(start); err != nil {
				return err
			}
		case strings.HasPrefix(rest, "![CDATA["):
			end := strings.Index(s.src[start+9:], "]]>")
			if end < 0 {
				return s.fail(start, "unexpected EOF in CDATA section")
			}
			s.kind, s.textOff, s.textEnd, s.cdata = tokText, start+9, start+9+end, true
			s.pos = start + 9 + end + 3
			return nil
		case strings.HasPrefix(rest, "!DOCTYPE"):
			if err := s.doctype(start); err != nil {
				return err
			}
		case rest[0] == '!':
			return s.fail(start, "invalid markup after <!")
		default:
			return s.startTag(start)
		}
	}
}

func (s *scanner) endTag(start int) error {
	i := start + 2
	var name string
	if n := s.expectEnd - s.expectOff; n > 0 && i+n < len(s.src) && s.src[i:i+n] == s.src[s.expectOff:s.expectEnd] && !nameByte[s.src[i+n]] {
		// The open element's name, which readName would read (the next
		// byte ends it) and which its start tag showed is qualified.
		name = s.src[i : i+n]
	} else {
		var err error
		if name, err = s.elementName(i, "</"); err != nil {
			return err
		}
	}
	i += len(name)
	i = s.skipSpace(i)
	if i >= len(s.src) {
		return s.fail(i, "unexpected EOF")
	}
	if s.src[i] != '>' {
		return s.fail(i, "invalid characters between </%s and >", clip(name))
	}
	s.kind, s.nameOff, s.nameEnd, s.pos = tokEnd, start+2, start+2+len(name), i+1
	return nil
}

func (s *scanner) startTag(start int) error {
	i := start + 1
	name, err := s.elementName(i, "<")
	if err != nil {
		return err
	}
	i += len(name)
	attrStart := i
	for {
		j := s.skipSpace(i)
		if j >= len(s.src) {
			return s.fail(j, "unexpected EOF")
		}
		switch s.src[j] {
		case '>':
			s.kind, s.nameOff, s.nameEnd, s.attrOff, s.attrEnd, s.pos = tokStart, start+1, attrStart, attrStart, j, j+1
			s.selfClose = false
			return nil
		case '/':
			if j+1 >= len(s.src) || s.src[j+1] != '>' {
				return s.fail(j, "expected /> in element")
			}
			s.kind, s.nameOff, s.nameEnd, s.attrOff, s.attrEnd, s.pos = tokStart, start+1, attrStart, attrStart, j, j+2
			s.selfClose, s.pendingEnd = true, true
			return nil
		}
		if j == i {
			return s.fail(j, "expected space before attribute in element %s", clip(name))
		}
		end, err := s.attribute(j)
		if err != nil {
			return err
		}
		i = end
	}
}

// elementName reads the qualified element name at i, which follows after.
func (s *scanner) elementName(i int, after string) (string, error) {
	name, ok := s.readName(i)
	switch {
	case !ok && i >= len(s.src):
		return "", s.fail(i, "unexpected EOF")
	case !ok:
		return "", s.fail(i, "expected element name after %s", after)
	}
	s.colon = -1
	if s.sawColon {
		if s.colon = colon(name); s.colon < -1 {
			return "", s.fail(i, "invalid qualified name %s", clip(name))
		}
	}
	return name, nil
}

// attribute checks one name="value" at i and returns the offset after it.
func (s *scanner) attribute(i int) (int, error) {
	name, ok := s.readName(i)
	if !ok {
		return 0, s.fail(i, "invalid attribute name")
	}
	if !qualified(name) {
		return 0, s.fail(i, "invalid qualified name %s", clip(name))
	}
	i = s.skipSpace(i + len(name))
	if i >= len(s.src) || s.src[i] != '=' {
		return 0, s.fail(i, "attribute %s without = in element", clip(name))
	}
	i = s.skipSpace(i + 1)
	if i >= len(s.src) || (s.src[i] != '"' && s.src[i] != '\'') {
		return 0, s.fail(i, "unquoted or missing attribute value")
	}
	q := s.src[i]
	end := strings.IndexByte(s.src[i+1:], q)
	if end < 0 {
		if k := strings.IndexByte(s.src[i+1:], '<'); k >= 0 {
			return 0, s.fail(i+1+k, "unescaped < inside quoted string")
		}
		return 0, s.fail(i, "unexpected EOF in attribute value")
	}
	val := s.src[i+1 : i+1+end]
	if k := strings.IndexByte(val, '<'); k >= 0 {
		return 0, s.fail(i+1+k, "unescaped < inside quoted string")
	}
	if strings.IndexByte(val, '&') >= 0 {
		if _, err := decodeText(nil, val, i+1, true); err != nil {
			return 0, err
		}
	}
	return i + 1 + end + 1, nil
}

// nextAttr returns the first attribute in attrs and the rest; the attribute
// text was checked when the tag was scanned.
func nextAttr(attrs string) (name, value, rest string, ok bool) {
	attrs = strings.TrimLeft(attrs, " \t\r\n")
	eq := strings.IndexByte(attrs, '=')
	if eq < 0 {
		return "", "", "", false
	}
	name = strings.TrimRight(attrs[:eq], " \t\r\n")
	v := strings.TrimLeft(attrs[eq+1:], " \t\r\n")
	if v == "" {
		return "", "", "", false
	}
	end := strings.IndexByte(v[1:], v[0])
	if end < 0 {
		return "", "", "", false
	}
	return name, v[1 : 1+end], v[end+2:], true
}

func (s *scanner) procInst(start int) error {
	i := start + 2
	target, ok := s.readName(i)
	if !ok {
		return s.fail(i, "expected target name after <?")
	}
	end := strings.Index(s.src[i:], "?>")
	if end < 0 {
		return s.fail(start, "unexpected EOF in processing instruction")
	}
	if body := s.src[i+len(target) : i+end]; body != "" && !isSpace(body[0]) {
		return s.fail(i, "invalid processing instruction target %s", clip(target+body))
	}
	s.pos = i + end + 2
	return nil
}

func (s *scanner) comment(start int) error {
	i := start + 4
	end := strings.Index(s.src[i:], "--")
	if end < 0 {
		return s.fail(start, "unexpected EOF in comment")
	}
	if i+end+2 >= len(s.src) || s.src[i+end+2] != '>' {
		return s.fail(i+end, `invalid sequence "--" not allowed in comments`)
	}
	s.pos = i + end + 3
	return nil
}

// doctype skips <!DOCTYPE ...>, including an internal subset in brackets
// and quoted strings that may hold '>'.
func (s *scanner) doctype(start int) error {
	depth := 0
	for i := start + 9; i < len(s.src); i++ {
		switch c := s.src[i]; c {
		case '"', '\'':
			end := strings.IndexByte(s.src[i+1:], c)
			if end < 0 {
				return s.fail(start, "unexpected EOF in DOCTYPE")
			}
			i += 1 + end
		case '[':
			depth++
		case ']':
			depth--
		case '>':
			if depth <= 0 {
				s.pos = i + 1
				return nil
			}
		}
	}
	return s.fail(start, "unexpected EOF in DOCTYPE")
}

func (s *scanner) skipSpace(i int) int {
	for i < len(s.src) && isSpace(s.src[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// readName returns the XML name at i, and sets sawColon when it has a
// colon. Non-ASCII bytes are accepted as name characters; the input's UTF-8
// was checked before scanning.
func (s *scanner) readName(i int) (string, bool) {
	j := i
	var class byte
	for j < len(s.src) {
		c := nameClass[s.src[j]]
		if c == 0 {
			break
		}
		class |= c
		j++
	}
	s.sawColon = class&colonClass != 0
	if j == i {
		return "", false
	}
	if c := s.src[i]; c == '-' || c == '.' || (c >= '0' && c <= '9') {
		return "", false
	}
	return s.src[i:j], true
}

// nameClass is nameByte's bytes, with the colon told apart (colonClass):
// readName notes a colon in the loop that reads the name, so that only a
// prefixed name is looked at again.
var nameClass = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		if nameByte[c] {
			t[c] = 1
		}
	}
	t[':'] |= colonClass
	return t
}()

const colonClass = 2

var nameByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == ':' || c == '-' || c == '.' || c >= 0x80
	}
	return t
}()

// qualified reports whether name is prefix:local or local: at most one
// colon, and not at either end.
func qualified(name string) bool {
	return colon(name) >= -1
}

// colon is the offset of the colon of a qualified name, -1 when it has
// none, -2 when it is not qualified (two colons, or one at either end).
// Names are short: a loop beats two calls of strings.IndexByte.
func colon(name string) int {
	k := -1
	for i := 0; i < len(name); i++ {
		if name[i] == ':' {
			if k >= 0 {
				return -2
			}
			k = i
		}
	}
	if k == 0 || k == len(name)-1 {
		return -2
	}
	return k
}

// splitName splits a qualified name (checked by readName) at its colon.
func splitName(qname string) (prefix, local string) {
	if i := strings.IndexByte(qname, ':'); i >= 0 {
		return qname[:i], qname[i+1:]
	}
	return "", qname
}

// needsDecoding reports whether character data must go through decodeText:
// it holds a reference or a carriage return (XML reads CR LF and CR as LF).
func needsDecoding(text string, cdata bool) bool {
	if strings.IndexByte(text, '\r') >= 0 {
		return true
	}
	return !cdata && strings.IndexByte(text, '&') >= 0
}

// decodeText appends text with references resolved (unless cdata) and line
// ends normalised. pos is text's offset, for errors.
func decodeText(dst []byte, text string, pos int, refs bool) ([]byte, error) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\r':
			dst = append(dst, '\n')
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
		case c == '&' && refs:
			end := strings.IndexByte(text[i:], ';')
			if end < 0 {
				return nil, &syntaxError{pos: pos + i, msg: "invalid character entity " + clip(text[i:min(len(text), i+12)])}
			}
			ref := text[i+1 : i+end]
			r, ok := entity(ref)
			switch {
			case !ok:
				return nil, &syntaxError{pos: pos + i, msg: "invalid character entity &" + clip(ref) + ";"}
			case !xmlChar(r):
				return nil, &syntaxError{pos: pos + i, msg: "character reference &" + clip(ref) + "; is not a legal XML character"}
			}
			dst = utf8.AppendRune(dst, r)
			i += end
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

func entity(ref string) (rune, bool) {
	switch ref {
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "amp":
		return '&', true
	case "apos":
		return '\'', true
	case "quot":
		return '"', true
	}
	if len(ref) < 2 || ref[0] != '#' {
		return 0, false
	}
	var n uint64
	var err error
	if ref[1] == 'x' {
		if len(ref) == 2 {
			return 0, false
		}
		n, err = strconv.ParseUint(ref[2:], 16, 32)
	} else {
		n, err = strconv.ParseUint(ref[1:], 10, 32)
	}
	if err != nil || n > utf8.MaxRune {
		return 0, false
	}
	return rune(n), true
}

// checkChars finds the first byte that is not part of a legal XML 1.0
// character: a C0 control other than tab, LF and CR, invalid UTF-8, a
// surrogate or U+FFFE/U+FFFF.
func checkChars(src string) error {
	// The loop below is the cost of one read of the input. Printable ASCII,
	// nearly all of an MX document, is passed eight bytes at a time: a word
	// has a byte outside 0x20–0x7F exactly when a byte's top bit is set, or
	// becomes set when 0x20 is taken from every byte (a byte below 0x20
	// borrows). A word that fails is tried once more with its tabs, LFs and
	// CRs (indentation: most words of an indented document) made printable
	// by setting their 0x20 bit; one that fails again is read byte by byte.
	const low, top = 0x2020202020202020, 0x8080808080808080
	for i := 0; i < len(src); {
		if i+8 <= len(src) {
			b := src[i : i+8]
			w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
				uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
			if (w|(w-low))&top == 0 {
				i += 8
				continue
			}
			if w&top == 0 {
				sp := zeroBytes(w^0x0909090909090909) | zeroBytes(w^0x0a0a0a0a0a0a0a0a) | zeroBytes(w^0x0d0d0d0d0d0d0d0d)
				if w |= sp >> 2; (w|(w-low))&top == 0 {
					i += 8
					continue
				}
			}
		}
		c := src[i]
		if c >= 0x20 && c < 0x80 {
			i++
			continue
		}
		if c < 0x80 {
			if c == '\t' || c == '\n' || c == '\r' {
				i++
				continue
			}
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

// zeroBytes has the top bit set in exactly the bytes of w that are zero
// (no borrow crosses a byte: the low seven bits are added apart).
func zeroBytes(w uint64) uint64 {
	const seven = 0x7f7f7f7f7f7f7f7f
	return ^(((w & seven) + seven) | w | seven)
}

// prepare turns input into the UTF-8 text the scanner reads: the byte-order
// mark dropped, UTF-16 (recognised by its byte-order mark) and a declared
// single-byte encoding transcoded. Windows-1252 differs from Latin-1 only in
// 0x80–0x9F, which are read as Latin-1 as well: those are punctuation marks,
// never amounts or codes.
func prepare(input []byte) (string, error) {
	if in, wide := fromUTF16(input); wide {
		return string(in), nil // the byte-order mark decides, whatever is declared
	}
	input = trimBOM(input)
	label := declaredEncoding(input)
	switch lowerLabel(label) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		return string(input), nil
	case "iso-8859-1", "latin1", "latin-1", "iso-8859-15", "windows-1252", "cp1252":
		out := make([]byte, 0, len(input)+len(input)/8)
		for _, c := range input {
			if c < 0x80 {
				out = append(out, c)
			} else {
				out = append(out, 0xC0|c>>6, 0x80|c&0x3F)
			}
		}
		return string(out), nil
	}
	return "", &syntaxError{pos: 0, msg: fmt.Sprintf("unsupported encoding %q", clip(string(label)))}
}

// knownLabels are the encoding labels prepare reads, lower case.
var knownLabels = []string{"", "utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin1", "latin-1", "iso-8859-15", "windows-1252", "cp1252"}

// lowerLabel is strings.ToLower(label) when that is one of knownLabels (the
// constant, so nothing is copied), else a string that is none of them.
// Labels are lowered in a stack buffer, ASCII letters only: every known
// label is ASCII without a 'k', so no other letter lowers into one (as the
// Kelvin sign does to 'k' through strings.ToLower).
func lowerLabel(label []byte) string {
	var buf [16]byte
	if len(label) > len(buf) {
		return "\x00unknown"
	}
	for i, c := range label {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	for _, k := range knownLabels {
		if string(buf[:len(label)]) == k {
			return k
		}
	}
	return "\x00unknown"
}

func trimBOM(b []byte) []byte {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return b[3:]
	}
	return b
}

// declaredEncoding reads encoding="…" from an XML declaration at the start,
// in place.
func declaredEncoding(input []byte) []byte {
	const decl = "<?xml"
	if len(input) < len(decl)+1 || string(input[:len(decl)]) != decl || !isSpace(input[len(decl)]) {
		return nil
	}
	end := len(input)
	for i := len(decl); i+1 < len(input); i++ {
		if input[i] == '?' && input[i+1] == '>' {
			end = i
			break
		}
	}
	rest := input[len(decl):end]
	for len(rest) > 0 {
		name, value, r, ok := nextAttrBytes(rest)
		if !ok {
			return nil
		}
		if string(name) == "encoding" {
			return value
		}
		rest = r
	}
	return nil
}

// nextAttrBytes is nextAttr over bytes.
func nextAttrBytes(attrs []byte) (name, value, rest []byte, ok bool) {
	attrs = bytes.TrimLeft(attrs, " \t\r\n")
	eq := bytes.IndexByte(attrs, '=')
	if eq < 0 {
		return nil, nil, nil, false
	}
	name = bytes.TrimRight(attrs[:eq], " \t\r\n")
	v := bytes.TrimLeft(attrs[eq+1:], " \t\r\n")
	if len(v) == 0 {
		return nil, nil, nil, false
	}
	end := bytes.IndexByte(v[1:], v[0])
	if end < 0 {
		return nil, nil, nil, false
	}
	return name, v[1 : 1+end], v[end+2:], true
}

// fromUTF16 transcodes input that starts with a UTF-16 byte-order mark, as
// Windows tools write XML, to UTF-8, and reports whether it did. Unpaired
// surrogates and an odd last byte become U+FFFD.
func fromUTF16(input []byte) ([]byte, bool) {
	var order binary.ByteOrder
	switch {
	case len(input) >= 2 && input[0] == 0xFF && input[1] == 0xFE:
		order = binary.LittleEndian
	case len(input) >= 2 && input[0] == 0xFE && input[1] == 0xFF:
		order = binary.BigEndian
	default:
		return input, false
	}
	body := input[2:]
	units := make([]uint16, len(body)/2)
	for i := range units {
		units[i] = order.Uint16(body[2*i:])
	}
	out := make([]byte, 0, len(units)+len(units)/4)
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	if len(body)%2 == 1 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return out, true
}
