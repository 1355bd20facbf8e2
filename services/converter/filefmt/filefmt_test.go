package filefmt

import (
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/ledgerlane/platform/services/converter/engine"
	"github.com/ledgerlane/platform/services/converter/mx"
	"github.com/ledgerlane/platform/services/converter/statement"
)

func amt(s, ccy string) statement.Amount {
	return statement.Amount{Value: decimal.RequireFromString(s), Currency: ccy}
}

func day(d int) statement.Date { return statement.Date{Year: 2024, Month: time.March, Day: d} }

func sample() []*statement.Statement {
	return []*statement.Statement{{
		Reference: "STMT1",
		Account:   statement.Account{IBAN: "DE89370400440532013000", Currency: "EUR", Servicer: "COBADEFFXXX"},
		Balances: []statement.Balance{
			{Type: statement.OpeningBooked, Mark: statement.Credit, Date: day(1), Amount: amt("100", "EUR")},
			{Type: statement.ClosingBooked, Mark: statement.Debit, Date: day(2), Amount: amt("50.25", "EUR")},
		},
		Entries: []statement.Entry{
			{BookingDate: day(1), ValueDate: day(1), Mark: statement.Credit, Amount: amt("10", "EUR"), CustomerReference: "NONREF",
				Counterparty: statement.Counterparty{Name: "Müller, \"Quote\" & <Sons> International Trading GmbH", IBAN: "GB29NWBK60161331926819", BIC: "NWBKGB2L"},
				Remittance:   []string{"Invoice 1,2", "line\nbreak"}, TransactionType: "NTRF"},
			{BookingDate: day(2), ValueDate: day(3), Mark: statement.Debit, Amount: amt("160.25", "EUR"), CustomerReference: "=HYPERLINK(1)",
				BankReference: "B2", Info: "Card payment", TransactionType: "NMSC"},
			// Same booking date, amount and references twice: still two FITIDs.
			{BookingDate: day(2), ValueDate: day(2), Mark: statement.Debit, Amount: amt("0.5", "EUR"), TransactionType: "NCHK", CustomerReference: "000123"},
			{BookingDate: day(2), ValueDate: day(2), Mark: statement.Debit, Amount: amt("0.5", "EUR"), TransactionType: "NCHK", CustomerReference: "000123"},
		},
	}}
}

func TestCSV(t *testing.T) {
	for _, tc := range []struct{ format, date string }{
		{"", "2024-03-02"}, {"ymd", "2024-03-02"}, {"dmy", "02.03.2024"}, {"mdy", "03/02/2024"},
	} {
		t.Run("dateFormat="+tc.format, func(t *testing.T) {
			out, _, err := RenderCSV(sample(), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "\r\n") {
				t.Error("rows are not CRLF terminated")
			}
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatalf("output is not RFC 4180 CSV: %v", err)
			}
			if strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
				t.Fatalf("header = %v", rows[0])
			}
			if len(rows) != 5 {
				t.Fatalf("rows = %d, want header + 4", len(rows))
			}
			col := func(row int, name string) string {
				for i, h := range CSVHeader {
					if h == name {
						return rows[row][i]
					}
				}
				t.Fatalf("no column %s", name)
				return ""
			}
			if got := col(1, "amount"); got != "10.00" {
				t.Errorf("credit amount = %q", got)
			}
			if got := col(2, "amount"); got != "-160.25" {
				t.Errorf("debit amount = %q", got)
			}
			if got := col(2, "booking_date"); got != tc.date {
				t.Errorf("booking_date = %q, want %q", got, tc.date)
			}
			if got := col(1, "counterparty"); got != "Müller, \"Quote\" & <Sons> International Trading GmbH" {
				t.Errorf("counterparty = %q", got)
			}
			if got, none := col(1, "counterparty_bic"), col(2, "counterparty_bic"); got != "NWBKGB2L" || none != "" {
				t.Errorf("counterparty_bic = %q and %q", got, none)
			}
			if got := col(1, "description"); got != "Invoice 1,2 line\nbreak" {
				t.Errorf("description = %q", got)
			}
			if got := col(1, "reference"); got != "" {
				t.Errorf("NONREF reference = %q", got)
			}
			if got := col(2, "reference"); got != "'=HYPERLINK(1)" {
				t.Errorf("formula not neutralised: %q", got)
			}
			if got := col(2, "description"); got != "Card payment" {
				t.Errorf("description from info = %q", got)
			}
		})
	}
	if _, _, err := RenderCSV(sample(), "iso"); err == nil {
		t.Error("bad dateFormat accepted")
	}
}

