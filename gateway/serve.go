package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve runs h on lis until ctx ends, then shuts down gracefully: the listener
// closes at once and in-flight requests get up to grace to finish. It
// returns as soon as the last of them has: connections that never sent a
// request (a client's pre-dialled spare, a probe) are closed at once, where
// http.Server.Shutdown alone waits five seconds for each before counting it
// idle.
func Serve(ctx context.Context, lis net.Listener, h http.Handler, grace time.Duration) error {
	var (
		mu       sync.Mutex
		fresh    = map[net.Conn]bool{} // accepted, no request read yet
		stopping bool
	)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // a 16 MiB batch over a slow link
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnState: func(c net.Conn, st http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case st == http.StateNew && stopping:
				_ = c.Close()
			case st == http.StateNew:
				fresh[c] = true
			default:
				delete(fresh, c)
			}
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	mu.Lock()
	stopping = true
	for c := range fresh {
		_ = c.Close()
	}
	mu.Unlock()
	return srv.Shutdown(sctx)
}
