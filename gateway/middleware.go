package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/ledgerlane/platform/pkg/problem"
	"github.com/ledgerlane/platform/pkg/tracing"
)

type ctxKey int

const reqIDKey ctxKey = 0

// A client may send its own X-Request-Id to correlate logs; anything odd is
// replaced so logs and problem documents never carry arbitrary client bytes.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(reqIDKey).(string)
	return id
}

func (g *Gateway) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			id = newRequestID()
		}
		h := w.Header()
		h.Set("X-Request-Id", id)
		// Every answer, /v1 and the portal alike: never sniff a JSON or
		// XML answer into something a browser would run.
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqIDKey, id)))
	})
}

// statusWriter remembers the status for the access log and whether anything
// was written, so a panic after the header went out is not answered twice.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	v      verdict
}

func (s *statusWriter) verdict() *verdict { return &s.v }

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logInfo is what serving a request learned that the access log line and
// the request metrics need.
type logInfo struct {
	accountID string
	route     string // the route table's pattern, "unmatched" when none
	// The credential of an authenticated request, for its request log.
	credentialID, mode string
	web                bool // the portal's pages: not API requests
}

// withAccessLog logs one line per request and observes its metrics.
func (g *Gateway) withAccessLog(serve func(http.ResponseWriter, *http.Request) logInfo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw, ok := w.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: w}
		}
		li := serve(sw, r)
		took := time.Since(start)
		tracing.SetRoute(r.Context(), r.Method, li.route)
		g.metrics.observe(r.Method, li.route, sw.status, took)
		g.recordRequest(r, li, sw.status, sw.Header(), took)
		// Path only: query strings can hold search terms, and bodies are
		// message content; neither is logged.
		// Typed attributes: one line per request, so no boxing of its
		// numbers into interfaces.
		g.log.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("request_id", requestID(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.status),
			slog.Int64("bytes", sw.bytes), slog.Int64("duration_ms", time.Since(start).Milliseconds()),
			slog.String("account_id", li.accountID))
	})
}

func (g *Gateway) withRecover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			g.log.Error("panic serving request", "request_id", requestID(r.Context()), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw.status == 0 {
				writeProblem(sw, problem.New(problem.Internal, "an unexpected error occurred; quote the request id when reporting it"), requestID(r.Context()))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// Body read deadlines: a body gets bodyReadGrace plus the time its route's
// limit takes at bodyReadFloor bytes a second (a 1 MiB route 13 s, a 16 MiB
// batch the server's two minutes), so a client that trickles a small body
// cannot hold a connection for the server-wide read timeout.
var (
	bodyReadGrace = 5 * time.Second
	bodyReadFloor = int64(128 << 10) // 1 Mbit/s
)

// bodyReadDeadline is how long a body of a route with limit may take.
func bodyReadDeadline(limit int64) time.Duration {
	return min(bodyReadGrace+time.Duration(limit/bodyReadFloor)*time.Second, 2*time.Minute) // serve.go's ReadTimeout
}

// readBody reads the body into memory, bounded by limit and by
// bodyReadDeadline, so that every handler behind it (generated or not) sees
// either a whole body or nothing, and idempotency can fingerprint it. A body
// over the limit is refused with 413 before any backend is called.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *problem.Problem) {
	tooLarge := func() *problem.Problem {
		return problem.New(problem.MessageTooLarge, fmt.Sprintf("the request body exceeds %d bytes", limit))
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > limit {
		return nil, tooLarge()
	}
	// With a Content-Length the buffer is sized once: io.ReadAll would start
	// at 512 bytes and grow (and copy) its way up to the body.
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	rc := http.NewResponseController(w)
	wait := bodyReadDeadline(limit)
	deadlined := rc.SetReadDeadline(time.Now().Add(wait)) == nil // not every writer supports it (tests)
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	if deadlined && err == nil {
		// Read whole: the handler may take its time. (After an error the
		// deadline stays, or the server would wait for the rest of the body
		// it drains before answering.)
		_ = rc.SetReadDeadline(time.Time{})
	}
	if err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			return nil, tooLarge()
		case errors.As(err, &ne) && ne.Timeout():
			return nil, problem.New(problem.InvalidInput, fmt.Sprintf("the request body did not arrive within %s", wait)).WithField("body")
		}
		return nil, problem.New(problem.InvalidInput, "the request body could not be read")
	}
	body := buf.Bytes()
	r.Body = &readBack{Reader: bytes.NewReader(body), body: body}
	r.ContentLength = int64(len(body))
	return body, nil
}

// readBack is a request body readBody has read: handlers read it again, and
// the convert handler takes the bytes as they are instead of a copy.
type readBack struct {
	*bytes.Reader
	body []byte
}

func (readBack) Close() error { return nil }

// bodyBytes is r's body whole: the bytes readBody kept when nothing has read
// them yet, else what is left to read.
func bodyBytes(r *http.Request) ([]byte, error) {
	if rb, ok := r.Body.(*readBack); ok && rb.Len() == len(rb.body) {
		_, _ = rb.Seek(0, io.SeekEnd) // read, as io.ReadAll would leave it
		return rb.body, nil
	}
	return io.ReadAll(r.Body)
}