// ofxNode is a parsed OFX element: a leaf has a value, an aggregate children.
type ofxNode struct {
	tag      string
	value    string
	children []*ofxNode
}

func (n *ofxNode) all(tag string) []*ofxNode {
	var out []*ofxNode
	for _, c := range n.children {
		if c.tag == tag {
			out = append(out, c)
		}
		out = append(out, c.all(tag)...)
	}
	return out
}

func (n *ofxNode) get(tag string) string {
	for _, c := range n.children {
		if c.tag == tag {
			return c.value
		}
	}
	return ""
}

var unescape = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

var sgmlTag = regexp.MustCompile(`<(/?)([A-Z0-9.]+)>([^<]*)`)

// readSGML is a small OFX 1.0.2 reader: leaves are unclosed tags followed by
// their value, aggregates are closed explicitly and must nest.
func readSGML(t *testing.T, body string) *ofxNode {
	t.Helper()
	root := &ofxNode{}
	stack := []*ofxNode{root}
	for _, m := range sgmlTag.FindAllStringSubmatch(body, -1) {
		closing, tag, val := m[1] == "/", m[2], strings.TrimRight(m[3], "\r\n")
		top := stack[len(stack)-1]
		switch {
		case closing:
			if top.tag != tag {
				t.Fatalf("</%s> closes <%s>", tag, top.tag)
			}
			stack = stack[:len(stack)-1]
		case val != "":
			top.children = append(top.children, &ofxNode{tag: tag, value: unescape.Replace(val)})
		default:
			n := &ofxNode{tag: tag}
			top.children = append(top.children, n)
			stack = append(stack, n)
		}
	}
	if len(stack) != 1 {
		t.Fatalf("unclosed aggregates: %s", stack[len(stack)-1].tag)
	}
	return root
}

// readXML parses OFX 2.2.0 with encoding/xml, which enforces well-formedness.
func readXML(t *testing.T, body string) *ofxNode {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(body))
	root := &ofxNode{}
	stack := []*ofxNode{root}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("OFX 2.2.0 is not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &ofxNode{tag: tk.Name.Local}
			stack[len(stack)-1].children = append(stack[len(stack)-1].children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if s := strings.TrimSpace(string(tk)); s != "" {
				stack[len(stack)-1].value += s
			}
		}
	}
	return root
}

func checkOFX(t *testing.T, out, version string) *ofxNode {
	t.Helper()
	var root *ofxNode
	if version == "220" {
		if !strings.HasPrefix(out, `<?xml version="1.0"`) || !strings.Contains(out, `<?OFX OFXHEADER="200" VERSION="220"`) {
			t.Fatalf("bad 2.2.0 header:\n%s", out[:200])
		}
		root = readXML(t, out)
	} else {
		head := "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nSECURITY:NONE\nENCODING:USASCII\nCHARSET:1252\nCOMPRESSION:NONE\nOLDFILEUID:NONE\nNEWFILEUID:NONE\n\n<OFX>"
		if !strings.HasPrefix(out, head) {
			t.Fatalf("bad 1.0.2 header:\n%s", out[:200])
		}
		for i, r := range out {
			if r > 0x7e || r < 0x20 && r != '\n' {
				t.Fatalf("non-ASCII byte at %d in a USASCII file", i)
			}
		}
		if regexp.MustCompile(`<[A-Z0-9.]+>[^<\n]+</`).MatchString(out) {
			t.Error("closed leaf element in SGML output")
		}
		root = readSGML(t, out[len(head)-len("<OFX>"):])
	}
	var check func(n *ofxNode)
	check = func(n *ofxNode) {
		if n.tag != "" && n.value == "" && len(n.children) == 0 {
			t.Errorf("empty element <%s>", n.tag)
		}
		for _, c := range n.children {
			check(c)
		}
	}
	check(root)
	stmtrs := root.all("STMTRS")
	if len(stmtrs) == 0 {
		t.Fatal("no STMTRS")
	}
	for _, s := range stmtrs {
		if len(s.all("LEDGERBAL")) != 1 || len(s.all("AVAILBAL")) != 1 {
			t.Error("LEDGERBAL or AVAILBAL missing")
		}
		fitids := map[string]bool{}
		for _, tr := range s.all("STMTTRN") {
			if n := tr.get("NAME"); n == "" || len([]rune(n)) > 32 {
				t.Errorf("NAME %q", n)
			}
			amount := tr.get("TRNAMT")
			if strings.Contains(amount, ",") {
				t.Errorf("TRNAMT %q uses a comma", amount)
			}
			if (tr.get("TRNTYPE") == "DEBIT") != strings.HasPrefix(amount, "-") {
				t.Errorf("TRNTYPE %s with TRNAMT %s", tr.get("TRNTYPE"), amount)
			}
			id := tr.get("FITID")
			if id == "" || fitids[id] {
				t.Errorf("FITID %q missing or duplicated", id)
			}
			fitids[id] = true
		}
	}
	return root
}

