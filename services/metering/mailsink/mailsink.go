// Package mailsink is an in-process SMTP server for the local stack and
// tests (go-smtp): it receives mail over the SMTP protocol, keeps every
// message, and, given a directory, writes each as one .eml file there. It
// accepts any sender and recipient and no authentication: loopback only.
package mailsink

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// Message is one message received.
type Message struct {
	From string
	To   []string
	Data []byte // the message as sent: headers and body
}

// Sink is a running server.
type Sink struct {
	dir  string
	srv  *smtp.Server
	lis  net.Listener
	addr string

	mu      sync.Mutex
	msgs    []Message
	seq     int
	refused map[string]bool
}

// Start listens on addr ("127.0.0.1:0" for a free port) and serves until
// Close. dir, when not empty, receives one .eml file per message.
func Start(addr, dir string) (*Sink, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil { // mails hold reset and invitation links: owner only
			return nil, err
		}
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Sink{dir: dir, lis: lis, addr: lis.Addr().String()}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{sink: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 30*time.Second, 30*time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.AllowInsecureAuth = true
	s.srv.ErrorLog = discardLogger{}
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Addr is the host:port it listens on.
func (s *Sink) Addr() string { return s.addr }

// Close stops the server.
func (s *Sink) Close() error { return s.srv.Close() }

// Refuse makes the server refuse addr for good from now on (550 to RCPT
// TO), as a mail server does a mailbox that does not exist: what tests of
// a permanent refusal need.
func (s *Sink) Refuse(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]bool{}
	}
	s.refused[addr] = true
}

func (s *Sink) refuses(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused[addr]
}

// Messages returns the messages received so far, oldest first.
func (s *Sink) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

func (s *Sink) keep(m Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	if s.dir != "" {
		name := filepath.Join(s.dir, fmt.Sprintf("%s-%04d.eml", time.Now().UTC().Format("20060102T150405"), s.seq))
		if err := os.WriteFile(name, m.Data, 0o600); err != nil {
			return err
		}
	}
	s.msgs = append(s.msgs, m)
	return nil
}

type session struct {
	sink *Sink
	from string
	to   []string
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }
func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.from = from
	return nil
}
func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.sink.refuses(to) {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	ss.to = append(ss.to, to)
	return nil
}
func (ss *session) Data(r io.Reader) error {
	var b bytes.Buffer
	if _, err := io.Copy(&b, r); err != nil {
		return err
	}
	return ss.sink.keep(Message{From: ss.from, To: append([]string(nil), ss.to...), Data: b.Bytes()})
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}
