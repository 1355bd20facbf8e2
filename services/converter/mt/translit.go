package mt

import (
	"strings"
	"unicode/utf8"
)

// xSet marks the bytes of the SWIFT X character set:
// a-z A-Z 0-9 / - ? : ( ) . , ' + space (CR and LF are line structure and
// never appear inside a value here).
var xSet = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "/-?:().,'+ " {
		t[c] = true
	}
	return t
}()

// baseMap strips diacritics from the Latin letters that occur in European
// account names and remittance texts; everything else outside X becomes '.'.
var baseMap = map[rune]string{
	'À': "A", 'Á': "A", 'Â': "A", 'Ã': "A", 'Ä': "A", 'Å': "A", 'Æ': "AE", 'Ç': "C",
	'È': "E", 'É': "E", 'Ê': "E", 'Ë': "E", 'Ì': "I", 'Í': "I", 'Î': "I", 'Ï': "I",
	'Ð': "D", 'Ñ': "N", 'Ò': "O", 'Ó': "O", 'Ô': "O", 'Õ': "O", 'Ö': "O", 'Ø': "O",
	'Ù': "U", 'Ú': "U", 'Û': "U", 'Ü': "U", 'Ý': "Y", 'Þ': "TH", 'ß': "ss",
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae", 'ç': "c",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i",
	'ð': "d", 'ñ': "n", 'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'þ': "th", 'ÿ': "y",
	'Ā': "A", 'ā': "a", 'Ă': "A", 'ă': "a", 'Ą': "A", 'ą': "a", 'Ć': "C", 'ć': "c",
	'Č': "C", 'č': "c", 'Ď': "D", 'ď': "d", 'Đ': "D", 'đ': "d", 'Ē': "E", 'ē': "e",
	'Ė': "E", 'ė': "e", 'Ę': "E", 'ę': "e", 'Ě': "E", 'ě': "e", 'Ğ': "G", 'ğ': "g",
	'Ī': "I", 'ī': "i", 'Į': "I", 'į': "i", 'İ': "I", 'ı': "i", 'Ķ': "K", 'ķ': "k",
	'Ĺ': "L", 'ĺ': "l", 'Ļ': "L", 'ļ': "l", 'Ľ': "L", 'ľ': "l", 'Ł': "L", 'ł': "l",
	'Ń': "N", 'ń': "n", 'Ņ': "N", 'ņ': "n", 'Ň': "N", 'ň': "n", 'Ō': "O", 'ō': "o",
	'Ő': "O", 'ő': "o", 'Œ': "OE", 'œ': "oe", 'Ŕ': "R", 'ŕ': "r", 'Ř': "R", 'ř': "r",
	'Ś': "S", 'ś': "s", 'Ş': "S", 'ş': "s", 'Š': "S", 'š': "s", 'Ţ': "T", 'ţ': "t",
	'Ť': "T", 'ť': "t", 'Ū': "U", 'ū': "u", 'Ů': "U", 'ů': "u", 'Ű': "U", 'ű': "u",
	'Ų': "U", 'ų': "u", 'Ÿ': "Y", 'Ź': "Z", 'ź': "z", 'Ż': "Z", 'ż': "z", 'Ž': "Z",
	'ž': "z", 'Ș': "S", 'ș': "s", 'Ț': "T", 'ț': "t",
	'‘': "'", '’': "'", '‚': ",", '–': "-", '—': "-", '\t': " ",
}

// germanMap is applied before baseMap with translitProfile german: the
// German convention writes umlauts as two letters rather than dropping the
// dots.
var germanMap = map[rune]string{
	'ä': "ae", 'ö': "oe", 'ü': "ue", 'ß': "ss", 'Ä': "Ae", 'Ö': "Oe", 'Ü': "Ue",
}

// translit maps s into the X character set. n counts replaced characters
// (each character outside X counts once, whatever it became).
type translit struct {
	german bool
	n      int
}

// xBit is xSet as 0/1, so eight bytes can be tested with one branch.
var xBit = func() (t [256]uint8) {
	for c, ok := range xSet {
		if ok {
			t[c] = 1
		}
	}
	return t
}()

func (t *translit) apply(s string) string {
	// Nearly every text is all X already: find the first byte that is not,
	// eight at a time, then exactly.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		if xBit[w[0]]&xBit[w[1]]&xBit[w[2]]&xBit[w[3]]&xBit[w[4]]&xBit[w[5]]&xBit[w[6]]&xBit[w[7]] == 0 {
			break
		}
	}
	for i < len(s) && xSet[s[i]] {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if xSet[c] {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		t.n++
		if t.german {
			if v, ok := germanMap[r]; ok {
				b.WriteString(v)
				continue
			}
		}
		if v, ok := baseMap[r]; ok {
			b.WriteString(v)
			continue
		}
		b.WriteByte('.')
	}
	return b.String()
}
