package mx

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ledgerlane/platform/services/converter/statement"
)

// A payment message is small (a few kilobytes, one to a few transactions),
// so the pacs reader builds a light tree of it with the same tokenizer the
// camt reader uses, then reads the tree by paths. Every node whose text is
// not read by the mapping is reported (PAY_FIELD_DROPPED) by its path, so
// nothing the model has no place for disappears silently.

// node is one element. It holds offsets into the tree's source rather than
// strings, so a node slice has no pointers: the collector neither scans the
// pooled slices nor runs write barriers while the parser fills them, which
// was a tenth of reading a payment message (issue 30).
type node struct {
	qname      span // prefix:local or local
	local      int  // offset of the local name in src (qname.off when unprefixed)
	attrs      span // raw attribute text of the start tag
	text       span // see tree.text
	pos        int  // byte offset of the start tag
	parent     int  // -1 for a root
	first      int  // first child, -1 when none
	last       int
	next       int // next sibling, -1 when none
	used       bool
	hasElement bool
}

// span is src[off:end]; a text span with off < 0 is tree.extra[-off-1].
type span struct{ off, end int }

type tree struct {
	src   string
	nodes []node
	roots []int
	// extra holds the texts that are not one piece of src: decoded
	// references or CR, or text in several pieces (around a comment or a
	// CDATA section). Rare; nil for most messages.
	extra []string
	// pooled is where nodes came from in nodePool; release gives it back.
	pooled *[]node
}

// maxNodes bounds the tree; a payment message has a few hundred elements.
const maxNodes = 1 << 16

// nodePool keeps node slices between messages: a tree is dropped once its
// message is read (the payments keep strings, never nodes), and a new slice
// per message was the largest allocation of reading one (issue 30).
var nodePool = sync.Pool{New: func() any { return new([]node) }}

// maxPooledNodes: the slice of a larger message is left to the collector
// rather than kept.
const maxPooledNodes = 4096

// release gives the tree's nodes back to nodePool. The caller must not use
// t afterwards. Nodes hold offsets, not strings, so a pooled slice keeps no
// input alive.
func (t *tree) release() {
	if t.pooled == nil || cap(t.nodes) > maxPooledNodes {
		return
	}
	*t.pooled = t.nodes[:0]
	nodePool.Put(t.pooled)
	t.nodes, t.pooled = nil, nil
}

// name is the local name of node id.
func (t *tree) name(id int) string { return t.src[t.nodes[id].local:t.nodes[id].qname.end] }

// qname is the qualified name of node id, as its tags spell it.
func (t *tree) qname(id int) string {
	q := t.nodes[id].qname
	return t.src[q.off:q.end]
}

// prefix is the namespace prefix of node id, "" when none.
func (t *tree) prefix(id int) string {
	n := &t.nodes[id]
	if n.local == n.qname.off {
		return ""
	}
	return t.src[n.qname.off : n.local-1]
}

// attrs is the raw attribute text of node id's start tag.
func (t *tree) attrs(id int) string {
	a := t.nodes[id].attrs
	return t.src[a.off:a.end]
}

// text is the trimmed text of node id ("" for an element with children).
func (t *tree) text(id int) string {
	s := t.nodes[id].text
	if s.off < 0 {
		return t.extra[-s.off-1]
	}
	return t.src[s.off:s.end]
}

// appendText adds one piece of character data to node id's text: a piece of
// src [off, off+len(piece)) as a span when it is the first, else (or when
// decoded) a string in extra.
func (t *tree) appendText(id int, piece string, off int, decoded bool) {
	n := &t.nodes[id]
	if !decoded && n.text.off >= 0 && n.text.off == n.text.end {
		n.text = span{off, off + len(piece)}
		return
	}
	if n.text.off < 0 {
		t.extra[-n.text.off-1] += piece
		return
	}
	t.extra = append(t.extra, t.src[n.text.off:n.text.end]+piece)
	n.text = span{-len(t.extra), 0}
}

// trimText trims the space around node id's text, as it is read.
func (t *tree) trimText(id int) {
	n := &t.nodes[id]
	if n.text.off < 0 {
		t.extra[-n.text.off-1] = strings.TrimSpace(t.extra[-n.text.off-1])
		return
	}
	for n.text.off < n.text.end && asciiSpace(t.src[n.text.off]) {
		n.text.off++
	}
	for n.text.end > n.text.off && asciiSpace(t.src[n.text.end-1]) {
		n.text.end--
	}
	if n.text.off < n.text.end && (t.src[n.text.off] >= utf8.RuneSelf || t.src[n.text.end-1] >= utf8.RuneSelf) {
		// Possibly Unicode space at an end: trimmed as strings.TrimSpace
		// does, keeping the offsets.
		s := t.src[n.text.off:n.text.end]
		l := strings.TrimLeftFunc(s, unicode.IsSpace)
		n.text.off += len(s) - len(l)
		n.text.end = n.text.off + len(strings.TrimRightFunc(l, unicode.IsSpace))
	}
}

