package grpcapi_test

import (
	"testing"

	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
)

func TestListHoldingsWire(t *testing.T) {
	c := start(t)
	res, err := c.holding.ListHoldings(as(c.read), &financev1.ListHoldingsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetData()) != 5 || res.GetPagination().GetHasMore() {
		t.Fatalf("%d holdings", len(res.GetData()))
	}
	for _, h := range res.GetData() {
		price := h.GetCurrentPrice()
		if len(price) < 4 || price[len(price)-3] != '.' || h.GetCurrentValue().GetCurrency() != "USD" ||
			h.GetQuantity() == "" || h.GetCostBasisMethod() == "" || h.GetAccountId() != c.demo.AccountIDs.Brokerage ||
			h.AcquiredAt == nil || h.GetPriceSource() != "sandbox" {
			t.Errorf("holding %v", h)
		}
	}
	res, err = c.holding.ListHoldings(as(c.redacted), &financev1.ListHoldingsRequest{})
	if err != nil || len(res.GetData()) != 0 || !res.GetFiltered() {
		t.Fatalf("redacted: %v %v", res, err)
	}
}
