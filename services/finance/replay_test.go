package finance_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/budgets"
)

// versioned is one versioned PATCH, driven the same way for every
// resource that has one: write sends body variant n at expected.
type versioned struct {
	name string
	// setup makes a row to patch and returns its id.
	setup func(t *testing.T, e env) string
	write func(e env, c finance.Caller, id string, expected int64, body int) (finance.Result[int64], error)
	// stored is the row's version in the store.
	stored func(t *testing.T, e env, id string) int64
}

var versionedWrites = []versioned{
	{
		name:  "transaction",
		setup: func(t *testing.T, e env) string { return pick(t, e, unedited(e)).ID },
		write: func(e env, c finance.Caller, id string, expected int64, body int) (finance.Result[int64], error) {
			res, err := e.svc.UpdateTransaction(context.Background(), c, finance.TransactionUpdate{ID: id,
				ExpectedVersion: expected, Memo: sp(fmt.Sprintf("memo %d", body))})
			return finance.Result[int64]{Data: res.Data.Version, Replayed: res.Replayed}, err
		},
		stored: func(t *testing.T, e env, id string) int64 {
			tx, err := e.store.GetTransaction(context.Background(), e.demo.UserID, id)
			if err != nil {
				t.Fatal(err)
			}
			return tx.Version
		},
	},
	{
		name: "goal",
		setup: func(t *testing.T, e env) string {
			g, err := e.budgets.CreateGoal(context.Background(), e.write, budgets.GoalInput{Name: sp("Boat"), TargetAmount: sp("5000")})
			if err != nil {
				t.Fatal(err)
			}
			return g.Data.ID
		},
		write: func(e env, c finance.Caller, id string, expected int64, body int) (finance.Result[int64], error) {
			res, err := e.budgets.UpdateGoal(context.Background(), c, id, expected,
				budgets.GoalInput{Name: sp(fmt.Sprintf("Boat %d", body))})
			return finance.Result[int64]{Data: res.Data.Version, Replayed: res.Replayed}, err
		},
		stored: func(t *testing.T, e env, id string) int64 {
			g, err := e.store.GetGoal(context.Background(), e.demo.UserID, id)
			if err != nil {
				t.Fatal(err)
			}
			return g.Version
		},
	},
	{
		name:  "budget allocations",
		setup: func(t *testing.T, e env) string { return e.demo.Budgets.Active },
		write: func(e env, c finance.Caller, id string, expected int64, body int) (finance.Result[int64], error) {
			b, err := e.budgets.GetBudget(context.Background(), e.redacted, id)
			if err != nil {
				return finance.Result[int64]{}, err
			}
			item := b.Data.Groups[0].Items[0].ID // visible to both grants
			res, err := e.budgets.UpdateBudgetAllocations(context.Background(), c, budgets.AllocationUpdate{BudgetID: id,
				ExpectedVersion: expected, Items: []budgets.ItemAllocation{{ID: item, AllocatedAmount: fmt.Sprintf("%d.00", 100+body)}}})
			return finance.Result[int64]{Data: res.Data.Version, Replayed: res.Replayed}, err
		},
		stored: func(t *testing.T, e env, id string) int64 {
			b, err := e.store.GetBudget(context.Background(), e.demo.UserID, id)
			if err != nil {
				t.Fatal(err)
			}
			return b.Version
		},
	},
}

// TestVersionedWriteRetriedAfterALostAnswer: a PATCH whose answer was lost
// after it committed (so the gateway holds no answer to replay) is sent
// again with the same Idempotency-Key and body. The service answers it as
// a replay (the row as the first attempt left it, marked replayed) only
// when it is that very request from the same scope and nothing has written
// the row since; anything else stays 409 version-conflict.
func TestVersionedWriteRetriedAfterALostAnswer(t *testing.T) {
	keyed := func(c finance.Caller, cred, key string) finance.Caller {
		c.CredentialID, c.IdempotencyKey = cred, key
		return c
	}
	type caller func(e env) finance.Caller
	var (
		cred1  caller = func(e env) finance.Caller { return keyed(e.write, "cred-1", "k-1") }
		cred2  caller = func(e env) finance.Caller { return keyed(e.write, "cred-2", "k-1") }
		grant2 caller = func(e env) finance.Caller { return keyed(e.redacted, "cred-1", "k-1") }
		other  caller = func(e env) finance.Caller { return keyed(e.write, "cred-1", "k-2") }
		noKey  caller = func(e env) finance.Caller { return e.write }
	)
	tests := []struct {
		name  string
		first caller
		// between, when set, writes body 7 at the current version after
		// the first attempt committed.
		between caller
		retry   caller
		body    int   // of the retry; the first sends 0
		shift   int64 // added to the retry's expected_version
		replay  bool
	}{
		{name: "same key and body after commit", first: cred1, retry: cred1, replay: true},
		{name: "same key, another body", first: cred1, retry: cred1, body: 1},
		{name: "same key and body, another credential", first: cred1, retry: cred2},
		{name: "same key and body, another grant", first: cred1, retry: grant2},
		{name: "same key and body, an older expected_version", first: cred1, retry: cred1, shift: -1},
		{name: "a keyed write in between", first: cred1, between: other, retry: cred1},
		{name: "a write without a key in between", first: cred1, between: noKey, retry: cred1},
		{name: "no key", first: noKey, retry: noKey},
	}
	for _, w := range versionedWrites {
		for _, tc := range tests {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t, nil)
				id := w.setup(t, e)
				// One write without a key first, so the version the test
				// starts from is above 1 and an older one exists.
				if _, err := w.write(e, e.write, id, w.stored(t, e, id), 9); err != nil {
					t.Fatal(err)
				}
				start := w.stored(t, e, id)
				first, err := w.write(e, tc.first(e), id, start, 0)
				if err != nil || first.Data != start+1 || first.Replayed {
					t.Fatalf("first attempt: version %d replayed %v, %v", first.Data, first.Replayed, err)
				}
				committed := first.Data
				if tc.between != nil {
					if _, err := w.write(e, tc.between(e), id, committed, 7); err != nil {
						t.Fatal(err)
					}
					committed++
				}

				// The answer was lost; the client retries.
				got, err := w.write(e, tc.retry(e), id, start+tc.shift, tc.body)
				if tc.replay {
					if err != nil || !got.Replayed || got.Data != first.Data {
						t.Fatalf("retry: version %d replayed %v, %v; want the first answer's version %d, replayed",
							got.Data, got.Replayed, err, first.Data)
					}
				} else {
					wantProblem(t, err, problem.VersionConflict, "expected_version")
					if got.Replayed {
						t.Error("a refused retry is marked replayed")
					}
				}
				if v := w.stored(t, e, id); v != committed {
					t.Errorf("stored version %d after the retry, want %d: the row changed again", v, committed)
				}
			})
		}
	}
}
