package traces

import (
	"strings"
	"testing"
)

// TestRedactedExactly: a value is taken for redacted only when RedactedPrefix is followed
// by exactly 16 lower-case hex digits; every other byte in any of the 16 places, and a
// length one off, makes it a value like any other (which Hash then hashes).
func TestRedactedExactly(t *testing.T) {
	const digits = "0123456789abcdef"
	for _, pos := range []int{0, 9, 15} {
		for c := 0; c < 256; c++ {
			b := []byte(digits)
			b[pos] = byte(c)
			v := RedactedPrefix + string(b)
			if want := strings.IndexByte(digits, byte(c)) >= 0; Redacted(v) != want {
				t.Errorf("Redacted(%q) = %t, want %t", v, !want, want)
			}
		}
	}
	for _, v := range []string{RedactedPrefix + digits[:15], RedactedPrefix + digits + "0", "x" + RedactedPrefix[1:] + digits} {
		if Redacted(v) {
			t.Errorf("Redacted(%q)", v)
		}
	}
}
