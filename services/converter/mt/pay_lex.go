package mt

import (
	"bytes"
	"strings"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// The payment reader splits input into FIN messages (blocks 1 to 5) and
// block 4 into fields. Payment files are produced by systems, not typed by
// hand, so it is stricter than the statement lexer: a field is a line that
// starts with ":NNa:", other lines continue the field before them.

type finField struct {
	tag   string   // "32A", "50F", "72"
	lines []string // the value's lines; the first is the text after the tag
	line  int      // 1-based input line of the tag
}

type finMessage struct {
	no             int // 1-based
	line           int // line where the message starts
	block1, block2 string
	block3         map[string]string // "121" → UETR, "119" → STP/COV/REMIT, "108" → MUR
	fields         []finField
	endLine        int
}

// maxPayMessages bounds the messages one input can hold.
const maxPayMessages = 1 << 14

// splitFIN splits input into messages. Bare block-4 text (fields without a
// {4: block) is one message per run of fields ended by a "-" line.
func splitFIN(input []byte) ([]*finMessage, error) {
	return splitFINText(finText(input))
}

// finText is input as a string without a byte-order mark, with CR LF and
// lone CR read as LF, in one copy: FIN text ends every line with CR LF, and
// replacing them after a conversion cost two more copies of every message.
func finText(input []byte) string {
	input = bytes.TrimPrefix(input, []byte("\ufeff"))
	cr := bytes.IndexByte(input, '\r')
	if cr < 0 {
		return string(input)
	}
	var b strings.Builder
	b.Grow(len(input))
	for cr >= 0 {
		b.Write(input[:cr])
		b.WriteByte('\n')
		input = input[cr+1:]
		if len(input) > 0 && input[0] == '\n' {
			input = input[1:]
		}
		cr = bytes.IndexByte(input, '\r')
	}
	b.Write(input)
	return b.String()
}

// splitFINText is splitFIN over text already read by finText.
//
// It stays one function over 100 lines (issue 31 allows five): a single-pass
// scanner whose state (line, current message, block) lives in its locals;
// split, every step would take and return that state on the hot path.
func splitFINText(input string) ([]*finMessage, error) {
	var msgs []*finMessage
	var cur *finMessage
	line := 1
	newMsg := func() *finMessage {
		m := &finMessage{no: len(msgs) + 1, line: line}
		msgs = append(msgs, m)
		return m
	}
	i := 0
	for i < len(input) {
		if len(msgs) > maxPayMessages {
			return nil, &statement.ParseError{Line: line, Reason: "more than 16384 messages in one input"}
		}
		c := input[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\x01' || c == '\x03' || c == '}':
			// Spaces, SOH/ETX framing and a stray '}' after block 4 ("-}}")
			// carry nothing.
			i++
			continue
		case c == '{' && i+2 < len(input) && input[i+2] == ':' && input[i+1] >= '1' && input[i+1] <= '5':
			n := input[i+1]
			if cur == nil || (n == '1' && cur.block1 != "") || (n == '1' && len(cur.fields) > 0) ||
				(n == '2' && (cur.block2 != "" || len(cur.fields) > 0)) {
				cur = newMsg()
			}
			start := i + 3
			switch n {
			case '1', '2':
				end := strings.IndexByte(input[start:], '}')
				if end < 0 {
					return nil, &statement.ParseError{Message: cur.no, Line: line, Field: "{" + string(n) + ":}", Reason: "block is not closed with }"}
				}
				v := input[start : start+end]
				if n == '1' {
					cur.block1 = v
				} else {
					cur.block2 = v
				}
				line += strings.Count(v, "\n")
				i = start + end + 1
			case '3', '5':
				end, err := nestedEnd(input, start)
				if err != "" {
					return nil, &statement.ParseError{Message: cur.no, Line: line, Field: "{" + string(n) + ":}", Reason: err}
				}
				if n == '3' {
					cur.block3 = subBlocks(input[start:end])
				}
				line += strings.Count(input[i:end], "\n")
				i = end + 1
			case '4':
				end := strings.Index(input[start:], "\n-}")
				endLen := 3
				if end < 0 {
					end = strings.Index(input[start:], "-}")
					endLen = 2
				}
				if end < 0 {
					return nil, &statement.ParseError{Message: cur.no, Line: line, Field: "{4:}", Reason: "block 4 is not closed with -}"}
				}
				body := input[start : start+end]
				if err := cur.readFields(body, line); err != nil {
					return nil, err
				}
				line += strings.Count(input[i:start+end+endLen], "\n")
				cur.endLine = line
				i = start + end + endLen
			}
		case c == ':' || c == '-':
			// Bare block 4: fields up to a "-" line or the end.
			end := len(input)
			if j := strings.Index(input[i:], "\n-"); j >= 0 {
				end = i + j + 1
			}
			if c == '-' {
				end = i
				k := strings.IndexByte(input[i:], '\n')
				if k < 0 {
					k = len(input) - i
				}
				i += k
				cur = nil
				continue
			}
			if cur == nil || len(cur.fields) > 0 {
				cur = newMsg()
			}
			if err := cur.readFields(input[i:end], line); err != nil {
				return nil, err
			}
			line += strings.Count(input[i:end], "\n")
			i = end
		default:
			return nil, &statement.ParseError{Message: len(msgs), Line: line, Reason: "unexpected text outside the FIN blocks"}
		}
	}
	if len(msgs) == 0 {
		return nil, &statement.ParseError{Line: 1, Reason: "no MT message found"}
	}
	for _, m := range msgs {
		if len(m.fields) == 0 {
			return nil, &statement.ParseError{Message: m.no, Line: m.line, Field: "{4:}", Reason: "message has no text block (block 4)"}
		}
	}
	return msgs, nil
}

