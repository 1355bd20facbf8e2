package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/ledgerlane/platform/gateway/route"
)

// credential says whose key a scenario sends.
type credential int

const (
	accountKey   credential = iota // one of the provisioned accounts, round robin
	financeRead                    // the demo finance-read credential
	financeWrite                   // the demo finance-write credential
)

// scenario is one kind of request the tool sends: always the same route, so
// its row in the report is that route's figures.
type scenario struct {
	name    string
	method  string
	pattern string // the route table's pattern, for the report and units
	cred    credential
	// build makes the request. after, when not nil, runs with the answer
	// (finance writes learn the row's next version from it). skip: nothing
	// to send this time (the run is ending).
	build func(ctx context.Context, r *runner) (c *call, after afterFunc, skip bool)
}

// call is one request of the mix; the runner adds the credential and sends
// it (one).
type call struct {
	method, path string
	body         []byte
	header       [][2]string
}

func (c *call) set(name, value string) { c.header = append(c.header, [2]string{name, value}) }

// afterFunc sees a scenario's answer: its status (0: none), body, and
// whether it was replayed from the idempotency store.
type afterFunc func(status int, body []byte, replayed bool)

// samples are the request bodies, read once from the shared samples folder.
type samples struct {
	mt940, camt053, mt103, pacs008 []byte
	validate, batch                []byte
}

// Sample files, relative to the samples folder; the same files the
// end-to-end tests convert.
var sampleFiles = map[string]string{
	"mt940":   "mt/php-mt940/Ing_sample",
	"camt053": "pairs/cbpr_mx_to_mt/c_105_1_1__CBPR+_c.105.1.1_camt.053-BtoA.input.xml",
	"mt103":   "pairs/cbpr_mt_to_mx/c_53_5__mt103_pacs008_A_B.input.fin",
	"pacs008": "pairs/cbpr_mx_to_mt/p_2_1_1__CBPR+_p.2.1.1_pacs.008-AtoB.input.xml",
}

func readSamples(dir string, batchItems int) (samples, error) {
	var s samples
	for name, dst := range map[string]*[]byte{"mt940": &s.mt940, "camt053": &s.camt053, "mt103": &s.mt103, "pacs008": &s.pacs008} {
		b, err := os.ReadFile(filepath.Join(dir, sampleFiles[name]))
		if err != nil {
			return s, fmt.Errorf("samples (-samples): %w", err)
		}
		*dst = b
	}
	var err error
	if s.validate, err = json.Marshal(map[string]string{"message": string(s.mt940)}); err != nil {
		return s, err
	}
	items := make([]map[string]string, batchItems)
	for i := range items {
		items[i] = map[string]string{"message": string(s.mt940)}
	}
	s.batch, err = json.Marshal(map[string]any{"to": "camt.053", "items": items})
	return s, err
}

// rawConvert posts body as it is, as a client converting files does.
func rawConvert(name, to, contentType string, body func(*samples) []byte) scenario {
	return scenario{name: name, method: http.MethodPost, pattern: "/v1/convert", cred: accountKey,
		build: func(ctx context.Context, r *runner) (*call, afterFunc, bool) {
			c := &call{method: http.MethodPost, path: "/v1/convert?to=" + to, body: body(&r.samples)}
			c.set("Content-Type", contentType)
			return c, nil, false
		}}
}

func jsonPost(name, path string, body func(*samples) []byte) scenario {
	return scenario{name: name, method: http.MethodPost, pattern: path, cred: accountKey,
		build: func(ctx context.Context, r *runner) (*call, afterFunc, bool) {
			c := &call{method: http.MethodPost, path: path, body: body(&r.samples)}
			c.set("Content-Type", "application/json")
			return c, nil, false
		}}
}

