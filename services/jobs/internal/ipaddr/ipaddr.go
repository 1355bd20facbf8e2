// Package ipaddr holds the one rule for which addresses webhooks may reach,
// shared by the URL check at registration (package jobs) and the dial-time
// check of the sender (package webhook). Standard library only.
package ipaddr

import "net/netip"

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// IsPublic reports whether a is a routable unicast address outside the
// loopback, private, link-local and shared (CGNAT) ranges.
func IsPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	return !cgnat.Contains(a)
}
