// Package seal is an AES-256-GCM key ring: the first key seals, every key
// opens, so keys rotate without downtime. The jobs service seals batch items
// and webhook secrets with it, the gateway the answers it keeps for
// Idempotency-Key replays.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Keyring seals and opens blobs with AES-256-GCM. It is built from a
// setting (JOB_ENCRYPTION_KEY): comma-separated "<key id>:<base64 of 32
// bytes>" entries. The first key seals; every key opens, so a key can be
// rotated by putting the new one first and dropping the old one once the
// longest TTL of what it sealed (24 h) has passed.
//
// A sealed blob is: one byte key-id length, the key id, a 12-byte random
// nonce, then the GCM ciphertext with its tag. The additional data binds the
// blob to where it is stored (job id, item index, kind), so a blob copied onto
// another row does not open.
type Keyring struct {
	primary string
	aeads   map[string]cipher.AEAD
}

// ParseKeyring parses the value of the setting named name. An empty value
// is an error. Errors name the setting and never echo key material.
func ParseKeyring(name, spec string) (*Keyring, error) {
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for i, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		id, b64, ok := strings.Cut(entry, ":")
		if !ok || id == "" || len(id) > 255 {
			return nil, fmt.Errorf("%s entry %d: want <key id>:<base64 key>", name, i+1)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			raw, err = base64.RawURLEncoding.DecodeString(b64)
		}
		if err != nil || len(raw) != 32 {
			// Never echo the key material.
			return nil, fmt.Errorf("%s key %q: want 32 bytes in base64", name, id)
		}
		if _, dup := k.aeads[id]; dup {
			return nil, fmt.Errorf("%s: key id %q appears twice", name, id)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.aeads[id] = aead
		if i == 0 {
			k.primary = id
		}
	}
	return k, nil
}

// NewRandomKeyring returns a single fresh key with id "local": the local
// stack uses it so sealing works without configuration. What it sealed
// cannot outlive the process, which is fine for an in-memory stack.
func NewRandomKeyring() *Keyring {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	k, err := ParseKeyring("random key", "local:"+base64.StdEncoding.EncodeToString(raw[:]))
	if err != nil {
		panic(err)
	}
	return k
}

// Seal encrypts plaintext under the primary key, bound to aad.
func (k *Keyring) Seal(plaintext []byte, aad string) ([]byte, error) {
	aead := k.aeads[k.primary]
	out := make([]byte, 0, 1+len(k.primary)+aead.NonceSize()+len(plaintext)+aead.Overhead())
	out = append(out, byte(len(k.primary)))
	out = append(out, k.primary...)
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return aead.Seal(out, nonce, plaintext, []byte(aad)), nil
}

// ErrUnseal is returned for a blob that does not open: unknown key id,
// tampering, or the wrong additional data.
var ErrUnseal = errors.New("seal: sealed blob does not open")

// Open decrypts a blob sealed by Seal with the same aad.
func (k *Keyring) Open(blob []byte, aad string) ([]byte, error) {
	if len(blob) < 1 {
		return nil, ErrUnseal
	}
	n := int(blob[0])
	if len(blob) < 1+n {
		return nil, ErrUnseal
	}
	aead, ok := k.aeads[string(blob[1:1+n])]
	if !ok {
		return nil, ErrUnseal
	}
	rest := blob[1+n:]
	if len(rest) < aead.NonceSize()+aead.Overhead() {
		return nil, ErrUnseal
	}
	pt, err := aead.Open(nil, rest[:aead.NonceSize()], rest[aead.NonceSize():], []byte(aad))
	if err != nil {
		return nil, ErrUnseal
	}
	return pt, nil
}