var scenarios = map[string]scenario{
	"convert-mt940-camt053": rawConvert("convert-mt940-camt053", "camt.053", "application/x-swift-mt", func(s *samples) []byte { return s.mt940 }),
	"convert-camt053-mt940": rawConvert("convert-camt053-mt940", "MT940", "application/xml", func(s *samples) []byte { return s.camt053 }),
	"convert-mt103-pacs008": rawConvert("convert-mt103-pacs008", "pacs.008", "application/x-swift-mt", func(s *samples) []byte { return s.mt103 }),
	"convert-pacs008-mt103": rawConvert("convert-pacs008-mt103", "MT103", "application/xml", func(s *samples) []byte { return s.pacs008 }),
	"validate":              jsonPost("validate", "/v1/validate", func(s *samples) []byte { return s.validate }),
	"batch":                 jsonPost("batch", "/v1/convert/batch", func(s *samples) []byte { return s.batch }),
	"finance-read": {name: "finance-read", method: http.MethodGet, pattern: "/v1/transactions", cred: financeRead,
		build: func(ctx context.Context, r *runner) (*call, afterFunc, bool) {
			return &call{method: http.MethodGet, path: "/v1/transactions?page_size=25"}, nil, false
		}},
	"finance-write": {name: "finance-write", method: http.MethodPatch, pattern: "/v1/transactions/{id}", cred: financeWrite,
		build: buildFinanceWrite},
}

// ScenarioNames lists the scenarios a mix may name, sorted.
func ScenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// units is what one 2xx answer of sc draws from its account's quota, read
// from the gateway's route table (0 for an unmetered route).
func (sc scenario) units(batchItems int) int64 {
	m := route.Lookup(sc.method, sc.pattern)
	surface := route.Conversion
	if sc.cred != accountKey {
		surface = route.Finance
	}
	rt, ok := m.For(surface)
	if !ok || !rt.Metered {
		return 0
	}
	if rt.Units == route.UnitsPerItem {
		return int64(batchItems)
	}
	return 1
}

// txRow is a demo transaction a finance write edits, with the version the
// next write must name.
type txRow struct {
	id      string
	version int64
}

// sentWrite is a finance write that was answered 200, which a replay sends
// again.
type sentWrite struct {
	id, key string
	body    []byte
}

// replayEvery: every fifth finance write sends the last write answered 200
// again, same Idempotency-Key and body, which the stack must answer from its
// idempotency store (Idempotency-Replayed: true) without editing the row.
const replayEvery = 5

// buildFinanceWrite edits the memo of a transaction taken from the pool
// with a fresh Idempotency-Key, or replays an earlier write. A row is edited
// by one request at a time, so writes do not conflict with each other; the
// answer gives the row back with its new version.
func buildFinanceWrite(ctx context.Context, r *runner) (*call, afterFunc, bool) {
	n := r.writes.Add(1)
	if last := r.lastWrite.Load(); last != nil && n%replayEvery == 0 {
		c := &call{method: http.MethodPatch, path: "/v1/transactions/" + last.id, body: last.body}
		c.set("Content-Type", "application/json")
		c.set("Idempotency-Key", last.key)
		return c, func(status int, _ []byte, replayed bool) {
			switch {
			case status == http.StatusOK && replayed:
				r.replays.Add(1)
			case status == http.StatusTooManyRequests:
				r.replaysRefused.Add(1)
			default:
				r.replayMisses.Add(1)
			}
		}, false
	}
	var tx txRow
	select {
	case tx = <-r.txPool:
	case <-ctx.Done():
		return nil, nil, true
	}
	key := fmt.Sprintf("load-%s-%d", r.runID, n)
	body, _ := json.Marshal(map[string]any{"expected_version": tx.version, "memo": fmt.Sprintf("load %s #%d", r.runID, n)})
	c := &call{method: http.MethodPatch, path: "/v1/transactions/" + tx.id, body: body}
	c.set("Content-Type", "application/json")
	c.set("Idempotency-Key", key)
	return c, func(status int, b []byte, _ bool) {
		if v, ok := versionOf(b); ok && status == http.StatusOK {
			tx.version = v
			r.lastWrite.Store(&sentWrite{id: tx.id, key: key, body: body})
		} else if v, err := r.currentVersion(tx.id); err == nil {
			// Someone else (the sandbox bank) changed the row: go on from
			// its current version.
			tx.version = v
		}
		r.txPool <- tx
	}, false
}

// versionOf reads "version" from a transaction's JSON, bare (a list's
// element) or wrapped in "data" (the answer of a read or an edit); a
// number or, as protojson writes 64-bit integers, a string.
func versionOf(b []byte) (int64, bool) {
	var t struct {
		Version json.RawMessage `json:"version"`
		Data    *struct {
			Version json.RawMessage `json:"version"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &t) != nil {
		return 0, false
	}
	raw := t.Version
	if t.Data != nil {
		raw = t.Data.Version
	}
	if len(raw) == 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(bytes.Trim(raw, `"`)), 10, 64)
	return v, err == nil
}
