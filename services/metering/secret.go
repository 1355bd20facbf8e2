package metering

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
)

// A secret is "<kind>_<mode>_" followed by 32 random bytes in lowercase
// unpadded base32 (52 characters), e.g. "ak_test_…". The mode segment is how a
// test key is told from a live key: anyone holding the secret can see it, no
// lookup needed. Lowercase base32 survives copy-paste, URLs and
// case-insensitive tools unharmed.
const (
	secretAlphabet  = "abcdefghijklmnopqrstuvwxyz234567"
	secretRandBytes = 32
	secretBodyLen   = 52 // ceil(32*8/5)
	displayPrefix   = 12 // "ak_live_" plus four random characters
)

// TokenEncoding writes random bytes in the secrets' alphabet (lowercase base32,
// no padding): secrets, and the portal's tokens and OAuth client ids.
var TokenEncoding = base32.NewEncoding(secretAlphabet).WithPadding(base32.NoPadding)

// newSecret returns a fresh secret for kind and mode.
func newSecret(kind, mode string) string {
	b := make([]byte, secretRandBytes)
	// crypto/rand.Read never fails on supported platforms (it panics instead).
	_, _ = rand.Read(b)
	return kind + "_" + mode + "_" + TokenEncoding.EncodeToString(b)
}

// ParseSecret reports the kind and mode a secret claims, or ok false when it is
// not shaped like one of ours. A well-shaped secret may still be unknown.
func ParseSecret(secret string) (kind, mode string, ok bool) {
	kind, rest, ok1 := strings.Cut(secret, "_")
	mode, body, ok2 := strings.Cut(rest, "_")
	if !ok1 || !ok2 {
		return "", "", false
	}
	if kind != KindAPIKey && kind != KindAccessToken {
		return "", "", false
	}
	if mode != ModeLive && mode != ModeTest {
		return "", "", false
	}
	if len(body) != secretBodyLen || strings.Trim(body, secretAlphabet) != "" {
		return "", "", false
	}
	return kind, mode, true
}

// HashSecret returns the lowercase hex SHA-256 of secret, the only form ever
// stored. Secrets carry 256 random bits, so brute force is hopeless even
// against a fast hash; a slow password hash (bcrypt, argon2) would only add
// latency to every request, and its salt would rule out lookup by hash.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
