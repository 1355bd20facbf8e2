package ipaddr

import (
	"net/netip"
	"testing"
)

func TestIsPublic(t *testing.T) {
	for a, want := range map[string]bool{
		"93.184.215.14": true, "2606:2800:220:1::1": true,
		"127.0.0.1": false, "::1": false, "10.0.0.7": false, "192.168.1.1": false, "172.16.0.1": false,
		"169.254.169.254": false, "fe80::1": false, "100.64.0.1": false, "100.127.255.254": false,
		"224.0.0.1": false, "0.0.0.0": false, "::": false, "::ffff:127.0.0.1": false, "fc00::1": false,
	} {
		if got := IsPublic(netip.MustParseAddr(a)); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", a, got, want)
		}
	}
	if IsPublic(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}
