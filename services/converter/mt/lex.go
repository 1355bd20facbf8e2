package mt

import (
	"strings"
	"sync"
)

// The lexer splits an input file into messages and fields. It works line by
// line over one string copy of the input, so field values are substrings and
// allocations stay proportional to the number of fields, not their size.
//
// Real files are messy (see shared/samples/mt): bank headers before the first
// field, bare block-4 text with or without "-" separators, FIN envelopes,
// several messages without separators (a new :20: starts a new one), tags
// broken over lines. Each accommodation is reported as a warning.

type rawField struct {
	tag      string // "61", "60F", "NS"
	line     int    // 1-based line of the tag
	from, to int    // the field's lines in rawMessage.lines; the first is the text after the tag
}

type rawMessage struct {
	no         int // 1-based
	line       int // line where the message starts
	block1     string
	block2     string
	typeHint   string // "940", "941", "942", "950", … from block 2 or a bank header line
	fin        bool   // had a FIN {4: block
	block5     bool
	terminated bool
	fields     []rawField // window on the lexer's field arena
	lines      []string   // the lexer's line arena; fields index into it
	ff         int        // index of the message's first field in the arena
}

// knownTags are the fields of MT940, MT941, MT942 and MT950 (plus the legacy :28:
// and :13:). Anything else is reported and skipped, or inside :86: taken as
// text that merely looks like a tag.
func knownTag(t string) bool {
	switch t {
	case "20", "21", "25", "25P", "28", "28C", "34F", "13", "13D", "60F", "60M",
		"61", "86", "62F", "62M", "64", "65", "90D", "90C":
		return true
	}
	return false
}

type lexer struct {
	w        *warner
	msgs     []*rawMessage
	cur      *rawMessage // open message (bare or FIN block 4), nil when outside
	inBlock4 bool
	// Header state collected outside a message, given to the next one.
	pendBlock1, pendBlock2, pendHint string
	pendHeader                       int // skipped header lines
	pendHeaderLine                   int
	colonLine                        int // line of a lone ":" awaiting its tag on the next line
	// keep86 keeps the trailing spaces of :86: lines (field86Profile
	// german): the structured form joins its lines without a separator, so
	// a space at a line's end is part of the text (?32Mueller + GmbH).
	keep86 bool
	// raw is the current line before its trailing spaces were cut, when it
	// had any; kept is set when content stored it so.
	raw     string
	rawTrim int // length of raw without its trailing spaces
	kept    bool
	// Arenas shared by all messages: a message's fields and lines are
	// windows on them, so the lexer allocates a few large slices instead of
	// several small ones per message.
	lines  []string
	fields []rawField
	arenas *lexArenas   // where lines and fields came from, to give them back
	slab   []rawMessage // messages are taken from chunks of this, not allocated one by one
	n61    int          // :61: fields, so the parser can size its entry arena
	nbal   int          // balance fields, for the same reason
}

// maxMessages bounds the work one input can cause; 2 MiB of input cannot hold
// more real messages than this.
const maxMessages = 1 << 17

func lex(input string, w *warner, keep86 bool) *lexer {
	// A byte-order mark and old Mac line ends (CR only) come from desktop
	// tools; neither changes the content.
	input = strings.TrimPrefix(input, "\ufeff")
	if strings.IndexByte(input, '\n') < 0 && strings.IndexByte(input, '\r') >= 0 {
		input = strings.ReplaceAll(input, "\r", "\n")
	}
	// Counting bytes is far cheaper than growing the arenas: every stored
	// line is an input line, and every field tag holds two colons. The
	// counts are capped at what statement-like text can hold, so that an
	// input of nothing but line breaks or colons does not reserve many
	// times its size up front; the arenas still grow if it needs them.
	nLines := min(strings.Count(input, "\n")+1, len(input)/16+4)
	nFields := min(strings.Count(input, ":")/2+1, len(input)/24+4)
	lx := &lexer{w: w, arenas: getArenas(nLines, nFields), keep86: keep86}
	lx.lines, lx.fields = lx.arenas.lines, lx.arenas.fields
	lineNo := 0
	for len(input) > 0 {
		lineNo++
		var line string
		line, input, _ = strings.Cut(input, "\n")
		line = strings.TrimSuffix(line, "\r")
		lx.line(line, lineNo)
	}
	if lx.cur != nil {
		if lx.inBlock4 {
			w.add(CodeMissingEnd, lx.cur.no, lineNo, "", "block 4 is not closed with \"-}\"")
		}
		lx.close()
	}
	for _, m := range lx.msgs {
		if m.fin && !m.block5 {
			// One warning for the file: the trailer is optional for reading.
			w.add(CodeMissingBlock5, 0, m.line, "", "FIN message without trailer block {5:}")
		}
	}
	return lx
}

