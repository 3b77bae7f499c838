package traces

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces/tracetest"
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

// shapeCanaries holds one value of every credential shape secret.Find knows; each must be
// redacted by value, under keys and in places that look innocent.
var shapeCanaries = []string{
	"AKIAIOSFODNN7CANARY1",
	"ASIAY34FZKBOKCANARY2",
	"sk-proj-Canary3abcdef0123456789",
	"sk_live_Canary4abcdef0123456789",
	"eyJhbGciOiJIUzI1NiJ9.eyJjYW5hcnkiOjV9.Canary5sig",
	"ghp_Canary6abcdefghijklmnopqrstuvwxyz0123",
	"github_pat_Canary7abcdefghijklmnopqrstuvwxyz",
	"xoxb-Canary8-0123456789",
	"AIzaCanary9abcdefghijklmnopqrstuvwxyz01234",
	"-----BEGIN PRIVATE KEY-----\nCanary10MIIEvQIBADANBg\n-----END PRIVATE KEY-----",
	"postgres://admin:Canary11pw@db:5432/prod",
}

// canaryWord is the part of each canary that must never be readable.
func canaryWord(c string) string {
	if i := strings.Index(c, "Canary"); i >= 0 {
		j := i + len("Canary")
		for j < len(c) && c[j] >= '0' && c[j] <= '9' {
			j++
		}
		return c[i:j]
	}
	return c
}

// Every credential shape, in a span attribute and a tool argument under innocent keys, in a
// transition's reason, an investigation's termination reason, a fault's parameters and the
// run's config (its description, a tool version, a free-text argument and a sweep axis over
// a secret argument), reaches no batch: not span_attrs, tool_args, runs.config nor any other.
func TestShapesNeverEmitted(t *testing.T) {
	for _, canary := range shapeCanaries {
		c := tracetest.Synthetic(200, 2)
		c.Transitions[0].Reason = "retrying with " + canary
		c.Investigations[0].TerminationReason = "aborted after " + canary
		sp := c.Spans[0]
		sp.SpanID = 1 << 50
		sp.Attrs = []record.Attr{{Key: "arg.strategy", Value: "momentum"}, {Key: "arg.note", Value: "use " + canary}, {Key: "endpoint", Value: canary}}
		c.Span(&sp)
		c.Faults[0].Parameters = `{"for":"30m","target":` + strconv.Quote(canary) + `}`
		cfg := map[string]any{
			"name": "x", "description": "connects with " + canary,
			"tools": []any{map[string]any{"name": "b", "version": canary,
				"arguments": []any{map[string]any{"key": "dsn", "value": canary}}}},
			"sweep": []any{map[string]any{"path": "tools.b.arguments.api_key", "values": []any{"plain-but-secret-1", "plain-but-secret-2"}},
				map[string]any{"path": "tools.b.arguments.note", "values": []any{canary}}},
		}
		js, _ := json.Marshal(cfg)
		s := newKeepingSink(t)
		w, _ := NewWriter("r", Options{BatchRows: 100}, s.emit)
		c.Replay(w)
		if err := w.WriteRun(Run{Config: string(js)}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		word := canaryWord(canary)
		for _, v := range s.strs {
			if strings.Contains(v, word) || strings.Contains(v, "plain-but-secret") {
				t.Errorf("%s reached a batch: %q", canary, v)
				break
			}
		}
	}
}

// A redaction exemption cannot swallow a secret: a numeric value is kept only after a key
// that is secret-looking because it says "token" (a count); a value that merely starts
// with the redacted prefix is still a secret.
func TestExemptionsCannotSwallowSecrets(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	for _, c := range []struct{ in, secret string }{
		{"password=12345678", "12345678"},
		{"pin_secret: 987654", "987654"},
		{"api_key=" + RedactedPrefix + "sk-real-secret", "sk-real-secret"},
	} {
		if got := r.Text(c.in); strings.Contains(got, c.secret) {
			t.Errorf("Text(%q) = %q; the secret is readable", c.in, got)
		}
	}
	if got := r.Attr("gen_ai.api_key_tokens", "sk-exempt-canary"); got == "sk-exempt-canary" {
		t.Error("gen_ai.api_key_tokens kept in clear")
	}
	if got := r.Hash(RedactedPrefix + "notahash"); !Redacted(got) || got == RedactedPrefix+"notahash" {
		t.Errorf("Hash(prefix+secret) = %q; want a real hash", got)
	}
	for _, keep := range []string{"tokens: 4000", "max_tokens=512"} {
		if got := r.Text(keep); got != keep {
			t.Errorf("Text(%q) = %q; a count must stay", keep, got)
		}
	}
}
