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
		// The IANA special-purpose ranges (issue 27): each could reach an
		// internal address through a translator, or is never global.
		"64:ff9b::7f00:1": false, "64:ff9b::a00:7": false, "64:ff9b:1::1": false, "2002:7f00:1::1": false,
		"::127.0.0.1": false, "::10.0.0.7": false, "fec0::1": false, "192.0.0.8": false, "198.18.0.1": false,
		"198.19.255.254": false, "240.0.0.1": false, "255.255.255.255": false, "0.1.2.3": false,
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": false, "2001:db8::1": false, "192.0.2.1": false,
		"203.0.113.9": false, "198.51.100.1": false, "100::1": false, "3fff::1": false,
		"::ffff:198.18.0.1": false,
		// Just outside them: public.
		"198.20.0.1": true, "239.255.255.255": false, "223.255.255.254": true, "2003::1": true,
		"2001:4860:4860::8888": true, "64:ff9c::1": true,
	} {
		if got := IsPublic(netip.MustParseAddr(a)); got != want {
			t.Errorf("IsPublic(%s) = %v, want %v", a, got, want)
		}
	}
	if IsPublic(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}
