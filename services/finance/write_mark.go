package finance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// WriteMark fingerprints the last versioned write a row took under an
// Idempotency-Key (a PATCH of a transaction, a goal or a budget's
// allocations). The gateway keeps the answer to a key, but when that answer
// is lost after the write committed (the gateway died before storing it, or
// Redis was unreachable), the retry reaches the service again with a version
// the write has moved on. The mark lets the service recognise that retry and
// answer it as the first attempt was answered instead of 409
// version-conflict (Replays).
//
// Only hashes are kept: the key is a client's secret-ish token and the
// content may be free text, neither of which needs to sit in the row.
type WriteMark struct {
	// Key is the hex SHA-256 of the Idempotency-Key in the scope the edge
	// keys its records by (Caller.scopedKey): another credential, user or
	// grant sending the same key has another Key.
	Key string `json:"key"`
	// Content is the hex SHA-256 of the request's fields (writeContent).
	Content string `json:"content"`
	// Version is the version the write produced.
	Version int64 `json:"version"`
}

// scopedKey is the hex SHA-256 of c's Idempotency-Key in the scope DerivedID
// uses (the user, the grant and the credential), or "" without a key. The
// ids never contain "|" and the key comes last, so the joined form is
// unambiguous.
func (c Caller) scopedKey() string {
	if c.IdempotencyKey == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("write|" + c.UserID + "|" + c.GrantID + "|" + c.CredentialID + "|" + c.IdempotencyKey))
	return hex.EncodeToString(sum[:])
}

// writeContent is the hex SHA-256 of a write request in canonical form: kind
// names the route, and req is the request as the service received it with
// its expected_version zeroed (a retry sends the same one, which Replays
// checks against the mark's version itself). encoding/json writes struct
// fields in declaration order and tells absent (null) from empty, which is
// what the writes tell apart.
func writeContent(kind string, req any) (string, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append([]byte(kind+"|"), b...))
	return hex.EncodeToString(sum[:]), nil
}

// PendingWrite is what a versioned write under c will record, computed
// before the write: nil when c carries no Idempotency-Key (such writes
// clear the mark, so a later retry of an older keyed write is not taken
// for the latest).
type PendingWrite struct {
	key, content string
}

// NewPendingWrite fingerprints a write of kind req for c.
func NewPendingWrite(c Caller, kind string, req any) (*PendingWrite, error) {
	key := c.scopedKey()
	if key == "" {
		return nil, nil
	}
	content, err := writeContent(kind, req)
	if err != nil {
		return nil, err
	}
	return &PendingWrite{key: key, content: content}, nil
}

// Mark is the WriteMark of p committed at version; nil for a write without
// a key.
func (p *PendingWrite) Mark(version int64) *WriteMark {
	if p == nil {
		return nil
	}
	return &WriteMark{Key: p.key, Content: p.content, Version: version}
}

// Replays reports whether a request that found the row at current while
// expecting expected is the retry of the row's last write: the same scoped
// key and content, sent at the version that write started from, and no
// write since (the row is still at the version the write produced). Then
// the row as it is now is exactly what the first attempt answered.
// Anything else is a real conflict.
func (p *PendingWrite) Replays(last *WriteMark, current, expected int64) bool {
	return p != nil && last != nil &&
		last.Key == p.key && last.Content == p.content &&
		current == last.Version && expected == last.Version-1
}