// asciiSpace is strings.TrimSpace's set of ASCII white space.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseTree reads input into a tree. Faults are *statement.ParseError.
//
// It stays one function over 100 lines (issue 31 allows five): the XML
// scanner's loop, whose state (current node, depth, pending text) lives in its
// locals on the hot path of every MX conversion.
func parseTree(input []byte) (*tree, error) {
	src, err := prepare(input)
	if err != nil {
		return nil, &statement.ParseError{Line: 1, Reason: "malformed XML: " + err.Error()}
	}
	pooled := nodePool.Get().(*[]node)
	nodes := (*pooled)[:0]
	if want := min(strings.Count(src, "<")/2+1, maxNodes); cap(nodes) < want {
		nodes = make([]node, 0, want)
	}
	t := &tree{src: src, nodes: nodes, pooled: pooled}
	sc := scanner{src: src}
	fail := func(pos int, format string, args ...any) error {
		return &statement.ParseError{Line: sc.line(pos), Field: t.pathOf(len(t.nodes) - 1), Reason: fmt.Sprintf(format, args...)}
	}
	if bad, ok := checkChars(src).(*syntaxError); ok && bad != nil {
		return nil, &statement.ParseError{Line: sc.line(bad.pos), Reason: "malformed XML: " + bad.msg}
	}
	// Most documents have no reference and no CR anywhere: then no text
	// needs decoding, found with two fast scans of the whole instead of
	// two per text.
	plain := strings.IndexByte(src, '&') < 0 && strings.IndexByte(src, '\r') < 0
	cur := -1
	depth := 0
	var text []byte
	for {
		start := sc.pos
		if err := sc.next(); err != nil {
			if se, ok := err.(*syntaxError); ok {
				return nil, fail(se.pos, "malformed XML: %s", se.msg)
			}
			return nil, fail(start, "malformed XML: %v", err)
		}
		switch sc.kind {
		case tokEOF:
			if cur >= 0 {
				return nil, fail(len(src), "malformed XML: unexpected EOF inside <%s>", clip(t.name(cur)))
			}
			if len(t.roots) == 0 {
				return nil, &statement.ParseError{Line: 1, Reason: "no XML element found"}
			}
			return t, nil
		case tokStart:
			if len(t.nodes) >= maxNodes {
				return nil, fail(start, "more than %d elements", maxNodes)
			}
			if depth >= maxDepth {
				return nil, fail(start, "elements nested deeper than %d", maxDepth)
			}
			local := sc.nameOff
			if sc.colon >= 0 {
				local += sc.colon + 1
			}
			t.nodes = append(t.nodes, node{qname: span{sc.nameOff, sc.nameEnd}, local: local, attrs: span{sc.attrOff, sc.attrEnd},
				pos: start, parent: cur, first: -1, last: -1, next: -1})
			id := len(t.nodes) - 1
			if cur < 0 {
				t.roots = append(t.roots, id)
			} else {
				p := &t.nodes[cur]
				p.hasElement = true
				p.text = span{} // an element with children holds no text we read
				if p.last >= 0 {
					t.nodes[p.last].next = id
				} else {
					p.first = id
				}
				p.last = id
			}
			cur = id
			depth++
			sc.expectOff, sc.expectEnd = sc.nameOff, sc.nameEnd
		case tokEnd:
			if cur < 0 || t.qname(cur) != sc.name() {
				return nil, fail(start, "malformed XML: unexpected end tag </%s>", clip(sc.name()))
			}
			t.trimText(cur)
			cur = t.nodes[cur].parent
			depth--
			sc.expectOff, sc.expectEnd = 0, 0
			if cur >= 0 {
				sc.expectOff, sc.expectEnd = t.nodes[cur].qname.off, t.nodes[cur].qname.end
			}
		case tokText:
			if cur < 0 {
				if strings.TrimSpace(sc.text()) != "" {
					return nil, fail(start, "malformed XML: text outside the root element")
				}
				continue
			}
			if t.nodes[cur].hasElement {
				// Space between child elements; references are still checked.
				if !plain && needsDecoding(sc.text(), sc.cdata) {
					if _, err := decodeText(text[:0], sc.text(), start, !sc.cdata); err != nil {
						se := err.(*syntaxError)
						return nil, fail(se.pos, "malformed XML: %s", se.msg)
					}
				}
				continue
			}
			if plain || !needsDecoding(sc.text(), sc.cdata) {
				t.appendText(cur, sc.text(), sc.textOff, false)
				continue
			}
			text, err = decodeText(text[:0], sc.text(), start, !sc.cdata)
			if err != nil {
				se := err.(*syntaxError)
				return nil, fail(se.pos, "malformed XML: %s", se.msg)
			}
			t.appendText(cur, string(text), 0, true)
			if len(t.text(cur)) > maxText {
				return nil, fail(start, "element text longer than %d bytes", maxText)
			}
		}
	}
}

