package grpcapi_test

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ledgerlane/platform/pkg/cursor"
	"github.com/ledgerlane/platform/pkg/principal"
	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/rpc"
	financev1 "github.com/ledgerlane/platform/proto/finance/v1"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/grpcapi"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/insights"
	"github.com/ledgerlane/platform/services/finance/memory"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/seed"
	"github.com/ledgerlane/platform/services/finance/stores"
)

var now = time.Date(2026, 5, 20, 14, 30, 0, 0, time.UTC)

// demoAccount is the metering account owning the demo user.
const demoAccount = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"

type clients struct {
	tx       financev1.TransactionServiceClient
	cat      financev1.CategoryServiceClient
	acct     financev1.AccountServiceClient
	budget   financev1.BudgetServiceClient
	goal     financev1.GoalServiceClient
	holding  financev1.HoldingServiceClient
	netWorth financev1.NetWorthServiceClient
	sync     financev1.SyncServiceClient
	conn     *grpc.ClientConn
	demo     seed.DemoData
	read     principal.Principal
	redacted principal.Principal
}

// start serves the demo data through the real server stack on an in-memory
// listener.
func start(t *testing.T) clients {
	t.Helper()
	store := memory.New()
	d, err := seed.Demo(context.Background(), store, demoAccount, now)
	if err != nil {
		t.Fatal(err)
	}
	conn := serve(t, store)
	p := func(grant string) principal.Principal {
		return principal.Principal{AccountID: demoAccount, CredentialID: "cred_1", Kind: "at", Surface: principal.SurfaceFinance,
			Mode: "live", FinanceUserID: d.UserID, GrantID: grant, RequestID: "req-1"}
	}
	return clients{
		tx:       financev1.NewTransactionServiceClient(conn),
		cat:      financev1.NewCategoryServiceClient(conn),
		acct:     financev1.NewAccountServiceClient(conn),
		budget:   financev1.NewBudgetServiceClient(conn),
		goal:     financev1.NewGoalServiceClient(conn),
		holding:  financev1.NewHoldingServiceClient(conn),
		netWorth: financev1.NewNetWorthServiceClient(conn),
		sync:     financev1.NewSyncServiceClient(conn),
		conn:     conn,
		demo:     d,
		read:     p(d.GrantReadID),
		redacted: p(d.GrantRedactedID),
	}
}

// serve serves store through the real server stack on an in-memory
// listener, with the clock at now.
func serve(t *testing.T, store stores.Store) *grpc.ClientConn {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	svc := finance.NewService(finance.Config{Store: store, Cursors: cursor.New([]byte("k")), Clock: func() time.Time { return now }, Log: log})
	srv := rpc.NewServer(log, nil)
	rec := recurring.NewService(recurring.Config{Kernel: svc, Store: store})
	grpcapi.Register(srv, grpcapi.Services{Finance: svc,
		BankSync:  banksync.NewService(banksync.Config{Kernel: svc, Store: store}),
		Budgets:   budgets.NewService(budgets.Config{Kernel: svc, Recurring: rec, Store: store}),
		Recurring: rec,
		Debt:      debt.NewService(debt.Config{Kernel: svc, Store: store}),
		Insights:  insights.NewService(insights.Config{Kernel: svc, Store: store}),
		Imports:   imports.NewService(imports.Config{Kernel: svc, Store: store}),
		NetWorth:  networth.NewService(networth.Config{Kernel: svc, Store: store})})
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rpc.Serve(ctx, srv, lis, time.Second) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return conn
}

func as(p principal.Principal) context.Context {
	return principal.Outgoing(context.Background(), p)
}

func wantProblem(t *testing.T, err error, typ problem.Type, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got success", typ)
	}
	p := rpc.Problem(err)
	if p.Type != typ || p.Field != field {
		t.Fatalf("got %s (field %q, %v), want %s (field %q)", p.Type, p.Field, err, typ, field)
	}
}