func fitIDs(root *ofxNode) []string {
	var ids []string
	for _, tr := range root.all("STMTTRN") {
		ids = append(ids, tr.get("FITID"))
	}
	return ids
}

func TestOFX(t *testing.T) {
	for _, v := range []string{"102", "220"} {
		t.Run(v, func(t *testing.T) {
			out, warns, err := RenderOFX(sample(), OFXOptions{Version: v})
			if err != nil {
				t.Fatal(err)
			}
			root := checkOFX(t, out, v)
			if !strings.Contains(out, "&amp; &lt;Sons&gt;") {
				t.Error("&, < and > not escaped")
			}
			trs := root.all("STMTTRN")
			if len(trs) != 4 {
				t.Fatalf("STMTTRN = %d", len(trs))
			}
			if got := trs[1].get("TRNAMT"); got != "-160.25" {
				t.Errorf("TRNAMT = %q", got)
			}
			if got := trs[1].get("DTAVAIL"); got != "20240303" {
				t.Errorf("DTAVAIL = %q", got)
			}
			if got := trs[2].get("CHECKNUM"); got != "000123" {
				t.Errorf("CHECKNUM = %q", got)
			}
			if got := root.all("LEDGERBAL")[0].get("BALAMT"); got != "-50.25" {
				t.Errorf("LEDGERBAL = %q", got)
			}
			// AVAILBAL falls back to the closing booked balance.
			if got := root.all("AVAILBAL")[0].get("BALAMT"); got != "-50.25" {
				t.Errorf("AVAILBAL = %q", got)
			}
			if got := trs[0].get("MEMO"); !strings.Contains(got, "International Trading GmbH") {
				t.Errorf("full name not kept in MEMO: %q", got)
			}
			codes := map[string]bool{}
			for _, w := range warns {
				codes[w.Code] = true
			}
			if !codes[CodeNameTruncated] {
				t.Error("no NAME truncation warning")
			}
			if v == "102" && !codes[CodeTransliterated] {
				t.Error("no transliteration warning")
			}
			if v == "102" && !strings.Contains(out, "Mueller") {
				t.Error("ü not folded to ue")
			}
			// FITIDs are stable across runs (and time).
			now = func() time.Time { return time.Now().Add(48 * time.Hour) }
			defer func() { now = time.Now }()
			again, _, err := RenderOFX(sample(), OFXOptions{Version: v})
			if err != nil {
				t.Fatal(err)
			}
			a, b := fitIDs(root), fitIDs(checkOFX(t, again, v))
			if strings.Join(a, ",") != strings.Join(b, ",") {
				t.Errorf("FITIDs changed between runs: %v vs %v", a, b)
			}
		})
	}
}

func TestOFXBalanceFallback(t *testing.T) {
	s := sample()
	s[0].Balances = s[0].Balances[:1] // opening only, as in an MT942
	out, warns, err := RenderOFX(s, OFXOptions{})
	if err != nil {
		t.Fatal(err)
	}
	root := checkOFX(t, out, "102")
	// 100 + 10 - 160.25 - 0.5 - 0.5 = -51.25
	if got := root.all("LEDGERBAL")[0].get("BALAMT"); got != "-51.25" {
		t.Errorf("computed LEDGERBAL = %q", got)
	}
	if len(warns) == 0 || !hasCode(warns, CodeBalanceMissing) {
		t.Error("no FILE_BALANCE_MISSING warning")
	}
}

