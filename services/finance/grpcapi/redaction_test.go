package grpcapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ledgerlane/platform/services/finance/debt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/ledgerlane/platform/pkg/principal"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/stores"
)

// wire serializes a response the way the gateway does (proto names, default
// values emitted), so the test sees exactly the JSON a client gets.
var wire = protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}

// redactionFixture is one user whose data carries every redactable value in
// every place it can travel: the institution in the connection's error
// message, logo and accounts' names, an account's own bank, transaction
// merchants, descriptors, memos, tags and provider twins; the location in the
// row's descriptor, merchant, memo, tags and provider twin. The values are
// made-up words, so finding one in a response can only be a leak.
type redactionFixture struct {
	userID, openGrant string
	owner             string            // the metering account that owns the user
	grants            map[string]string // field id -> grant redacting only it
	accountIDs        []string
	txIDs             []string
	categoryID        string // a system category to categorize into
}

// Needles per field id: the distinctive words of the values it covers.
var redactionNeedles = map[string][]string{
	finance.FieldConnectionInstitution: {"zorblax", "quintrell", "brackenfell"},
	finance.FieldTransactionLocation:   {"vexmoor", "glimmerport", "vexshire", "48213", "zedonia"},
}

func seedRedactionFixture(t *testing.T, s stores.Store) redactionFixture {
	t.Helper()
	ctx := context.Background()
	at := now.Add(-24 * time.Hour)
	f := redactionFixture{userID: uuid.NewString(), openGrant: uuid.NewString(), owner: uuid.NewString(),
		grants: map[string]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateUser(ctx, finance.User{ID: f.userID, Name: "Robin", OwnerAccountID: f.owner, CreatedAt: at}))
	must(s.CreateGrant(ctx, finance.Grant{ID: f.openGrant, UserID: f.userID, WritesEnabled: true, CreatedAt: at}))
	for id := range redactionNeedles {
		g := finance.Grant{ID: uuid.NewString(), UserID: f.userID, RedactedFields: []string{id}, WritesEnabled: true, CreatedAt: at}
		must(s.CreateGrant(ctx, g))
		f.grants[id] = g.ID
	}
	synced := now.Add(-80 * time.Hour)
	zorblax := finance.Connection{ID: uuid.NewString(), UserID: f.userID, Provider: finance.ProviderPlaid,
		Institution: "Zorblax Savings Bank", InstitutionLogoURL: "https://logos.example/zorblax-savings.png",
		Status: finance.ConnectionLoginRequired, LastSyncedAt: &synced, ErrorCode: "login_required",
		ErrorMessage: "Zorblax needs you to sign in again to keep syncing.", CreatedAt: at, UpdatedAt: at}
	quintrell := finance.Connection{ID: uuid.NewString(), UserID: f.userID, Provider: finance.ProviderQuiltt,
		SourceAggregator: "mx", Institution: "Quintrell Trust", InstitutionLogoURL: "https://logos.example/quintrell.png",
		Status: finance.ConnectionError, LastSyncedAt: &synced, ErrorCode: "institution_down",
		ErrorMessage: "Quintrell Trust is not answering.", CreatedAt: at.Add(time.Minute), UpdatedAt: at}
	must(s.CreateConnection(ctx, zorblax))
	must(s.CreateConnection(ctx, quintrell))
	checking := finance.Account{ID: uuid.NewString(), UserID: f.userID, ConnectionID: zorblax.ID,
		Name: "Zorblax Everyday Checking", Nickname: "Zorblax joint", Type: finance.AccountDepository, Subtype: "checking",
		Mask: "4417", Currency: "USD", Balance: usd("1200.00"), Provider: finance.ProviderPlaid, CreatedAt: at, UpdatedAt: at}
	card := finance.Account{ID: uuid.NewString(), UserID: f.userID, ConnectionID: quintrell.ID,
		Name: "Quintrell Platinum", Type: finance.AccountCredit, Subtype: "credit card", Mask: "2290", Currency: "USD",
		Balance: usd("310.20"), Provider: finance.ProviderQuiltt, InstitutionName: "Brackenfell Card Services",
		InstitutionLogoURL: "https://logos.example/brackenfell.png", CreatedAt: at.Add(time.Minute), UpdatedAt: at}
	must(s.CreateAccount(ctx, checking))
	must(s.CreateAccount(ctx, card))
	f.accountIDs = []string{checking.ID, card.ID}
	f.categoryID = uuid.NewString()
	must(s.CreateCategory(ctx, finance.Category{ID: f.categoryID, Name: "Dining", Icon: "restaurant", Color: "#E64A19",
		TypeTag: finance.CategoryExpense, SortOrder: 10, CreatedAt: at, UpdatedAt: at}))

	day := finance.Day(now)
	row := func(account string, d int, merchant, display, descriptor string) finance.Transaction {
		return finance.Transaction{ID: uuid.NewString(), UserID: f.userID, AccountID: account, Amount: usd("-12.50"),
			Merchant: merchant, DisplayName: display, Description: descriptor, Date: day.AddDate(0, 0, -d),
			Source: finance.SourceBankSync, ExternalRef: uuid.NewString(), Version: 1, CreatedAt: at, UpdatedAt: at}
	}
	interest := row(checking.ID, 1, "Zorblax Savings Bank", "Interest paid", "ZORBLAX SAVINGS BANK INTEREST")
	payment := row(checking.ID, 2, "Brackenfell Card Services", "Card payment", "BRACKENFELL CARD SERVICES ONLINE PMT")
	payment.Memo, payment.Tags = "paid the Quintrell Trust card", []string{"quintrell trust", "bills"}
	tea := row(card.ID, 3, "Glimmerport Tea House", "Tea House", "TEA HOUSE 88 VEXMOOR ROW VEXSHIRE 48213")
	tea.Location = &finance.Location{Street: "88 Vexmoor Row", City: "Glimmerport", State: "Vexshire",
		PostalCode: "48213", Country: "Zedonia"}
	tea.Memo, tea.Tags = "tea in Glimmerport", []string{"glimmerport", "tea"}
	tea.ProviderDescription, tea.OwnedByUser = ptrTo("GLIMMERPORT TEA ZEDONIA"), []string{finance.OwnDescription}
	bakery := row(card.ID, 4, "Corner Bakery", "Corner Bakery", "CORNER BAKERY 0142")
	txs := []finance.Transaction{interest, payment, tea, bakery}
	must(s.InsertTransactions(ctx, txs))
	for _, tx := range txs {
		f.txIDs = append(f.txIDs, tx.ID)
	}
	return f
}