func TestUnauthorized(t *testing.T) {
	c := start(t)
	conversion := c.read
	conversion.Surface = principal.SurfaceConversion
	noUser := c.read
	noUser.FinanceUserID = ""
	badGrant := c.read
	badGrant.GrantID = uuid.NewString()
	otherAccount := c.read
	otherAccount.AccountID = uuid.NewString()
	tests := []struct {
		name string
		ctx  context.Context
	}{
		{"no principal", context.Background()},
		{"conversion credential", as(conversion)},
		{"no finance user", as(noUser)},
		{"unknown grant", as(badGrant)},
		{"credential of another account", as(otherAccount)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := []func() error{
				func() error {
					_, err := c.tx.ListTransactions(tc.ctx, &financev1.ListTransactionsRequest{})
					return err
				},
				func() error {
					_, err := c.tx.GetTransaction(tc.ctx, &financev1.GetTransactionRequest{Id: uuid.NewString()})
					return err
				},
				func() error { _, err := c.cat.ListCategories(tc.ctx, &financev1.ListCategoriesRequest{}); return err },
				func() error {
					_, err := c.acct.ListConnections(tc.ctx, &financev1.ListConnectionsRequest{})
					return err
				},
				func() error {
					_, err := c.acct.GetAccountBalances(tc.ctx, &financev1.GetAccountBalancesRequest{Id: c.demo.AccountIDs.Checking})
					return err
				},
				func() error { _, err := c.acct.GetSyncStatus(tc.ctx, &financev1.GetSyncStatusRequest{}); return err },
			}
			for _, call := range calls {
				err := call()
				if status.Code(err) != codes.Unauthenticated {
					t.Fatalf("code %v, want Unauthenticated", status.Code(err))
				}
				wantProblem(t, err, problem.Unauthorized, "")
			}
		})
	}
}

func TestListTransactions(t *testing.T) {
	c := start(t)
	ctx := as(c.read)
	var rows []*financev1.Transaction
	req := &financev1.ListTransactionsRequest{PageSize: proto.Int32(200)}
	for range 50 {
		resp, err := c.tx.ListTransactions(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, resp.GetData()...)
		if !resp.GetPagination().GetHasMore() {
			if resp.GetPagination().GetNextCursor() != "" {
				t.Fatal("last page carries a cursor")
			}
			break
		}
		req.Cursor = resp.GetPagination().GetNextCursor()
	}
	if len(rows) != c.demo.Transactions {
		t.Fatalf("%d rows over gRPC, the demo has %d", len(rows), c.demo.Transactions)
	}
	var located, pending, eur, edited bool
	for _, r := range rows {
		if r.GetId() == "" || r.GetAccountId() == "" || r.Date == nil || r.GetAmount().GetAmount() == "" ||
			r.Version == nil || r.GetCreatedAt() == nil || r.Source == nil {
			t.Fatalf("row missing fields: %v", r)
		}
		if _, err := time.Parse(finance.DateLayout, r.GetDate()); err != nil {
			t.Fatalf("date %q", r.GetDate())
		}
		located = located || r.GetLocation().GetCity() != ""
		pending = pending || r.GetIsPending()
		eur = eur || r.GetAmount().GetCurrency() == "EUR"
		edited = edited || r.ProviderMerchantName != nil || r.ProviderMemo != nil || r.ProviderTransactionDate != nil
		if r.GetIsPending() && r.GetPostedAt() != nil {
			t.Fatalf("pending row %s has posted_at", r.GetId())
		}
	}
	if !located || !pending || !eur || !edited {
		t.Errorf("located %v, pending %v, eur %v, edited %v", located, pending, eur, edited)
	}
}

