package traces

import (
	"strings"
	"testing"
)

// The credential shapes the built-in patterns must cover (before: none of these was
// redacted): passwd and pwd keys, an Authorization header, a bare Bearer/Basic credential.
func TestCredentialShapes(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	for _, c := range []struct{ in, secret string }{
		{"passwd=hunter22x", "hunter22x"},
		{"db_pwd: hunter33y", "hunter33y"},
		{"authorization: Bearer abc.def.ghi123", "abc.def.ghi123"},
		{`{"Authorization": "Bearer abc.def.ghi456"}`, "abc.def.ghi456"},
		{"curl -H 'Authorization: Basic dXNlcjpwYXNz' https://x", "dXNlcjpwYXNz"},
		{"sent with bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "eyJhbGciOiJIUzI1NiJ9.e30.sig"},
		{"Cookie: session=abcdef123456", "abcdef123456"},
	} {
		got := r.Text(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, RedactedPrefix) {
			t.Errorf("Text(%q) = %q; the credential is readable", c.in, got)
		}
	}
	for _, k := range []string{"passwd", "PWD", "authorization", "cookie"} {
		if !r.SecretKey(k) {
			t.Errorf("SecretKey(%q) = false", k)
		}
	}
	// Words that merely contain a scheme are not credentials.
	for _, keep := range []string{"the bearerless path", "basically fine", "tokens: 4000"} {
		if got := r.Text(keep); got != keep {
			t.Errorf("Text(%q) = %q; want it unchanged", keep, got)
		}
	}
}