func hasCode(ws []statement.Warning, code string) bool {
	for _, w := range ws {
		if w.Code == code {
			return true
		}
	}
	return false
}

const camt = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>
<GrpHdr><MsgId>M</MsgId><CreDtTm>2024-03-04T10:00:00Z</CreDtTm></GrpHdr>
<Stmt><Id>S</Id><CreDtTm>2024-03-04T10:00:00Z</CreDtTm><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>
<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2024-03-04</Dt></Dt></Bal>
<Ntry><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2024-03-04</Dt></BookgDt><BkTxCd/></Ntry>
</Stmt></BkToCstmrStmt></Document>`

// testEngine has the file renderers and the camt sources.
var testEngine = engine.New(mx.Formats(), Formats())

func TestQBOViaEngine(t *testing.T) {
	_, err := testEngine.Convert(engine.Request{Input: []byte(camt), To: "qbo"})
	var fe *engine.FieldError
	if !errors.As(err, &fe) || fe.Field != "intuBid" {
		t.Fatalf("missing intuBid: want FieldError{intuBid}, got %v", err)
	}
	res, err := testEngine.Convert(engine.Request{Input: []byte(camt), To: "qbo", Options: statement.Options{IntuBid: "3000"}})
	if err != nil {
		t.Fatal(err)
	}
	out := res.Pages[0]
	root := checkOFX(t, out, "102")
	if got := root.all("SONRS")[0].get("INTU.BID"); got != "3000" {
		t.Errorf("INTU.BID = %q", got)
	}
	if res.DetectedType != "camt.053" || res.DetectedVersion != "camt.053.001.02" {
		t.Errorf("detected %s %s", res.DetectedType, res.DetectedVersion)
	}
}

// TestSamplesToFiles converts every camt sample to CSV, both OFX versions
// and QBO through the engine; samples that are not camt.052/053 must fail
// with a ParseError when named as camt.053.
func TestSamplesToFiles(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "shared", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared samples not found at %s", dir)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "mx", "*", "*.xml"))
	more, _ := filepath.Glob(filepath.Join(dir, "pairs", "cbpr_mx_to_mt", "*camt.05*.input.xml"))
	for _, f := range append(files, more...) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []struct {
				to   string
				opts statement.Options
			}{
				{"csv", statement.Options{DateFormat: "dmy"}},
				{"ofx", statement.Options{}},
				{"ofx", statement.Options{OFXVersion: "220"}},
				{"qbo", statement.Options{IntuBid: "12345"}},
			} {
				res, err := testEngine.Convert(engine.Request{Input: data, To: target.to, Options: target.opts})
				if errors.Is(err, engine.ErrUndetectable) {
					_, err = testEngine.Convert(engine.Request{Input: data, From: "camt.053", To: target.to, Options: target.opts})
				}
				if err != nil {
					var pe *statement.ParseError
					if !errors.As(err, &pe) {
						t.Fatalf("%s: want a ParseError, got %v", target.to, err)
					}
					continue
				}
				switch target.to {
				case "csv":
					if _, err := csv.NewReader(strings.NewReader(res.Pages[0])).ReadAll(); err != nil {
						t.Errorf("csv: %v", err)
					}
				case "ofx", "qbo":
					checkOFX(t, res.Pages[0], firstNonEmpty(target.opts.OFXVersion, "102"))
				}
			}
		})
	}
}

func TestFormatsRegistered(t *testing.T) {
	got := map[string]bool{}
	for _, f := range testEngine.Formats() {
		got[f.From+">"+f.To] = true
	}
	for _, want := range []string{"camt.053>csv", "camt.052>ofx", "camt.053>qbo", "camt.053>camt.053", "camt.052>camt.052"} {
		if !got[want] {
			t.Errorf("registry lacks %s (has %v)", want, fmt.Sprint(got))
		}
	}
}
