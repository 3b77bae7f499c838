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

// TestLearnedSecretsBounds: a value Hash redacts is learned, and scrubbed from free text
// later, from minLearnedSize bytes on (a shorter one would match by chance), and at most
// maxLearned of them: the one after is hashed but not learned.
func TestLearnedSecretsBounds(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	short, exact := "qwertyu", "asdfghjk" // 7 and 8 bytes, no shape of a known secret
	if len(short) != minLearnedSize-1 || len(exact) != minLearnedSize {
		t.Fatal("test values no longer straddle minLearnedSize")
	}
	r.Hash(short)
	r.Hash(exact)
	if got := r.Text("a " + short + " b"); !strings.Contains(got, short) {
		t.Errorf("a %d-byte value was learned: %q", len(short), got)
	}
	if got := r.Text("a " + exact + " b"); strings.Contains(got, exact) {
		t.Errorf("a %d-byte value was not learned: %q", len(exact), got)
	}
	r = NewRedactor(nil, nil, nil)
	var vals []string
	for i := range maxLearned + 1 {
		v := "learned-" + string(rune('a'+i)) + "-value"
		vals = append(vals, v)
		r.Hash(v)
	}
	for i, v := range vals {
		scrubbed := !strings.Contains(r.Text("x "+v+" y"), v)
		if want := i < maxLearned; scrubbed != want {
			t.Errorf("value %d of %d hashed: scrubbed from text %t, want %t", i+1, len(vals), scrubbed, want)
		}
	}
}

// TestRedactFreeTextEdges: the credential after "Bearer " or "Basic " (any case, a whole
// word) goes wherever it is in free text; a key=value pair goes even when the text starts
// with '='.
func TestRedactFreeTextEdges(t *testing.T) {
	for _, s := range []string{
		"retry with bearer swordfish and go",
		"BASIC swordfish",
		"=1 api_key=swordfish",
		`log "password": "swordfish" end`,
		"password \t: swordfish",
	} {
		// A fresh redactor each time: a value once redacted is learned, and goes anywhere.
		if got := NewRedactor(nil, nil, nil).Text(s); strings.Contains(got, "swordfish") {
			t.Errorf("Text(%q) = %q", s, got)
		}
	}
	if got := NewRedactor(nil, nil, nil).Text("unbearer swordfish"); got != "unbearer swordfish" {
		t.Errorf("bearer inside a word: %q", got)
	}
}

// TestRedactJSONPairs: an object that pairs a key (key, name or path) with a value (value
// or values) redacts the value when the key is secret-looking; for a path, a sweep axis, only
// its last key counts. An object with a key and no value is no pair.
func TestRedactJSONPairs(t *testing.T) {
	for _, c := range []struct {
		in     string
		hidden bool
	}{
		{`{"name":"api_key","value":"swordfish"}`, true},
		{`{"name":"api_key.note","value":"swordfish"}`, true},
		{`{"path":"tools.x.arguments.api_key","values":["swordfish"]}`, true},
		{`{"path":"api_key.note","values":["swordfish"]}`, false},
		{`{"key":"api_key","note":"swordfish"}`, false},
		{`{"value":"swordfish","note":"api_key"}`, false},
		{`{"name":"query","value":"swordfish"}`, false},
	} {
		got := NewRedactor(nil, nil, nil).JSON(c.in)
		if hidden := !strings.Contains(got, "swordfish"); hidden != c.hidden {
			t.Errorf("JSON(%s) = %s: value hidden %t, want %t", c.in, got, hidden, c.hidden)
		}
	}
}

// TestIsIdent: the bytes of a key name are ASCII letters and digits, '_', '-' and '.',
// each range to its last byte.
func TestIsIdent(t *testing.T) {
	const ident = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
	for c := 0; c < 256; c++ {
		if want := strings.IndexByte(ident, byte(c)) >= 0; isIdent(byte(c)) != want {
			t.Errorf("isIdent(%q) = %t", rune(c), !want)
		}
	}
	if got := NewRedactor(nil, nil, nil).Text("token9=swordfish"); strings.Contains(got, "swordfish") {
		t.Errorf("a key ending in a digit: %q", got)
	}
}

// TestNumeric: a value made of digits, '.', '-', '+', 'e' and 'E' (or true, false, null) is
// a number or a constant, never a secret.
func TestNumeric(t *testing.T) {
	const num = "0123456789.-+eE"
	for c := 0; c < 256; c++ {
		if want := strings.IndexByte(num, byte(c)) >= 0; numeric(string(rune(c))) != want && c < 128 {
			t.Errorf("numeric(%q) = %t", rune(c), !want)
		}
	}
	for _, v := range []string{"true", "false", "null", "-1.5e+09", "9"} {
		if !numeric(v) {
			t.Errorf("numeric(%q) = false", v)
		}
	}
	if numeric("True") || numeric("1.0x") {
		t.Error("a word taken for a number")
	}
}
