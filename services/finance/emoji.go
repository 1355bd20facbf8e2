package finance

// singleEmoji reports whether s is exactly one emoji as people type them:
// a pictograph with an optional skin-tone modifier and variation selector,
// several joined by zero-width joiners (a family, a profession), a flag of
// two regional indicators, a subdivision flag with its tag characters, or a
// keycap. It is a structural check on code point ranges, not a lookup in
// the Unicode emoji list, so an unassigned code point inside an emoji block
// passes; what it refuses is text, two emoji, or stray joiners.
func singleEmoji(s string) bool {
	rs := []rune(s)
	if len(rs) == 0 || len(rs) > 16 {
		return false
	}
	switch {
	case len(rs) == 2 && isRegional(rs[0]) && isRegional(rs[1]):
		return true
	case isKeycapBase(rs[0]):
		// 1️⃣: digit, optional VS16, combining keycap.
		rest := rs[1:]
		if len(rest) > 0 && rest[0] == 0xFE0F {
			rest = rest[1:]
		}
		return len(rest) == 1 && rest[0] == 0x20E3
	case rs[0] == 0x1F3F4 && len(rs) > 2:
		// 🏴 followed by tag letters and a cancel tag: a subdivision flag.
		for i, r := range rs[1:] {
			last := i == len(rs)-2
			if last && r != 0xE007F || !last && (r < 0xE0020 || r > 0xE007E) {
				return false
			}
		}
		return true
	}
	// element (ZWJ element)*
	i := 0
	for {
		if i >= len(rs) || !isPictograph(rs[i]) {
			return false
		}
		i++
		if i < len(rs) && isSkinTone(rs[i]) {
			i++
		}
		if i < len(rs) && rs[i] == 0xFE0F {
			i++
		}
		if i == len(rs) {
			return true
		}
		if rs[i] != 0x200D {
			return false
		}
		i++
	}
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

func isSkinTone(r rune) bool { return r >= 0x1F3FB && r <= 0x1F3FF }

func isKeycapBase(r rune) bool { return r == '#' || r == '*' || (r >= '0' && r <= '9') }

// isPictograph covers the blocks emoji are drawn from.
func isPictograph(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF && !isRegional(r) && !isSkinTone(r):
		return true
	case r >= 0x2600 && r <= 0x27BF, // misc symbols, dingbats
		r >= 0x2300 && r <= 0x23FF, // misc technical (⌚, ⏰)
		r >= 0x2B00 && r <= 0x2BFF, // arrows, ⭐, ⬛
		r >= 0x2190 && r <= 0x21FF, // arrows
		r >= 0x25A0 && r <= 0x25FF, // geometric shapes
		r >= 0x2900 && r <= 0x297F:
		return true
	}
	switch r {
	case 0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x24C2, 0x3030, 0x303D, 0x3297, 0x3299:
		return true
	}
	return false
}