// nestedEnd finds the '}' that closes a block of {tag:value} sub-blocks
// starting at start.
func nestedEnd(s string, start int) (int, string) {
	depth := 1
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
			if depth > 3 {
				return 0, "blocks nested too deep"
			}
		case '}':
			depth--
			if depth == 0 {
				return i, ""
			}
		}
	}
	return 0, "block is not closed with }"
}

// subBlocks reads "{121:abc}{119:STP}" into a map.
func subBlocks(s string) map[string]string {
	out := map[string]string{}
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return out
		}
		s = s[i+1:]
		j := strings.IndexByte(s, '}')
		if j < 0 {
			return out
		}
		if tag, v, ok := strings.Cut(s[:j], ":"); ok {
			out[tag] = v
		}
		s = s[j+1:]
	}
}

// readFields splits block 4 text into fields; first is the input line the
// text starts on.
func (m *finMessage) readFields(body string, first int) error {
	// A field's lines are consecutive, so the lines of the block go into one
	// slice (it never grows: one element per line at most) and each field's
	// lines are a window of it, capped so that an append elsewhere copies:
	// two allocations per message instead of one per field (issue 30).
	lines := make([]string, 0, strings.Count(body, "\n")+1)
	if m.fields == nil {
		m.fields = make([]finField, 0, min(strings.Count(body, "\n:")+1, 256))
	}
	own := len(m.fields) // fields before it came from another block 4
	ln := first
	for len(body) > 0 {
		var l string
		l, body, _ = strings.Cut(body, "\n")
		l = strings.TrimRight(l, " \t")
		if tag, rest, ok := fieldTag(l); ok {
			if len(m.fields) >= 256 {
				return &statement.ParseError{Message: m.no, Line: ln, Reason: "more than 256 fields in one message"}
			}
			lines = append(lines, rest)
			k := len(lines)
			m.fields = append(m.fields, finField{tag: tag, lines: lines[k-1 : k : k], line: ln})
		} else if len(m.fields) > 0 {
			f := &m.fields[len(m.fields)-1]
			switch {
			case len(f.lines) >= 64:
			case len(m.fields) > own:
				// f's lines end the slice: extend its window by this line.
				lines = append(lines, l)
				k := len(lines)
				f.lines = lines[k-1-len(f.lines) : k : k]
			default:
				f.lines = append(f.lines, l)
			}
		} else if l != "" {
			return &statement.ParseError{Message: m.no, Line: ln, Reason: "text before the first field of block 4"}
		}
		ln++
	}
	return nil
}

// fieldTag splits ":32A:rest" into its tag and the rest.
func fieldTag(l string) (tag, rest string, ok bool) {
	if len(l) < 4 || l[0] != ':' || l[1] < '0' || l[1] > '9' || l[2] < '0' || l[2] > '9' {
		return "", "", false
	}
	switch {
	case l[3] == ':':
		return l[1:3], l[4:], true
	case len(l) >= 5 && l[3] >= 'A' && l[3] <= 'Z' && l[4] == ':':
		return l[1:4], l[5:], true
	}
	return "", "", false
}