func TestTransactionMapping(t *testing.T) {
	c := start(t)
	resp, err := c.tx.ListTransactions(as(c.read), &financev1.ListTransactionsRequest{
		AccountId: c.demo.AccountIDs.Savings, Source: finance.SourceBankSync, PageSize: proto.Int32(200)})
	if err != nil {
		t.Fatal(err)
	}
	var transfer *financev1.Transaction
	for _, r := range resp.GetData() {
		if r.TransferPairId != nil {
			transfer = r
			break
		}
	}
	if transfer == nil {
		t.Fatal("no transfer into savings")
	}
	if transfer.GetAmount().GetAmount() != "500.00" || transfer.GetAmount().GetCurrency() != "USD" {
		t.Errorf("amount = %v", transfer.GetAmount())
	}
	if transfer.GetCategoryId() != c.demo.CategoryIDs["Savings & Investments"] || transfer.Location != nil {
		t.Errorf("transfer = %v", transfer)
	}
	got, err := c.tx.GetTransaction(as(c.read), &financev1.GetTransactionRequest{Id: transfer.GetTransferPairId()})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetData().GetAmount().GetAmount() != "-500.00" || got.GetData().GetTransferPairId() != transfer.GetId() {
		t.Errorf("other leg = %v", got.GetData())
	}
}

