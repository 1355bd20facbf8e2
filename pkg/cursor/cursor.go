// Package cursor makes opaque, tamper-evident pagination cursors. A cursor is a
// JSON position signed with HMAC-SHA256 over a scope string that the caller
// builds from whatever the position is only valid for (the user, the route and
// its filters). A forged, truncated or foreign cursor fails Decode with
// ErrInvalid, which handlers answer as 400 invalid-input.
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// ErrInvalid is returned for any cursor that was not issued for this scope.
var ErrInvalid = errors.New("cursor is invalid or belongs to another query")

// Codec signs and checks cursors with one key.
type Codec struct {
	key []byte
}

// New returns a codec with key; every replica of a service must share it.
func New(key []byte) *Codec { return &Codec{key: append([]byte(nil), key...)} }

var enc = base64.RawURLEncoding

// Encode returns the cursor for position, bound to scope.
func (c *Codec) Encode(scope string, position any) (string, error) {
	raw, err := json.Marshal(position)
	if err != nil {
		return "", err
	}
	body := enc.EncodeToString(raw)
	return body + "." + enc.EncodeToString(c.mac(scope, body)), nil
}

// Decode checks token against scope and unmarshals its position into dst.
func (c *Codec) Decode(token, scope string, dst any) error {
	body, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 4096 {
		return ErrInvalid
	}
	got, err := enc.DecodeString(sig)
	if err != nil || !hmac.Equal(got, c.mac(scope, body)) {
		return ErrInvalid
	}
	raw, err := enc.DecodeString(body)
	if err != nil {
		return ErrInvalid
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return ErrInvalid
	}
	return nil
}

func (c *Codec) mac(scope, body string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return m.Sum(nil)[:16]
}
