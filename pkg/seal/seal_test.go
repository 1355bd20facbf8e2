package seal

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func key(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

// TestRotation: the first key seals, every key opens; a blob opens only
// with its additional data and untouched; bad settings name the setting,
// never the key.
func TestRotation(t *testing.T) {
	old, err := ParseKeyring("K", "k1:"+key(1))
	if err != nil {
		t.Fatal(err)
	}
	blob, err := old.Seal([]byte("whsec_secret"), "idem/v1|a")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := ParseKeyring("K", "k2:"+key(2)+", k1:"+key(1))
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := rotated.Open(blob, "idem/v1|a"); err != nil || string(pt) != "whsec_secret" {
		t.Fatalf("the old key after rotation: %q %v", pt, err)
	}
	fresh, _ := rotated.Seal([]byte("x"), "aad")
	if _, err := old.Open(fresh, "aad"); !errors.Is(err, ErrUnseal) {
		t.Fatalf("a blob of the new key opened with the old ring only: %v", err)
	}
	if _, err := rotated.Open(blob, "idem/v1|b"); !errors.Is(err, ErrUnseal) {
		t.Fatal("opened with other additional data")
	}
	tampered := bytes.Clone(blob)
	tampered[len(tampered)-1] ^= 1
	if _, err := rotated.Open(tampered, "idem/v1|a"); !errors.Is(err, ErrUnseal) {
		t.Fatal("a tampered blob opened")
	}
	for _, bad := range []string{"", "k1", "k1:short", "k1:" + key(1) + ",k1:" + key(2)} {
		_, err := ParseKeyring("K", bad)
		if err == nil || !strings.HasPrefix(err.Error(), "K") || strings.Contains(err.Error(), key(1)) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
