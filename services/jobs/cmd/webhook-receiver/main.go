// Command webhook-receiver is the worked example of docs/jobs.md: a receiver
// that verifies job.completed deliveries and logs them (metadata only).
//
//	WEBHOOK_SECRET=whsec_… ADDR=127.0.0.1:9999 go run ./services/jobs/cmd/webhook-receiver
package main

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/ledgerlane/platform/services/jobs/webhook"
)

func main() {
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("WEBHOOK_SECRET is required (the whsec_… shown once by POST /v1/webhooks)")
	}
	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = "127.0.0.1:9999"
	}
	var mu sync.Mutex
	seen := map[string]bool{} // delivery ids already handled; use a shared store in production
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		// Verify before looking at the body at all.
		if err := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), body, time.Now()); err != nil {
			log.Printf("rejected: %v", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		id := r.Header.Get(webhook.DeliveryHeader)
		mu.Lock()
		dup := seen[id]
		seen[id] = true
		mu.Unlock()
		if dup {
			w.WriteHeader(http.StatusOK) // a retry of a delivery already handled
			return
		}
		var ev struct {
			Event          string `json:"event"`
			ID             string `json:"id"`
			Status         string `json:"status"`
			ItemCount      int    `json:"item_count"`
			SucceededCount int    `json:"succeeded_count"`
			FailedCount    int    `json:"failed_count"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		log.Printf("verified %s delivery %s: job %s %s (%d items, %d ok, %d failed)",
			ev.Event, id, ev.ID, ev.Status, ev.ItemCount, ev.SucceededCount, ev.FailedCount)
		w.WriteHeader(http.StatusNoContent)
	})
	log.Printf("listening on http://%s", addr)
	log.Fatal(http.ListenAndServe(addr, nil))
}