// The line and field arenas hold only string headers the parser copies
// into statements, so they are garbage once Parse returns: release hands
// them back for the next input instead of leaving them to the collector.
type lexArenas struct {
	lines  []string
	fields []rawField
}

var arenaPool sync.Pool // of *lexArenas

// maxPooledLines keeps arenas of unusually large inputs out of the pool.
const maxPooledLines = 1 << 18

func getArenas(nLines, nFields int) *lexArenas {
	a, _ := arenaPool.Get().(*lexArenas)
	if a == nil {
		a = &lexArenas{}
	}
	if cap(a.lines) < nLines {
		a.lines = make([]string, 0, nLines)
	}
	if cap(a.fields) < nFields {
		a.fields = make([]rawField, 0, nFields)
	}
	return a
}

// release returns the arenas to the pool, cleared so that they do not keep
// the input alive. Nothing may use the messages afterwards.
func (lx *lexer) release() {
	if cap(lx.lines) > maxPooledLines || cap(lx.fields) > maxPooledLines {
		return
	}
	clear(lx.lines)
	clear(lx.fields)
	lx.arenas.lines, lx.arenas.fields = lx.lines[:0], lx.fields[:0]
	arenaPool.Put(lx.arenas)
	lx.lines, lx.fields, lx.msgs, lx.arenas = nil, nil, nil, nil
}

func (lx *lexer) open(lineNo int, fin bool) {
	if len(lx.slab) == cap(lx.slab) {
		// Chunks double so a short input does not pay for many messages.
		lx.slab = make([]rawMessage, 0, min(max(2*cap(lx.slab), 2), 128))
	}
	lx.slab = append(lx.slab, rawMessage{no: len(lx.msgs) + 1, line: lineNo, fin: fin, ff: len(lx.fields),
		block1: lx.pendBlock1, block2: lx.pendBlock2, typeHint: lx.pendHint})
	m := &lx.slab[len(lx.slab)-1]
	if len(m.block2) >= 4 && (m.block2[0] == 'I' || m.block2[0] == 'O') {
		m.typeHint = m.block2[1:4]
	}
	lx.pendBlock1, lx.pendBlock2, lx.pendHint = "", "", ""
	if lx.pendHeader > 0 {
		lx.w.add(CodeHeaderLines, m.no, lx.pendHeaderLine, "", "skipped "+itoa(lx.pendHeader)+" header line(s) before the message")
		lx.pendHeader = 0
	}
	lx.cur = m
	lx.inBlock4 = fin
}

func (lx *lexer) close() {
	if lx.cur == nil {
		return
	}
	if lx.colonLine > 0 {
		lx.appendText(":", lx.colonLine)
		lx.colonLine = 0
	}
	if m := lx.cur; len(lx.msgs) < maxMessages && len(lx.fields) > m.ff {
		m.lines, m.fields = lx.lines, lx.fields[m.ff:]
		lx.msgs = append(lx.msgs, m)
		for _, f := range m.fields {
			switch f.tag {
			case "61":
				lx.n61++
			case "60F", "60M", "62F", "62M", "64", "65":
				lx.nbal++
			}
		}
	}
	lx.cur = nil
	lx.inBlock4 = false
}

func (lx *lexer) header(lineNo int) {
	if lx.pendHeader == 0 {
		lx.pendHeaderLine = lineNo
	}
	lx.pendHeader++
}