// principal is the finance credential of the fixture's user under grant.
func (f redactionFixture) principal(grant string) principal.Principal {
	return principal.Principal{AccountID: f.owner, CredentialID: "cred_1", Kind: "at", Surface: principal.SurfaceFinance,
		Mode: "live", FinanceUserID: f.userID, GrantID: grant, RequestID: "req-1"}
}

func usd(s string) finance.Money {
	return finance.Money{Amount: decimal.RequireFromString(s), Currency: "USD"}
}

func ptrTo[T any](v T) *T { return &v }

// readRoute calls one route with every input worth trying and returns the
// responses.
type readRoute func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error)

// redactionRoutes are the routes the test walks, by gRPC method. Every method
// of the services the gateway exposes must be here (the test checks), so a
// new route cannot escape the check. Writes are walked for their responses.
var redactionRoutes = map[string]readRoute{
	"finance.v1.TransactionService/ListTransactions": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		req := &financev1.ListTransactionsRequest{PageSize: proto.Int32(1)}
		for {
			res, err := financev1.NewTransactionServiceClient(conn).ListTransactions(ctx, req)
			if err != nil {
				return nil, err
			}
			out = append(out, res)
			if !res.GetPagination().GetHasMore() {
				return out, nil
			}
			req.Cursor = res.GetPagination().GetNextCursor()
		}
	},
	"finance.v1.TransactionService/GetTransaction": func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		for _, id := range f.txIDs {
			res, err := financev1.NewTransactionServiceClient(conn).GetTransaction(ctx, &financev1.GetTransactionRequest{Id: id})
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		}
		return out, nil
	},
	"finance.v1.TransactionService/SearchTransactions": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		qs := []string{"tea", "interest", "card", "bakery", "bank"}
		for _, needles := range redactionNeedles {
			qs = append(qs, needles...)
		}
		for _, q := range qs {
			res, err := financev1.NewTransactionServiceClient(conn).SearchTransactions(ctx,
				&financev1.SearchTransactionsRequest{Q: q, PageSize: proto.Int32(1)})
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		}
		return out, nil
	},
	"finance.v1.TransactionService/SyncTransactions": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		req := &financev1.SyncTransactionsRequest{Count: proto.Int32(50)}
		for {
			res, err := financev1.NewTransactionServiceClient(conn).SyncTransactions(ctx, req)
			if err != nil {
				return nil, err
			}
			out = append(out, res)
			if !res.GetHasMore() {
				return out, nil
			}
			req.Cursor = res.GetNextCursor()
		}
	},
	"finance.v1.TransactionService/UpdateTransaction": func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		txc := financev1.NewTransactionServiceClient(conn)
		for _, id := range f.txIDs {
			cur, err := txc.GetTransaction(ctx, &financev1.GetTransactionRequest{Id: id})
			if err != nil {
				return nil, err
			}
			res, err := txc.UpdateTransaction(ctx, &financev1.UpdateTransactionRequest{Id: id,
				ExpectedVersion: cur.GetData().GetVersion(), Description: proto.String("edited")})
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		}
		return out, nil
	},
	"finance.v1.TransactionService/BulkCategorizeTransactions": func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error) {
		txc := financev1.NewTransactionServiceClient(conn)
		req := &financev1.BulkCategorizeTransactionsRequest{}
		for _, id := range f.txIDs {
			cur, err := txc.GetTransaction(ctx, &financev1.GetTransactionRequest{Id: id})
			if err != nil {
				return nil, err
			}
			req.Items = append(req.Items, &financev1.BulkCategorizeItem{TransactionId: id, CategoryId: f.categoryID,
				ExpectedVersion: cur.GetData().GetVersion()})
		}
		res, err := txc.BulkCategorizeTransactions(ctx, req)
		return []proto.Message{res}, err
	},
	"finance.v1.CategoryService/ListCategories": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		res, err := financev1.NewCategoryServiceClient(conn).ListCategories(ctx, &financev1.ListCategoriesRequest{})
		return []proto.Message{res}, err
	},
	"finance.v1.CategoryService/CreateCategory": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		res, err := financev1.NewCategoryServiceClient(conn).CreateCategory(ctx, &financev1.CreateCategoryRequest{Name: "Snacks"})
		return []proto.Message{res}, err
	},
	"finance.v1.CategoryService/UpdateCategory": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		cats := financev1.NewCategoryServiceClient(conn)
		c, err := cats.CreateCategory(ctx, &financev1.CreateCategoryRequest{Name: "Treats"})
		if err != nil {
			return nil, err
		}
		res, err := cats.UpdateCategory(ctx, &financev1.UpdateCategoryRequest{Id: c.GetData().GetId(), Name: proto.String("Sweets")})
		return []proto.Message{c, res}, err
	},
	"finance.v1.CategoryService/DeleteCategory": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		cats := financev1.NewCategoryServiceClient(conn)
		c, err := cats.CreateCategory(ctx, &financev1.CreateCategoryRequest{Name: "Temporary"})
		if err != nil {
			return nil, err
		}
		res, err := cats.DeleteCategory(ctx, &financev1.DeleteCategoryRequest{Id: c.GetData().GetId()})
		return []proto.Message{c, res}, err
	},
	"finance.v1.AccountService/ListConnections": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		req := &financev1.ListConnectionsRequest{PageSize: proto.Int32(1)}
		for {
			res, err := financev1.NewAccountServiceClient(conn).ListConnections(ctx, req)
			if err != nil {
				return nil, err
			}
			out = append(out, res)
			if !res.GetPagination().GetHasMore() {
				return out, nil
			}
			req.Cursor = res.GetPagination().GetNextCursor()
		}
	},
	"finance.v1.AccountService/GetAccountBalances": func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		for _, id := range f.accountIDs {
			res, err := financev1.NewAccountServiceClient(conn).GetAccountBalances(ctx, &financev1.GetAccountBalancesRequest{Id: id})
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		}
		return out, nil
	},
	"finance.v1.AccountService/GetAccountBalanceHistory": func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		for _, id := range f.accountIDs {
			res, err := financev1.NewAccountServiceClient(conn).GetAccountBalanceHistory(ctx, &financev1.GetAccountBalanceHistoryRequest{Id: id, Period: "90d"})
			if err != nil {
				return nil, err
			}
			out = append(out, res)
		}
		return out, nil
	},
	"finance.v1.AccountService/ListAccounts": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		var out []proto.Message
		req := &financev1.ListAccountsRequest{PageSize: proto.Int32(1)}
		for {
			res, err := financev1.NewAccountServiceClient(conn).ListAccounts(ctx, req)
			if err != nil {
				return nil, err
			}
			out = append(out, res)
			if !res.GetPagination().GetHasMore() {
				return out, nil
			}
			req.Cursor = res.GetPagination().GetNextCursor()
		}
	},
	"finance.v1.AccountService/GetSyncStatus": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		res, err := financev1.NewAccountServiceClient(conn).GetSyncStatus(ctx, &financev1.GetSyncStatusRequest{})
		return []proto.Message{res}, err
	},
	"finance.v1.HoldingService/ListHoldings": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		res, err := financev1.NewHoldingServiceClient(conn).ListHoldings(ctx, &financev1.ListHoldingsRequest{})
		return []proto.Message{res}, err
	},
	"finance.v1.DebtService/GetDebtSummary": func(ctx context.Context, conn *grpc.ClientConn, _ redactionFixture) ([]proto.Message, error) {
		res, err := financev1.NewDebtServiceClient(conn).GetDebtSummary(ctx, &financev1.GetDebtSummaryRequest{})
		return []proto.Message{res}, err
	},
	"finance.v1.DebtService/CreatePayoffPlan": func(ctx context.Context, conn *grpc.ClientConn, f redactionFixture) ([]proto.Message, error) {
		res, err := financev1.NewDebtServiceClient(conn).CreatePayoffPlan(ctx, &financev1.CreatePayoffPlanRequest{
			LiabilityIds: f.accountIDs, Strategy: debt.StrategyAvalanche, ExtraMonthlyPayment: "100"})
		return []proto.Message{res}, err
	},
}

