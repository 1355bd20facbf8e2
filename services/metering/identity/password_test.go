package identity_test

import (
	"strings"
	"testing"

	"github.com/ledgerlane/platform/services/metering/identity"
)

func TestCheckNewPassword(t *testing.T) {
	for pw, ok := range map[string]bool{
		"correct horse battery": true, "a brand new passphrase": true, "Tr0ub4dor&3xyz": true, "987654321098": true,
		"short": false, strings.Repeat("x", 257): false, "ann@example.com": false,
		"aaaaaaaaaaaa": false, "abababababab": false, "123412341234": false, "abcdefghijklm": false,
		"ZYXWVUTSRQPO": false, "Password1234": false, "QWERTYQWERTY": false, "123456789012": false,
	} {
		if err := identity.CheckNewPassword(pw, "ann@example.com"); (err == nil) != ok {
			t.Errorf("%q: %v", pw, err)
		}
	}
}