func (lx *lexer) line(line string, lineNo int) {
	t := line
	for len(t) > 0 && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t') {
		t = t[:len(t)-1]
	}
	if len(t) != len(line) && lx.cur != nil && strings.TrimSpace(t) != "" {
		// Reported once the line's place is known: a :86: line that keeps
		// its spaces lost nothing.
		lx.raw, lx.rawTrim, lx.kept = line, len(t), false
		no := lx.cur.no
		defer func() {
			if !lx.kept {
				lx.w.add(CodeTrailingSpace, no, lineNo, "", "trailing spaces removed")
			}
			lx.raw = ""
		}()
	}
	switch {
	case lx.cur != nil && lx.inBlock4:
		if strings.HasPrefix(t, "-}") || t == "-" {
			// With "-" and "}" on separate lines the "}" is skipped by blocks.
			lx.cur.terminated = true
			lx.close()
			if len(t) > 2 {
				lx.blocks(t[2:], lineNo)
			}
			return
		}
		if finBlockStart(t) {
			lx.w.add(CodeMissingEnd, lx.cur.no, lineNo, "", "block 4 is not closed with \"-}\"")
			lx.close()
			lx.blocks(t, lineNo)
			return
		}
		lx.content(t, lineNo)
	case lx.cur != nil && !lx.cur.fin:
		if t == "-" || t == "-}" {
			lx.cur.terminated = true
			lx.close()
			return
		}
		if finBlockStart(t) {
			lx.close()
			lx.blocks(t, lineNo)
			return
		}
		lx.content(t, lineNo)
	default:
		// Outside a message, or after a FIN block 4 waiting for {5: or the next {1:.
		if s := strings.TrimLeft(t, " \t\x01\x02\x03"); strings.HasPrefix(s, "{") || strings.HasPrefix(s, "}") {
			lx.blocks(s, lineNo)
			return
		}
		if _, _, ok := splitTag(t); ok || (t == ":" && lx.cur == nil) {
			lx.close()
			lx.open(lineNo, false)
			lx.content(t, lineNo)
			return
		}
		if strings.Trim(t, " \t\x00\x01\x02\x03\x1a") == "" || t == "-" {
			return
		}
		if lx.cur == nil {
			if h := headerType(t); h != "" {
				lx.pendHint = h
			}
		}
		lx.header(lineNo)
	}
}

// headerType recognises the message type in bank header lines such as
// "940", "940 00" or ":940:".
func headerType(t string) string {
	t = strings.Trim(t, ": ")
	if len(t) >= 3 && (t[:3] == "940" || t[:3] == "941" || t[:3] == "942" || t[:3] == "950") && (len(t) == 3 || t[3] == ' ') {
		return t[:3]
	}
	return ""
}

// blocks reads FIN blocks {n:...} on one line. Block 4 opens a message and
// the rest of the line is its first content line.
func (lx *lexer) blocks(s string, lineNo int) {
	for {
		s = strings.TrimLeft(s, " \t}\x01\x02\x03")
		if s == "" {
			return
		}
		if s[0] != '{' {
			if lx.cur == nil {
				lx.header(lineNo)
			}
			return
		}
		colon := strings.IndexByte(s, ':')
		if colon < 0 {
			return
		}
		id := s[1:colon]
		if id == "4" {
			lx.close()
			lx.open(lineNo, true)
			if rest := strings.TrimSpace(s[colon+1:]); rest != "" {
				lx.line(rest, lineNo)
			}
			return
		}
		// Blocks 3 and 5 nest {tag:value} pairs: find the matching brace.
		depth, end := 0, -1
		for i := 0; i < len(s) && end < 0; i++ {
			switch s[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = i
				}
			}
		}
		content := ""
		switch {
		case end < 0:
			content, s = s[colon+1:], ""
		case end < colon:
			// "{x}" without a colon: not a block we read.
			id, s = "", s[end+1:]
		default:
			content, s = s[colon+1:end], s[end+1:]
		}
		switch id {
		case "1":
			lx.pendBlock1 = content
		case "2":
			lx.pendBlock2 = content
		case "5":
			if n := len(lx.msgs); n > 0 && lx.cur == nil {
				lx.msgs[n-1].block5 = true
			}
		}
	}
}

// splitTag recognises ":TAG:" at the start of a line: two digits and an
// optional letter (":61:", ":60F:", ":25P:"), or two letters (":NS:", a
// bank-specific field that is reported and skipped).
func splitTag(t string) (tag, rest string, ok bool) {
	// The closing colon is the first one after the opening colon, at
	// index 3 or 4 of the line.
	if len(t) < 4 || t[0] != ':' || t[1] == ':' || t[2] == ':' {
		return "", "", false
	}
	end := 2
	if t[3] != ':' {
		if len(t) < 5 || t[4] != ':' {
			return "", "", false
		}
		end = 3
	}
	tag = t[1 : 1+end]
	switch {
	case isDigit(tag[0]) && isDigit(tag[1]) && (len(tag) == 2 || isLetter(tag[2])):
	case len(tag) == 2 && isUpper(tag[0]) && isUpper(tag[1]):
	default:
		return "", "", false
	}
	if len(tag) == 3 && tag[2] >= 'a' {
		tag = tag[:2] + string(tag[2]-'a'+'A')
	}
	return tag, t[2+end:], true
}

