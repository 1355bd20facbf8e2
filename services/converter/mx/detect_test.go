package mx

import (
	"bytes"
	"testing"

	"github.com/ledgerlane/platform/services/converter/engine"
)

// oneByOne is detectNamespace as each detector ran it before the shared
// head: its own search of the input.
func oneByOne(input []byte, prefix []byte, types []string) (string, string, bool) {
	input, _ = fromUTF16(input)
	input = bytes.TrimLeft(trimBOM(input), " \t\r\n")
	if len(input) == 0 || input[0] != '<' {
		return "", "", false
	}
	in := input[:min(len(input), detectWindow)]
	for rest := in; ; {
		i := bytes.Index(rest, prefix)
		if i < 0 {
			break
		}
		rest = rest[i:]
		end := namespaceEnd(rest)
		if !bytes.HasPrefix(rest[len(nsPrefix):end], []byte("head.")) {
			if typ, ok := typeIn(rest[:end], types); ok {
				return typ, string(rest[len(nsPrefix):end]), true
			}
		}
		rest = rest[len(prefix):]
	}
	if i := bytes.Index(in, []byte("MsgDefIdr>")); i >= 0 {
		v := in[i+len("MsgDefIdr>"):]
		if j := bytes.IndexByte(v, '<'); j >= 0 {
			if id := bytes.TrimSpace(v[:j]); len(id) < 32 {
				var ns [len(nsPrefix) + 32]byte
				if typ, ok := typeIn(append(append(ns[:0], nsPrefix...), id...), types); ok {
					return typ, string(id), true
				}
			}
		}
	}
	return "", "", false
}

// checkHeadDetectors runs every detector of the package through one shared
// engine.Head and compares each with its own search (and Detect with
// detectStatement on the whole input).
func checkHeadDetectors(t *testing.T, input []byte) {
	t.Helper()
	h := &engine.Head{Input: input}
	for _, c := range []struct {
		name   string
		head   engine.HeadDetector
		prefix []byte
		types  []string
	}{
		{"batch", detectBatchHead, nsPrefixBytes, batchTypes},
		{"cash", detectCashHead, cashPrefix, cashReadTypes},
		{"investigation", detectInvestigationHead, nsPrefixBytes, caseTypes},
		{"payment", detectPaymentHead, nsPrefixBytes, pacsTypes},
		{"return", detectReturnHead, returnPrefix, returnTypes},
	} {
		typ, v, ok := c.head(h)
		wtyp, wv, wok := oneByOne(input, c.prefix, c.types)
		if typ != wtyp || v != wv || ok != wok {
			t.Fatalf("%s of %q: %q %q %t, want %q %q %t", c.name, input, typ, v, ok, wtyp, wv, wok)
		}
	}
	typ, v, ok := detectHead(h)
	in, _ := fromUTF16(input)
	in = bytes.TrimLeft(trimBOM(in), " \t\r\n")
	var wtyp, wv string
	var wok bool
	if len(in) > 0 && in[0] == '<' {
		wtyp, wv, wok = detectStatement(in)
	}
	if typ != wtyp || v != wv || ok != wok {
		t.Fatalf("statement of %q: %q %q %t, want %q %q %t", input, typ, v, ok, wtyp, wv, wok)
	}
}

func FuzzHeadDetectors(f *testing.F) {
	f.Add([]byte(`<AppHdr xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.02"><MsgDefIdr>pacs.008.001.08</MsgDefIdr></AppHdr>`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08">`))
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.057.001.06" x="urn:iso:std:iso:20022:tech:xsd:pacs.004.001.09">`))
	f.Add([]byte("\xef\xbb\xbf <a xmlns='urn:iso:std:iso:20022:tech:xsd:pain.001.001.09'/>"))
	f.Fuzz(func(t *testing.T, input []byte) { checkHeadDetectors(t, input) })
}

func TestHeadDetectorsOnSamples(t *testing.T) {
	for _, s := range [][]byte{nil, []byte("<"), []byte(":20:x"), bytes.Repeat([]byte(`<a xmlns="urn:iso:std:iso:20022:tech:xsd:camt.052.001.02">`), 2000)} {
		checkHeadDetectors(t, s)
	}
}
