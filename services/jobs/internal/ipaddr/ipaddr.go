// Package ipaddr holds the one rule for which addresses webhooks may reach,
// shared by the URL check at registration (package jobs) and the dial-time
// check of the sender (package webhook). Standard library only.
package ipaddr

import "net/netip"

// notGlobal are the ranges of the IANA special-purpose address registries
// (IPv4 and IPv6) that are not globally reachable, or that embed an IPv4
// address a gateway would reach for us (NAT64, 6to4, Teredo, IPv4-
// compatible), beyond what the netip classifiers already name (loopback,
// private, link-local, multicast, unspecified).
var notGlobal = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // shared address space (CGNAT)
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation (TEST-NET-1)
		"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation (TEST-NET-2)
		"203.0.113.0/24",  // documentation (TEST-NET-3)
		"240.0.0.0/4",     // reserved, and the limited broadcast address
		"::/96",           // IPv4-compatible (deprecated): ::a.b.c.d
		"64:ff9b::/96",    // NAT64, well-known prefix
		"64:ff9b:1::/48",  // NAT64, local use
		"100::/64",        // discard-only
		"2001::/23",       // IETF protocol assignments (Teredo, benchmarking, ORCHID, ...)
		"2001:db8::/32",   // documentation
		"2002::/16",       // 6to4
		"3fff::/20",       // documentation
		"5f00::/16",       // segment routing (SRv6) SIDs
		"fec0::/10",       // site-local (deprecated)
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// IsPublic reports whether a is a globally reachable unicast address: not
// loopback, private, link-local, multicast or unspecified, and in none of
// the special-purpose ranges above (an IPv4-mapped address is judged as
// its IPv4 address).
func IsPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range notGlobal {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