// content handles one line inside an open message.
func (lx *lexer) content(t string, lineNo int) {
	m := lx.cur
	if lx.colonLine > 0 {
		// A tag broken after its leading colon: ":" then "86:...".
		cl := lx.colonLine
		lx.colonLine = 0
		if tag, rest, ok := splitTag(":" + t); ok {
			lx.w.add(CodeFieldWrapped, m.no, cl, ":"+tag+":", "tag broken over two lines")
			lx.field(tag, rest, cl)
			return
		}
		lx.appendText(":", cl)
	}
	if t == ":" {
		lx.colonLine = lineNo
		return
	}
	if tag, rest, ok := splitTag(t); ok {
		last := ""
		if len(lx.fields) > m.ff {
			last = lx.fields[len(lx.fields)-1].tag
		}
		if !knownTag(tag) && last == "86" {
			// Free text of :86: that happens to start like a tag (":26:37 Fo").
			lx.w.add(CodeFieldWrapped, m.no, lineNo, ":86:", "text that looks like a tag kept as part of :86:")
			lx.appendText(t, lineNo)
			return
		}
		if tag == "20" && len(lx.fields) > m.ff {
			// A new :20: without a "-" separator starts the next message.
			fin := m.fin
			if fin {
				lx.w.add(CodeMissingEnd, m.no, lineNo, "", "block 4 is not closed before the next :20:")
			}
			lx.close()
			lx.open(lineNo, fin)
		}
		lx.field(tag, rest, lineNo)
		return
	}
	if strings.TrimSpace(t) == "" {
		lx.w.add(CodeBlankLine, m.no, lineNo, "", "blank line skipped")
		return
	}
	if len(lx.fields) == m.ff {
		lx.header(lineNo)
		return
	}
	switch last := lx.fields[len(lx.fields)-1].tag; last {
	case "86", "61", "25P":
		// Fields that SWIFT lets span lines.
	default:
		if knownTag(last) {
			// Banks put their header lines between messages without a "-"
			// (ABNANL2A / 940 / ABNANL2A after :62F:); single-line fields
			// never continue.
			lx.w.add(CodeHeaderLines, m.no, lineNo, "", "text outside any field skipped")
			return
		}
	}
	lx.appendText(t, lineNo)
}

// field starts a field of the open message. Its fields are the arena's
// tail from cur.ff; close gives the message its windows.
func (lx *lexer) field(tag, rest string, lineNo int) {
	if tag == "86" {
		rest = lx.keepSpaces(rest)
	}
	lx.lines = append(lx.lines, rest)
	lx.fields = append(lx.fields, rawField{tag: tag, line: lineNo, from: len(lx.lines) - 1, to: len(lx.lines)})
}

func (lx *lexer) appendText(t string, lineNo int) {
	if len(lx.fields) == lx.cur.ff {
		lx.header(lineNo)
		return
	}
	// Continuation lines always belong to the last field, whose lines are
	// the tail of the line arena.
	if lx.fields[len(lx.fields)-1].tag == "86" {
		t = lx.keepSpaces(t)
	}
	lx.lines = append(lx.lines, t)
	lx.fields[len(lx.fields)-1].to = len(lx.lines)
}

// keepSpaces returns t, the end of the current line without its trailing
// spaces, with them again when :86: lines keep theirs.
func (lx *lexer) keepSpaces(t string) string {
	if !lx.keep86 || lx.raw == "" || !strings.HasSuffix(lx.raw[:lx.rawTrim], t) {
		return t
	}
	lx.kept = true
	// t ends where the trimmed line ends; the spaces follow it in raw.
	return lx.raw[lx.rawTrim-len(t):]
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLetter(c byte) bool { return isUpper(c) || (c >= 'a' && c <= 'z') }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// finBlockStart reports whether a line starts a FIN header block, which
// ends any message still open. Other text in braces is field content.
func finBlockStart(t string) bool {
	return len(t) >= 3 && t[0] == '{' && t[2] == ':' && (t[1] == '1' || t[1] == '2' || t[1] == '3' || t[1] == '4')
}