// namespace resolves the namespace of node id from the declarations on it
// and its ancestors.
func (t *tree) namespace(id int) string {
	prefix := t.prefix(id)
	want := "xmlns"
	if prefix != "" {
		want = "xmlns:" + prefix
	}
	for i := id; i >= 0; i = t.nodes[i].parent {
		for rest := t.attrs(i); ; {
			an, av, r, ok := nextAttr(rest)
			if !ok {
				break
			}
			rest = r
			if an == want {
				return attrValue(av)
			}
		}
	}
	return ""
}

// attr is the value of the attribute with local name local.
func (t *tree) attr(id int, local string) string {
	for rest := t.attrs(id); ; {
		an, av, r, ok := nextAttr(rest)
		if !ok {
			return ""
		}
		rest = r
		if _, l := splitName(an); l == local {
			return strings.TrimSpace(attrValue(av))
		}
	}
}

// find returns the first element named name in document order below id (or
// anywhere when id < 0).
func (t *tree) find(id int, name string) int {
	start, end := 0, len(t.nodes)
	if id >= 0 {
		start = id + 1
		end = t.subtreeEnd(id)
	}
	for i := start; i < end; i++ {
		if t.name(i) == name {
			return i
		}
	}
	return -1
}

// subtreeEnd is one past the last node of id's subtree (nodes are in
// document order).
func (t *tree) subtreeEnd(id int) int {
	for i := id; i >= 0; i = t.nodes[i].parent {
		if n := t.nodes[i].next; n >= 0 {
			return n
		}
	}
	return len(t.nodes)
}

// child is the first child of id named name, -1 when none.
func (t *tree) child(id int, name string) int {
	if id < 0 {
		return -1
	}
	for c := t.nodes[id].first; c >= 0; c = t.nodes[c].next {
		if t.name(c) == name {
			return c
		}
	}
	return -1
}

// at follows a path of child names ("FinInstnId/BICFI") from id.
func (t *tree) at(id int, path string) int {
	for id >= 0 && path != "" {
		name, rest, _ := strings.Cut(path, "/")
		id = t.child(id, name)
		path = rest
	}
	return id
}

// get is the text at path below id, marking it read; "" when absent.
func (t *tree) get(id int, path string) string {
	n := t.at(id, path)
	if n < 0 {
		return ""
	}
	t.nodes[n].used = true
	return t.text(n)
}

// pathOf names node id from below the Document (or the root) for messages.
func (t *tree) pathOf(id int) string {
	if id < 0 || id >= len(t.nodes) {
		return ""
	}
	// The ids from id up (on the stack for any real depth), then the names
	// from the top down into one string: every dropped element is named
	// by its path, and a slice of parts and a join per path were a tenth
	// of a payment's allocations (issue 30).
	var buf [maxDepth]int
	ids := buf[:0]
	size := -1
	for i := id; i >= 0; i = t.nodes[i].parent {
		n := t.name(i)
		if n == "Document" || n == "AppHdr" {
			if n == "AppHdr" {
				ids = append(ids, i)
				size += len(n) + 1
			}
			break
		}
		ids = append(ids, i)
		size += len(n) + 1
	}
	if len(ids) == 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(size)
	for k := len(ids) - 1; k >= 0; k-- {
		b.WriteString(t.name(ids[k]))
		if k > 0 {
			b.WriteByte('/')
		}
	}
	return b.String()
}

// unused lists the leaf elements with text below id that the mapping did
// not read.
func (t *tree) unused(id int) []int {
	var out []int
	for i, end := id+1, t.subtreeEnd(id); i < end; i++ {
		n := &t.nodes[i]
		if !n.used && !n.hasElement && t.text(i) != "" {
			out = append(out, i)
		}
	}
	return out
}