// TestRedactionCoversEveryPlace checks the rule of docs/privacy.md: for each
// redactable field id, under a grant that redacts it, none of the values it
// covers appears anywhere in any response of any route, and searching for
// one finds nothing. The open grant must see every value, so the fixture
// really carries them.
func TestRedactionCoversEveryPlace(t *testing.T) {
	for _, sd := range []grpc.ServiceDesc{financev1.TransactionService_ServiceDesc,
		financev1.CategoryService_ServiceDesc, financev1.AccountService_ServiceDesc, financev1.DebtService_ServiceDesc,
		financev1.HoldingService_ServiceDesc} {
		for _, m := range sd.Methods {
			if redactionRoutes[sd.ServiceName+"/"+m.MethodName] == nil {
				t.Errorf("route %s/%s is not walked by the redaction test", sd.ServiceName, m.MethodName)
			}
		}
	}
	fieldIDs := []string{finance.FieldConnectionInstitution, finance.FieldTransactionLocation}
	if len(fieldIDs) != len(redactionNeedles) {
		t.Fatal("a redactable field id has no needles")
	}
	// walk calls every route on a fresh copy of the fixture and returns the
	// serialized responses, lower-cased, by route.
	walk := func(t *testing.T, grant func(redactionFixture) string) map[string]string {
		store := memory.New()
		f := seedRedactionFixture(t, store)
		conn := serve(t, store)
		ctx := as(f.principal(grant(f)))
		out := map[string]string{}
		for name, route := range redactionRoutes {
			msgs, err := route(ctx, conn, f)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var b strings.Builder
			for _, m := range msgs {
				js, err := wire.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(js)
				b.WriteByte('\n')
			}
			out[name] = strings.ToLower(b.String())
		}
		return out
	}

	open := walk(t, func(f redactionFixture) string { return f.openGrant })
	for _, id := range fieldIDs {
		for _, needle := range redactionNeedles[id] {
			if !slices.ContainsFunc(mapValues(open), func(s string) bool { return strings.Contains(s, needle) }) {
				t.Errorf("the open grant never sees %q: the fixture does not exercise %s", needle, id)
			}
		}
	}

	for _, id := range fieldIDs {
		t.Run(id, func(t *testing.T) {
			got := walk(t, func(f redactionFixture) string { return f.grants[id] })
			for name, body := range got {
				for _, needle := range redactionNeedles[id] {
					if i := strings.Index(body, needle); i >= 0 {
						t.Errorf("%s leaks %q: …%s…", name, needle, body[max(0, i-80):min(len(body), i+40)])
					}
				}
			}
			// Searching for a redacted value finds nothing: a hit would tell
			// the value is there.
			store := memory.New()
			f := seedRedactionFixture(t, store)
			ctx := as(f.principal(f.grants[id]))
			txc := financev1.NewTransactionServiceClient(serve(t, store))
			for _, needle := range redactionNeedles[id] {
				res, err := txc.SearchTransactions(ctx, &financev1.SearchTransactionsRequest{Q: needle, PageSize: proto.Int32(200)})
				if err != nil || len(res.GetData()) != 0 {
					t.Errorf("search %q under the redacting grant: %d rows, %v", needle, len(res.GetData()), err)
				}
			}
		})
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
