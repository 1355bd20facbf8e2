package jobs

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func key(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

func TestParseKeyring(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		ok         bool
	}{
		{"one key", "k1:" + key(1), true},
		{"rotation", "k2:" + key(2) + ", k1:" + key(1), true},
		{"url-safe base64", "k1:" + base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)), true},
		{"empty", "", false},
		{"no id", ":" + key(1), false},
		{"no colon", key(1), false},
		{"short key", "k1:" + base64.StdEncoding.EncodeToString([]byte("short")), false},
		{"duplicate id", "k1:" + key(1) + ",k1:" + key(2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseKeyring(tc.spec)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v", err)
			}
			if err != nil && strings.Contains(err.Error(), key(1)) {
				t.Fatal("error echoes key material")
			}
		})
	}
}

func TestSealOpen(t *testing.T) {
	old, _ := ParseKeyring("k1:" + key(1))
	rotated, _ := ParseKeyring("k2:" + key(2) + ",k1:" + key(1))
	other, _ := ParseKeyring("k1:" + key(9))
	msg := []byte(":20:STATEMENT-REF\n:25:DE89370400440532013000")
	sealed, err := old.Seal(msg, inputAAD("job", 3))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("STATEMENT")) {
		t.Fatal("plaintext in sealed blob")
	}
	again, _ := old.Seal(msg, inputAAD("job", 3))
	if bytes.Equal(sealed, again) {
		t.Fatal("nonce reused")
	}
	// The rotated ring opens the old key's blobs and seals with the new one.
	if pt, err := rotated.Open(sealed, inputAAD("job", 3)); err != nil || !bytes.Equal(pt, msg) {
		t.Fatalf("rotated open: %v", err)
	}
	if fresh, _ := rotated.Seal(msg, "x"); !bytes.HasPrefix(fresh, []byte("\x02k2")) {
		t.Fatalf("rotated ring did not seal with its first key")
	}
	for name, tc := range map[string]struct {
		k    *Keyring
		blob []byte
		aad  string
	}{
		"other item":     {old, sealed, inputAAD("job", 4)},
		"other kind":     {old, sealed, resultAAD("job", 3)},
		"other job":      {old, sealed, inputAAD("job2", 3)},
		"wrong key":      {other, sealed, inputAAD("job", 3)},
		"truncated":      {old, sealed[:10], inputAAD("job", 3)},
		"empty":          {old, nil, inputAAD("job", 3)},
		"tampered":       {old, append(append([]byte{}, sealed[:len(sealed)-1]...), sealed[len(sealed)-1]^1), inputAAD("job", 3)},
		"unknown key id": {rotated, append([]byte("\x02k9"), sealed[3:]...), inputAAD("job", 3)},
	} {
		if _, err := tc.k.Open(tc.blob, tc.aad); !errors.Is(err, ErrUnseal) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}