func TestPrivacyOverGRPC(t *testing.T) {
	c := start(t)
	resp, err := c.tx.ListTransactions(as(c.redacted), &financev1.ListTransactionsRequest{PageSize: proto.Int32(200)})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.GetFiltered() || !slices.Equal(resp.GetRedactedFields(), []string{finance.FieldTransactionLocation, finance.FieldConnectionInstitution}) {
		t.Errorf("envelope: filtered %v, redacted %v", resp.GetFiltered(), resp.GetRedactedFields())
	}
	for _, r := range resp.GetData() {
		if r.Location != nil || r.GetAccountId() == c.demo.ExcludedAccountID {
			t.Fatalf("row %s leaks", r.GetId())
		}
	}
	_, err = c.acct.GetAccountBalances(as(c.redacted), &financev1.GetAccountBalancesRequest{Id: c.demo.ExcludedAccountID})
	if status.Code(err) != codes.NotFound {
		t.Errorf("excluded account: %v", err)
	}
	wantProblem(t, err, problem.NotFound, "")

	conns, err := c.acct.ListConnections(as(c.redacted), &financev1.ListConnectionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conns.GetRedactedFields(), []string{finance.FieldConnectionInstitution}) || !conns.GetFiltered() {
		t.Errorf("connections envelope: %v %v", conns.GetRedactedFields(), conns.GetFiltered())
	}
	for _, conn := range conns.GetData() {
		if conn.Institution != nil || conn.InstitutionLogoUrl != nil {
			t.Errorf("connection %s keeps its institution", conn.GetId())
		}
	}
	cats, err := c.cat.ListCategories(as(c.redacted), &financev1.ListCategoriesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cat := range cats.GetData() {
		if cat.GetId() == c.demo.ExcludedCategoryID || cat.GetParentId() == c.demo.ExcludedCategoryID {
			t.Errorf("excluded category %s listed", cat.GetName())
		}
	}
}

func TestAccountService(t *testing.T) {
	c := start(t)
	ctx := as(c.read)
	conns, err := c.acct.ListConnections(ctx, &financev1.ListConnectionsRequest{PageSize: proto.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(conns.GetData()) != 2 || !conns.GetPagination().GetHasMore() {
		t.Fatalf("first page: %d, more %v", len(conns.GetData()), conns.GetPagination().GetHasMore())
	}
	rest, err := c.acct.ListConnections(ctx, &financev1.ListConnectionsRequest{PageSize: proto.Int32(2), Cursor: conns.GetPagination().GetNextCursor()})
	if err != nil {
		t.Fatal(err)
	}
	all := append(conns.GetData(), rest.GetData()...)
	if len(all) != 3 || rest.GetPagination().GetHasMore() {
		t.Fatalf("connections: %d", len(all))
	}
	for _, conn := range all {
		switch conn.GetProvider() {
		case finance.ProviderPlaid:
			if conn.SourceAggregator != nil || conn.GetAccountCount() != 3 || conn.GetLastSyncedAt() == nil {
				t.Errorf("plaid connection: %v", conn)
			}
		case finance.ProviderQuiltt:
			if conn.GetSourceAggregator() != "mx" || conn.GetErrorCode() == "" || conn.GetStatus() != finance.ConnectionLoginRequired {
				t.Errorf("quiltt connection: %v", conn)
			}
		case finance.ProviderManual:
			if conn.LastSyncedAt != nil || conn.GetAccountCount() != 4 { // mortgage, EUR, car and student loans
				t.Errorf("manual connection: %v", conn)
			}
		default:
			t.Errorf("provider %q", conn.GetProvider())
		}
	}

	bal, err := c.acct.GetAccountBalances(ctx, &financev1.GetAccountBalancesRequest{Id: c.demo.AccountIDs.EuroChecking})
	if err != nil {
		t.Fatal(err)
	}
	if bal.GetData().GetBalance().GetCurrency() != "EUR" || bal.GetData().GetAccountId() != c.demo.AccountIDs.EuroChecking ||
		bal.GetData().GetAsOf() == nil || bal.GetData().GetName() == "" {
		t.Errorf("balance: %v", bal.GetData())
	}

	st, err := c.acct.GetSyncStatus(ctx, &financev1.GetSyncStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetData().AllHealthy == nil || st.GetData().GetAllHealthy() || len(st.GetData().GetConnections()) != 3 ||
		!st.GetData().GetOldestSyncedAt().AsTime().Equal(now.Add(-77*time.Hour)) {
		t.Errorf("sync status: %v", st.GetData())
	}
}

func TestInvalidInputOverGRPC(t *testing.T) {
	c := start(t)
	ctx := as(c.read)
	first, err := c.tx.ListTransactions(ctx, &financev1.ListTransactionsRequest{PageSize: proto.Int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	redactedCursor, err := c.tx.ListTransactions(as(c.redacted), &financev1.ListTransactionsRequest{PageSize: proto.Int32(3)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		req   *financev1.ListTransactionsRequest
		field string
	}{
		{"page size too large", &financev1.ListTransactionsRequest{PageSize: proto.Int32(201)}, "page_size"},
		{"negative page size", &financev1.ListTransactionsRequest{PageSize: proto.Int32(-5)}, "page_size"},
		{"account id", &financev1.ListTransactionsRequest{AccountId: "acc_1"}, "account_id"},
		{"category id", &financev1.ListTransactionsRequest{CategoryId: "food"}, "category_id"},
		{"start date", &financev1.ListTransactionsRequest{StartDate: "2025-1-1"}, "start_date"},
		{"end date", &financev1.ListTransactionsRequest{EndDate: "tomorrow"}, "end_date"},
		{"source", &financev1.ListTransactionsRequest{Source: "plaid"}, "source"},
		{"forged cursor", &financev1.ListTransactionsRequest{Cursor: "eyJkIjoiMjAyNi0wMS0wMSJ9.AAAA"}, "cursor"},
		{"cursor of another grant", &financev1.ListTransactionsRequest{Cursor: redactedCursor.GetPagination().GetNextCursor()}, "cursor"},
		{"cursor of another filter", &financev1.ListTransactionsRequest{Cursor: first.GetPagination().GetNextCursor(), Source: "manual"}, "cursor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.tx.ListTransactions(ctx, tc.req)
			if status.Code(err) != codes.InvalidArgument {
				t.Fatalf("code %v, want InvalidArgument", status.Code(err))
			}
			wantProblem(t, err, problem.InvalidInput, tc.field)
		})
	}
	_, err = c.tx.GetTransaction(ctx, &financev1.GetTransactionRequest{Id: "search"})
	wantProblem(t, err, problem.InvalidInput, "id")
	_, err = c.acct.GetAccountBalances(ctx, &financev1.GetAccountBalancesRequest{})
	wantProblem(t, err, problem.InvalidInput, "id")
	_, err = c.acct.ListConnections(ctx, &financev1.ListConnectionsRequest{Cursor: first.GetPagination().GetNextCursor()})
	wantProblem(t, err, problem.InvalidInput, "cursor")
}

// Every finance method is built: net worth, the last one, answers (the
// 501 check moved to deploy/local's conversion surface).
func TestNetWorth(t *testing.T) {
	c := start(t)
	nw, err := c.netWorth.GetNetWorth(as(c.read), &financev1.GetNetWorthRequest{BaseCurrency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	d := nw.GetData()
	if d.GetBaseCurrency() != "EUR" || d.GetNetWorth() == "" || d.GetBreakdown().GetLiquidity().GetLiquid().GetLabel() != "liquid" ||
		len(d.GetBreakdown().GetByCurrency()) != 2 || nw.GetFiltered() || d.GetComputedAt() == nil {
		t.Fatalf("net worth: %v", nw)
	}
	// 90 days of points: today's the stored snapshot, every earlier one
	// derived from the demo's transactions.
	h, err := c.netWorth.GetNetWorthHistory(as(c.read), &financev1.GetNetWorthHistoryRequest{Period: "90d"})
	if err != nil || len(h.GetData()) != 90 || h.GetData()[0].GetBaseCurrency() != "USD" || h.GetPagination().GetHasMore() ||
		!h.GetData()[0].GetDerived() || h.GetData()[89].GetDerived() {
		t.Fatalf("history: %v %v", err, h)
	}
	_, err = c.netWorth.GetNetWorth(as(c.redacted), &financev1.GetNetWorthRequest{})
	wantProblem(t, err, problem.DataExcluded, "")
	_, err = c.netWorth.GetNetWorthHistory(as(c.read), &financev1.GetNetWorthHistoryRequest{Period: "3w"})
	wantProblem(t, err, problem.InvalidInput, "period")
	_, err = c.netWorth.GetNetWorth(as(c.read), &financev1.GetNetWorthRequest{BaseCurrency: "JPY"})
	wantProblem(t, err, problem.Unprocessable, "base_currency")
}

// TestTestCredentialNeverReachesALiveUser: a test-mode credential bound to
// the (live) demo user, as one issued before modes could be, is refused on
// every call: test mode never reads live data.
func TestTestCredentialNeverReachesALiveUser(t *testing.T) {
	c := start(t)
	test := c.read
	test.Mode = "test"
	_, err := c.tx.ListTransactions(as(test), &financev1.ListTransactionsRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a test credential on a live user: %v", err)
	}
}

// The sync status says since when recurring detection has rows to catch up
// on, and nothing once it has read them.
func TestSyncStatusShowsDetectionFreshness(t *testing.T) {
	store := memory.New()
	d, err := seed.Demo(context.Background(), store, demoAccount, now)
	if err != nil {
		t.Fatal(err)
	}
	acct := financev1.NewAccountServiceClient(serve(t, store))
	ctx := as(principal.Principal{AccountID: demoAccount, CredentialID: "cred_1", Kind: "at", Surface: principal.SurfaceFinance,
		Mode: "live", FinanceUserID: d.UserID, GrantID: d.GrantReadID, RequestID: "req-1"})
	dueSince := func() *timestamppb.Timestamp {
		t.Helper()
		st, err := acct.GetSyncStatus(ctx, &financev1.GetSyncStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return st.GetData().GetRecurringDetectionDueSince()
	}
	if m, due, _ := store.RecurringDue(context.Background(), d.UserID); due {
		if _, err := store.ClearRecurringDue(context.Background(), m, now); err != nil {
			t.Fatal(err)
		}
	}
	if got := dueSince(); got != nil {
		t.Fatalf("detection up to date, yet due since %v", got.AsTime())
	}
	changed := now.Add(-time.Minute)
	if err := store.MarkRecurringDue(context.Background(), d.UserID, changed); err != nil {
		t.Fatal(err)
	}
	if got := dueSince(); got == nil || !got.AsTime().Equal(changed) {
		t.Fatalf("due since %v, want %v", got, changed)
	}
}
