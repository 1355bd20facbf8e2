package seed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ledgerlane/platform/services/finance"
)

var scaleAccounts = []string{"checking", "savings", "card", "cash"}

func scaleID(label string) func(string) string {
	return func(name string) string { return id("scale/" + label + "/" + name) }
}

// ScaleIDs returns the ids Scale uses for label, so a caller can find a
// scale user loaded earlier.
func ScaleIDs(label string) ScaleData {
	sid := scaleID(label)
	d := ScaleData{OwnerAccountID: sid("owner"), UserID: sid("user"), GrantID: sid("grant")}
	for _, name := range scaleAccounts {
		d.AccountIDs = append(d.AccountIDs, sid("account/"+name))
	}
	for i := range 12 {
		d.CategoryIDs = append(d.CategoryIDs, sid(fmt.Sprintf("category/%d", i)))
	}
	return d
}

// ScaleData names what Scale wrote.
type ScaleData struct {
	// OwnerAccountID stands for the metering account owning the user: a
	// name-based id like the rest, as no metering account exists for it.
	OwnerAccountID string
	UserID         string
	GrantID        string // writes on, no privacy settings
	AccountIDs     []string
	CategoryIDs    []string
}

// Scale writes one user with n transactions spread over the ten years
// before now, for load tests: three bank-synced accounts and a manual one,
// twelve categories of the user's own, the demo's merchants with their
// descriptors and locations, about 1% pending, 5% uncategorized, 10% manual
// and 5% imported. Rows go in batches of batch (0: 2000), so memory stays
// flat whatever n is. Ids are name-based on label, so one store can hold
// several scale users, and the same label, n and now give the same rows.
func Scale(ctx context.Context, store Store, label string, now time.Time, n, batch int) (ScaleData, error) {
	if batch <= 0 {
		batch = 2000
	}
	now = now.UTC().Truncate(time.Microsecond)
	sid := scaleID(label)
	d := ScaleIDs(label)
	if err := store.CreateUser(ctx, finance.User{ID: d.UserID, Name: "Scale " + label, OwnerAccountID: d.OwnerAccountID, CreatedAt: now}); err != nil {
		return d, fmt.Errorf("seed: scale user: %w", err)
	}
	if err := store.CreateGrant(ctx, finance.Grant{ID: d.GrantID, UserID: d.UserID, WritesEnabled: true, CreatedAt: now}); err != nil {
		return d, fmt.Errorf("seed: scale grant: %w", err)
	}
	bank := finance.Connection{ID: sid("connection/bank"), UserID: d.UserID, Provider: finance.ProviderPlaid,
		Institution: "Chase", Status: finance.ConnectionActive, LastSyncedAt: &now, CreatedAt: now, UpdatedAt: now}
	manual := finance.Connection{ID: sid("connection/manual"), UserID: d.UserID, Provider: finance.ProviderManual,
		Institution: "Manual accounts", Status: finance.ConnectionActive, CreatedAt: now, UpdatedAt: now}
	for _, c := range []finance.Connection{bank, manual} {
		if err := store.CreateConnection(ctx, c); err != nil {
			return d, fmt.Errorf("seed: scale connection: %w", err)
		}
	}
	for i, name := range scaleAccounts {
		conn := bank.ID
		if name == "cash" {
			conn = manual.ID
		}
		a := finance.Account{ID: sid("account/" + name), UserID: d.UserID, ConnectionID: conn, Name: name,
			Type: finance.AccountDepository, Currency: "USD", Balance: finance.Money{Currency: "USD"},
			CreatedAt: now.Add(time.Duration(i) * time.Second), UpdatedAt: now}
		if err := store.CreateAccount(ctx, a); err != nil {
			return d, fmt.Errorf("seed: scale account: %w", err)
		}
	}
	groups := [][]merchant{groceries, restaurants, coffee, fuel, rides, shopping}
	for i := range 12 {
		c := finance.Category{ID: sid(fmt.Sprintf("category/%d", i)), UserID: d.UserID, Name: fmt.Sprintf("Scale %d", i),
			Icon: "label", Color: "#546E7A", TypeTag: finance.CategoryExpense, SortOrder: int32(i), CreatedAt: now, UpdatedAt: now}
		if err := store.CreateCategory(ctx, c); err != nil {
			return d, fmt.Errorf("seed: scale category: %w", err)
		}
	}

	rng := rand.New(rand.NewPCG(uint64(len(label)), uint64(n)))
	today := finance.Day(now)
	const days = 3652
	rows := make([]finance.Transaction, 0, batch)
	for i := range n {
		group := rng.IntN(len(groups))
		m := pick(rng, groups[group])
		t := finance.Transaction{
			ID: sid(fmt.Sprintf("tx/%d", i)), UserID: d.UserID, AccountID: d.AccountIDs[rng.IntN(3)],
			CategoryID: d.CategoryIDs[group*2+rng.IntN(2)], Amount: finance.Money{Amount: cents(m.lo, m.hi)(rng).Neg(), Currency: "USD"},
			Merchant: m.name, DisplayName: m.display, Description: m.descriptor, PaymentChannel: m.channel,
			Date: today.AddDate(0, 0, -rng.IntN(days)), Source: finance.SourceBankSync, Version: 1,
		}
		switch r := rng.IntN(100); {
		case r < 10:
			t.Source, t.AccountID = finance.SourceManual, d.AccountIDs[3]
		case r < 15:
			t.Source, t.ExternalRef = finance.SourceImport, fmt.Sprintf("import.csv#%d", i)
		default:
			t.ExternalRef = fmt.Sprintf("scale_%s_%d", label, i)
		}
		if rng.IntN(100) < 5 {
			t.CategoryID = ""
		}
		if len(m.locations) > 0 && rng.IntN(10) < 3 {
			l := pick(rng, m.locations)
			t.Location = &l
		}
		if rng.IntN(100) < 3 {
			t.Memo = pick(rng, []string{"split with Sam", "reimbursable", "birthday dinner", "work trip"})
		}
		t.CreatedAt = t.Date.Add(20 * time.Hour)
		if t.Source == finance.SourceBankSync && rng.IntN(100) == 0 {
			t.IsPending = true
		} else {
			posted := t.Date.Add(34 * time.Hour)
			t.PostedAt = &posted
		}
		t.UpdatedAt = t.CreatedAt
		rows = append(rows, t)
		if len(rows) == batch || i == n-1 {
			if err := store.InsertTransactions(ctx, rows); err != nil {
				return d, fmt.Errorf("seed: scale transactions: %w", err)
			}
			rows = rows[:0]
		}
	}
	return d, nil
}
