// Package stores names the whole finance store: the kernel's finance.Store
// and the Store of each subdomain package, which memory.Store and
// postgres.Store implement. The wiring (server), the demo (seed) and the
// conformance suite take it; a service takes only its own Store.
package stores

import (
	"github.com/ledgerlane/platform/services/finance"
	"github.com/ledgerlane/platform/services/finance/banksync"
	"github.com/ledgerlane/platform/services/finance/budgets"
	"github.com/ledgerlane/platform/services/finance/debt"
	"github.com/ledgerlane/platform/services/finance/events"
	"github.com/ledgerlane/platform/services/finance/imports"
	"github.com/ledgerlane/platform/services/finance/networth"
	"github.com/ledgerlane/platform/services/finance/recurring"
	"github.com/ledgerlane/platform/services/finance/sandboxlink"
)

// Store is every part of the finance store.
type Store interface {
	finance.Store
	banksync.Store
	budgets.Store
	debt.Store
	events.Store
	events.OutboxStore
	imports.Store
	networth.Store
	recurring.Store
	sandboxlink.Store
}
