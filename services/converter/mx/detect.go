package mx

import (
	"bytes"

	"github.com/ledgerlane/platform/services/converter/engine"
)

// detectWindow is how much of an input the detectors search: the
// namespace is near the start.
const detectWindow = 1 << 16

// xmlHead is what the detectors of this package read from an input, found
// in one pass and shared by all of them (engine.Head): every MX conversion
// runs several detectors before the one that matches, and each searched
// the whole head for its namespaces again (issue 30).
type xmlHead struct {
	// all is the input, UTF-16 decoded, without a BOM and leading space;
	// nil when it is not XML. in is its first detectWindow bytes.
	all, in []byte
	// ns are the offsets in in of every ISO 20022 namespace, in order.
	ns []int
	// msgDefIdr is the AppHdr's MsgDefIdr (the first in in), nil when
	// there is none or it is too long to be one.
	msgDefIdr []byte
	nsBuf     [4]int
}

var xmlHeadScan = &engine.ScanKey{Name: "mx namespaces"}

// headOf is h's xmlHead, scanning for it the first time a detector asks.
func headOf(h *engine.Head) *xmlHead {
	return h.Scan(xmlHeadScan, func(input []byte) any { return scanHead(input) }).(*xmlHead)
}

func scanHead(input []byte) *xmlHead {
	x := &xmlHead{}
	input, _ = fromUTF16(input)
	input = bytes.TrimLeft(trimBOM(input), " \t\r\n")
	if len(input) == 0 || input[0] != '<' {
		return x
	}
	x.all, x.in = input, input[:min(len(input), detectWindow)]
	x.ns = x.nsBuf[:0]
	for off := 0; ; {
		i := bytes.Index(x.in[off:], nsPrefixBytes)
		if i < 0 {
			break
		}
		x.ns = append(x.ns, off+i)
		off += i + len(nsPrefix)
	}
	if i := bytes.Index(x.in, []byte("MsgDefIdr>")); i >= 0 {
		v := x.in[i+len("MsgDefIdr>"):]
		if j := bytes.IndexByte(v, '<'); j >= 0 {
			if id := bytes.TrimSpace(v[:j]); len(id) < 32 {
				x.msgDefIdr = id
			}
		}
	}
	return x
}

// detectNamespace recognises an MX message from the first namespace in
// input that starts with prefix and is of one of types (type, version),
// else from the AppHdr's MsgDefIdr. The first 64 KiB are searched, in
// place: only the namespace recognised becomes a string.
func detectNamespace(input []byte, prefix []byte, types []string) (string, string, bool) {
	return scanHead(input).detect(prefix, types)
}

func (x *xmlHead) detect(prefix []byte, types []string) (string, string, bool) {
	if x.in == nil {
		return "", "", false
	}
	for _, off := range x.ns {
		rest := x.in[off:]
		if !bytes.HasPrefix(rest, prefix) {
			continue
		}
		end := namespaceEnd(rest)
		// The AppHdr's namespace (head.001) comes first in most messages
		// and is no document type: skipped without making it a string.
		if !bytes.HasPrefix(rest[len(nsPrefix):end], []byte("head.")) {
			if typ, ok := typeIn(rest[:end], types); ok {
				return typ, string(rest[len(nsPrefix):end]), true
			}
		}
	}
	if id := x.msgDefIdr; id != nil {
		var ns [len(nsPrefix) + 32]byte
		if typ, ok := typeIn(append(append(ns[:0], nsPrefix...), id...), types); ok {
			return typ, string(id), true
		}
	}
	return "", "", false
}

// statement is Detect's answer from x: the first camt.052 or camt.053
// namespace anywhere in the input (not only its head), with no MsgDefIdr.
func (x *xmlHead) statement() (string, string, bool) {
	if x.all == nil {
		return "", "", false
	}
	if len(x.all) > len(x.in) {
		return detectStatement(x.all) // longer than the head
	}
	for _, off := range x.ns {
		rest := x.in[off:]
		end := namespaceEnd(rest)
		if typ, ok := typeIn(rest[:end], statementTypes); ok {
			return typ, string(rest[len(nsPrefix):end]), true
		}
	}
	return "", "", false
}

// The detectors of the format sets, reading the shared xmlHead.
func detectHead(h *engine.Head) (string, string, bool) { return headOf(h).statement() }

func detectBatchHead(h *engine.Head) (string, string, bool) {
	return headOf(h).detect(nsPrefixBytes, batchTypes)
}

func detectCashHead(h *engine.Head) (string, string, bool) {
	return headOf(h).detect(cashPrefix, cashReadTypes)
}

func detectInvestigationHead(h *engine.Head) (string, string, bool) {
	return headOf(h).detect(nsPrefixBytes, caseTypes)
}

func detectPaymentHead(h *engine.Head) (string, string, bool) {
	return headOf(h).detect(nsPrefixBytes, pacsTypes)
}

func detectReturnHead(h *engine.Head) (string, string, bool) {
	return headOf(h).detect(returnPrefix, returnTypes)
}
