package mx

import (
	"testing"

	"github.com/ledgerlane/platform/services/converter/mt"
	"github.com/ledgerlane/platform/services/converter/payment"
	"github.com/ledgerlane/platform/services/converter/statement"
)

// roundTrip is one generated payment taken both ways round: MX → MT → MX
// (first and second MX reading, with every warning on the way) and MT → MX →
// MT (first and second MT reading).
type roundTrip struct {
	mx1, mx2 *payment.Payment
	mxWarns  []statement.Warning
	mxDocs   [2]string // the two MX documents written
	mtPage   string    // the MT written on the MX → MT → MX way
	mt1, mt2 *payment.Payment
	mtWarns  []statement.Warning
	mtPages  [2]string // the two MT messages written
	mtMX     string    // the MX written on the MT → MX → MT way
}

// paymentRoundTrip runs gen through both round trips for the MX message
// mxType at version and the MT type typ ("202", "910", …); case i names it
// in failures.
func paymentRoundTrip(t *testing.T, i int, gen *payment.Payment, mxType, version, typ string) roundTrip {
	t.Helper()
	must := func(err error, detail string) {
		t.Helper()
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, detail)
		}
	}
	var rt roundTrip
	docs, w0, err := RenderPayments([]*payment.Payment{gen}, mxType, version)
	must(err, "")
	p1, w1, err := ParsePayments([]byte(docs[0]), mxType, "")
	must(err, docs[0])
	pages, w2, err := mt.RenderPayments(typ, p1, statement.Options{})
	must(err, "")
	p2, w3, err := mt.ParsePayments([]byte(pages[0]), "MT"+typ)
	must(err, pages[0])
	docs2, w4, err := RenderPayments(p2, mxType, version)
	must(err, "")
	p3, w5, err := ParsePayments([]byte(docs2[0]), mxType, "")
	must(err, "")
	rt.mx1, rt.mx2, rt.mxDocs, rt.mtPage = p1[0], p3[0], [2]string{docs[0], docs2[0]}, pages[0]
	rt.mxWarns = append(append(append(append(append(w0, w1...), w2...), w3...), w4...), w5...)

	mtPages, v0, err := mt.RenderPayments(typ, []*payment.Payment{gen}, statement.Options{})
	must(err, "")
	q1, v1, err := mt.ParsePayments([]byte(mtPages[0]), "")
	must(err, mtPages[0])
	mx, v2, err := RenderPayments(q1, mxType, version)
	must(err, "")
	q2, v3, err := ParsePayments([]byte(mx[0]), mxType, "")
	must(err, "")
	back, v4, err := mt.RenderPayments(typ, q2, statement.Options{})
	must(err, "")
	q3, v5, err := mt.ParsePayments([]byte(back[0]), "")
	must(err, back[0])
	rt.mt1, rt.mt2, rt.mtPages, rt.mtMX = q1[0], q3[0], [2]string{mtPages[0], back[0]}, mx[0]
	rt.mtWarns = append(append(append(append(append(v0, v1...), v2...), v3...), v4...), v5...)
	return rt
}
