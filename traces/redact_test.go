package traces

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/mayday-sim/mayday/sim/record"
	"github.com/mayday-sim/mayday/traces/tracetest"
)

func TestSecretKey(t *testing.T) {
	r := NewRedactor(nil, []string{"Session"}, nil)
	for k, want := range map[string]bool{
		"api_key": true, "API_KEY": true, "Authorization-Token": true, "db_password": true,
		"client_secret": true, "aws_credentials": true, "x-session-id": true,
		"strategy": false, "gen_ai.tool.name": false, "gen_ai.usage.input_tokens": false,
		"gen_ai.request.max_tokens": false, "": false,
	} {
		if got := r.SecretKey(k); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// The exemption of OpenTelemetry token counts covers only the gen_ai. prefix and the _tokens
// suffix: a secret-looking name between them, a near miss of either, or a pattern of the
// user's is still secret.
func TestSecretKeyExemptionSwallowsNoSecret(t *testing.T) {
	r := NewRedactor(nil, []string{"usage"}, nil)
	plain := NewRedactor(nil, nil, nil)
	for _, p := range DefaultSecretPatterns {
		for _, k := range []string{"gen_ai." + p + "_tokens", "gen_ai.usage." + p + ".input_tokens", "gen_ai.x_" + strings.ToUpper(p) + "_tokens"} {
			if !plain.SecretKey(k) {
				t.Errorf("SecretKey(%q) = false: the exemption swallowed %q", k, p)
			}
		}
	}
	for k, want := range map[string]bool{
		"gen_ai.usage.input_tokens":  false,
		"gen_ai.usage.output_tokens": false,
		"gen_ai.request.max_tokens":  false,
		"gen_ai._tokens":             false,
		"gen_ai.usage.input_token":   true, // not the suffix: "token" matches
		"GEN_AI.usage.input_tokens":  true, // not the prefix
		"xgen_ai.usage.input_tokens": true,
		"gen_ai.usage.input_tokensx": true,
		"gen_ai.tokens":              true, // no name between prefix and suffix
	} {
		if got := plain.SecretKey(k); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", k, got, want)
		}
	}
	if !r.SecretKey("gen_ai.usage.input_tokens") {
		t.Error("a user's pattern (usage) in the name of a gen_ai token count is not secret")
	}
}

func TestHash(t *testing.T) {
	a := NewRedactor([]byte("k1"), nil, nil)
	b := NewRedactor([]byte("k2"), nil, nil)
	h := a.Hash("sk-live-1")
	if !strings.HasPrefix(h, RedactedPrefix) || len(h) != len(RedactedPrefix)+16 {
		t.Fatalf("Hash = %q, want %s and 16 hex digits", h, RedactedPrefix)
	}
	if h != NewRedactor([]byte("k1"), nil, nil).Hash("sk-live-1") {
		t.Error("equal secrets under one key hash differently: not joinable")
	}
	if h == b.Hash("sk-live-1") {
		t.Error("the hash does not depend on the key")
	}
	if h == a.Hash("sk-live-2") {
		t.Error("different secrets hash alike")
	}
	if a.Hash(h) != h {
		t.Error("redacting a redacted value changed it")
	}
}

func TestText(t *testing.T) {
	r := NewRedactor(nil, nil, []string{"hunter2-long-secret"})
	h := r.Hash
	for in, want := range map[string]string{
		"":                                           "",
		"attempt 3 of 5":                             "attempt 3 of 5",
		"timeout: retry":                             "timeout: retry",
		"call with api_key=sk-1 failed":              "call with api_key=" + h("sk-1") + " failed",
		`{"strategy":"m","API_KEY": "sk-2"}`:         `{"strategy":"m","API_KEY": "` + h("sk-2") + `"}`,
		"token: 'a b', next":                         "token: '" + h("a b") + "', next",
		"budget tokens: 4000 > 2000":                 "budget tokens: 4000 > 2000",
		"password=":                                  "password=",
		"echo hunter2-long-secret twice":             "echo " + h("hunter2-long-secret") + " twice",
		"secret={nested}":                            "secret={nested}",
		`x="a\"b" key="v\"w"`:                        `x="a\"b" key="` + h(`v\"w`) + `"`,
		"user_token=abc;password=pw&ok=1":            "user_token=" + h("abc") + ";password=" + h("pw") + "&ok=1",
		"key=" + RedactedPrefix + "0123456789abcdef": "key=" + RedactedPrefix + "0123456789abcdef",
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	// A value once redacted under a secret key is scrubbed from free text afterwards.
	r.Attr("credential", "learned-secret-value")
	if got := r.Text("saw learned-secret-value here"); strings.Contains(got, "learned-secret-value") {
		t.Errorf("learned secret kept: %q", got)
	}
	// Text skips values shorter than every learned secret: a text exactly as long as the
	// shortest is still searched, and a longer secret learned later leaves the shortest be.
	r.Attr("credential", "sec-8ch!")
	r.Attr("credential", strings.Repeat("long-secret-", 4))
	for _, in := range []string{"sec-8ch!", "(sec-8ch!)"} {
		if got := r.Text(in); strings.Contains(got, "sec-8ch!") {
			t.Errorf("Text(%q) = %q: the shortest learned secret kept", in, got)
		}
	}
	if got := r.Text("sec-8ch"); got != "sec-8ch" {
		t.Errorf("Text(%q) = %q: a text shorter than every secret changed", "sec-8ch", got)
	}
}

func TestJSON(t *testing.T) {
	r := NewRedactor(nil, nil, nil)
	h := r.Hash
	cfg := `{"name":"x","tools":[{"name":"backtest","arguments":[{"key":"strategy","value":"momentum"},{"key":"api_key","value":"sk-live-example"}]}],` +
		`"workload":{"tokens":{"dist":"lognormal","median":3000}},"recovery":{"budgets":{"tokens":2000000}},"note":"a<b"}`
	want := `{"name":"x","tools":[{"name":"backtest","arguments":[{"key":"strategy","value":"momentum"},{"key":"api_key","value":"` + h("sk-live-example") + `"}]}],` +
		`"workload":{"tokens":{"dist":"lognormal","median":3000}},"recovery":{"budgets":{"tokens":2000000}},"note":"a<b"}`
	if got := r.JSON(cfg); got != want {
		t.Errorf("JSON(config)\n = %s\nwant %s", got, want)
	}
	for in, want := range map[string]string{
		`{"probability":0.02}`:                           `{"probability":0.02}`,
		`{ "probability" : 0.02 }`:                       `{ "probability" : 0.02 }`, // unchanged text is kept as is
		`{"auth_token":"t1","n":1}`:                      `{"auth_token":"` + h("t1") + `","n":1}`,
		`{"key":"password","value":{"stringValue":"p"}}`: `{"key":"password","value":{"stringValue":"` + h("p") + `"}}`,
		`{"key":"pin","value":1234}`:                     `{"key":"pin","value":1234}`,
		`{"key":"secret_pin","value":1234}`:              `{"key":"secret_pin","value":"` + h("1234") + `"}`,
		`not json, token=abc`:                            `not json, token=` + h("abc"),
		`{"a":1} trailing token=abc`:                     `{"a":1} trailing token=` + h("abc"),
	} {
		if got := r.JSON(in); got != want {
			t.Errorf("JSON(%s)\n = %s\nwant %s", in, got, want)
		}
	}
}

// The canary planted by tracetest (a tool argument, recorded once per tool in tool_args, and
// a fault parameter) reaches no batch, in no column; nor does a secret in an argument that
// differs from its tool's recorded set (kept in span_attrs) or in a plain attribute.
func TestCanaryNeverEmitted(t *testing.T) {
	c := tracetest.Synthetic(3000, 4)
	c.Transitions[0].Reason = "retrying with api_key=" + tracetest.Canary
	c.Investigations[0].TerminationReason = "aborted: " + tracetest.Canary // learned from the attrs
	other := c.Spans[0]                                                    // a tool attempt: Synthetic's spans start with one
	if other.Operation != record.OpExecuteTool {
		t.Fatalf("Synthetic starts with a %s span", other.Operation)
	}
	other.SpanID = 1 << 50
	other.Attrs = []record.Attr{{Key: "arg.strategy", Value: "momentum"}, {Key: "arg.api_key", Value: "sk-canary-rotated-9e1f"}}
	c.Span(&other)
	c.Span(&record.Span{SpanID: 1<<50 + 1, Operation: record.OpPlan, Status: record.StatusOK,
		Attrs: []record.Attr{{Key: "kind", Value: "model_turn"}, {Key: "session_token", Value: "canary-session-77"}}})
	s := newKeepingSink(t)
	w, _ := NewWriter("r", Options{BatchRows: 500}, s.emit)
	c.Replay(w)
	if err := w.WriteRun(Run{Config: `{"tools":[{"name":"b","arguments":[{"key":"api_key","value":"` + tracetest.Canary + `"}]}]}`}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(s.strs) < len(c.Spans) {
		t.Fatalf("only %d strings seen", len(s.strs))
	}
	for _, v := range s.strs {
		if strings.Contains(v, "canary") {
			t.Fatalf("the canary reached a batch: %q", v)
		}
	}
	// Where the secrets went, redacted: each tool's api_key in tool_args, the rotated key and
	// the session token in span_attrs.
	redacted := map[string]int{}
	for tb, key := range map[Table]string{ToolArgs: "api_key", SpanAttrs: ""} {
		for _, rec := range s.keep[tb] {
			for i := range int(rec.NumRows()) {
				r := rowOf(t, rec, i)
				if k := r["key"].(string); strings.HasPrefix(r["value"].(string), RedactedPrefix) && (key == "" || k == key) {
					redacted[tb.String()+" "+k]++
				}
			}
		}
	}
	want := map[string]int{"tool_args api_key": 3, "span_attrs arg.api_key": 1, "span_attrs session_token": 1}
	for k, n := range want {
		if redacted[k] != n {
			t.Errorf("%d redacted %s values, want %d (all: %v)", redacted[k], k, n, redacted)
		}
	}
}

// indexFold finds the first place the pattern is, in any case, as a search of the
// lower-cased text does (ASCII text: strings.ToLower keeps every index).
func TestIndexFold(t *testing.T) {
	for _, p := range authSchemes {
		for _, s := range []string{"", "b", "bearer", "Bearer x", "xBEARER y", "abasic basic z", "BaSiC q", "bearbearer t", "no scheme here", "BBearer x", "bbearer x", "BbEARER x", "bBearer x", "BBasic y"} {
			if got, want := indexFold(s, p), strings.Index(strings.ToLower(s), p); got != want {
				t.Errorf("indexFold(%q, %q) = %d, want %d", s, p, got, want)
			}
		}
	}
	// On text made of the schemes, parts of them and single letters, each letter in either
	// case: the first match, wherever the two cases of the first letter fall.
	pieces := []string{"bearer", "basic", "bear", "bas", "b", "e", "a", "r", "s", "i", "c", " ", "x"}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for range rapid.IntRange(0, 12).Draw(t, "pieces") {
			for _, c := range []byte(rapid.SampledFrom(pieces).Draw(t, "piece")) {
				if rapid.Bool().Draw(t, "upper") && c >= 'a' && c <= 'z' {
					c -= 'a' - 'A'
				}
				b.WriteByte(c)
			}
		}
		s := b.String()
		for _, p := range authSchemes {
			if got, want := indexFold(s, p), strings.Index(strings.ToLower(s), p); got != want {
				t.Fatalf("indexFold(%q, %q) = %d, want %d", s, p, got, want)
			}
		}
	})
}

// SecretKey remembers its answers: the same key gives the same answer each time, before
// and after the memory of keys is full, and a key longer than what is remembered is still
// checked.
func TestSecretKeyRemembered(t *testing.T) {
	r := NewRedactor(nil, []string{"customer"}, nil)
	long := "x." + strings.Repeat("y", maxSecretKeyLen) + ".api_key"
	check := func(when string) {
		t.Helper()
		for key, want := range map[string]bool{"api_key": true, "gen_ai.usage.input_tokens": false,
			"tool.name": false, "x.customer_id": true, long: true, "x." + strings.Repeat("y", maxSecretKeyLen): false} {
			if got := r.SecretKey(key); got != want {
				t.Errorf("%s: SecretKey(%.40q) = %v, want %v", when, key, got, want)
			}
		}
	}
	check("first")
	check("remembered")
	for i := range maxSecretKeys + 10 {
		r.SecretKey(fmt.Sprintf("attr.%d", i))
	}
	if len(r.secretKeys) != maxSecretKeys {
		t.Errorf("%d keys remembered, want the bound %d", len(r.secretKeys), maxSecretKeys)
	}
	check("memory full")
	if got := r.SecretKey("attr.password"); !got {
		t.Error("a secret key first seen once the memory is full reads as not secret")
	}
}

// mayHold is false only where no learned secret occurs: on text made of the secrets, parts
// of them and other bytes, it agrees with testing each secret by strings.Contains whenever
// that finds one, and with a secret of one or two bytes among them.
func TestMayHoldFindsEveryLearnedSecret(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		secrets := rapid.SliceOfN(rapid.StringMatching(`[abk-]{1,12}`), 1, maxLearned).Draw(t, "secrets")
		r := NewRedactor(nil, nil, secrets)
		pieces := append([]string{"a", "b", "k", "-", "x", " "}, secrets...)
		for _, sec := range secrets {
			pieces = append(pieces, sec[:len(sec)/2], sec[len(sec)/2:])
		}
		var b strings.Builder
		for range rapid.IntRange(0, 10).Draw(t, "pieces") {
			b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
		}
		s := b.String()
		want := false
		for _, sec := range r.secrets {
			want = want || strings.Contains(s, sec)
		}
		if want && !r.mayHold(s) {
			t.Fatalf("mayHold(%q) is false, but it holds one of %q", s, r.secrets)
		}
		if !want && r.shortest >= 2 && r.mayHold(s) {
			t.Fatalf("mayHold(%q) is true, but it holds none of %q", s, r.secrets)
		}
	})
}

// keyValuesForward is keyValues as it was written before it looked for ':' and '=' first:
// every identifier read forwards, byte by byte, each that a ':' or '=' follows (after quotes
// and blanks) a key. keyValues is held to it; both redact what they find with redactPairs.
func (r *Redactor) keyValuesForward(s string) string {
	return r.redactPairs(s, func(i int) (st, e, k int) {
		for i < len(s) {
			if !isIdent(s[i]) {
				i++
				continue
			}
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			k := j
			for k < len(s) && (s[k] == '"' || s[k] == '\'') {
				k++
			}
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k < len(s) && (s[k] == ':' || s[k] == '=') {
				return i, j, k
			}
			i = j
		}
		return len(s), len(s), len(s)
	})
}

// keyValues finds what reading every identifier forwards finds, on text made of keys
// secret-looking or not, quotes, blanks, ':' and '=', values quoted and not, nested
// objects, schemes and words, with the state that redaction learns (secrets, hashes)
// carried from one text to the next alike.
func TestKeyValuesAsReadForwards(t *testing.T) {
	pieces := []string{"password", "api_key", "token", "user", "a", "x.y", "-", "_", ":", "=", ": ", " = ", "\"", "'",
		" ", "\t", "{", "[", "}", ",", ";", "\\", "Bearer ", "basic ", "abc123", "42", "true", "s3cr3t-v4lu3", "\n",
		"redacted:hmac-sha256:0123456789abcdef", "é"}
	rapid.Check(t, func(t *rapid.T) {
		a, b := NewRedactor(nil, []string{"user"}, nil), NewRedactor(nil, []string{"user"}, nil)
		for range rapid.IntRange(1, 4).Draw(t, "texts") {
			var sb strings.Builder
			for range rapid.IntRange(0, 30).Draw(t, "pieces") {
				sb.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
			}
			s := sb.String()
			if got, want := a.keyValues(s), b.keyValuesForward(s); got != want {
				t.Fatalf("keyValues(%q) = %q, reading forwards %q", s, got, want)
			}
		}
	})
}

// marks agrees with strings.IndexByte on texts short and long, around its 32-byte limit.
func TestMarksAsIndexByte(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringOfN(rapid.SampledFrom([]rune{'a', ':', '=', ' ', '\t', 'é'}), 0, 40, -1).Draw(t, "s")
		pairs, blank := marks(s)
		if want := strings.ContainsAny(s, ":="); pairs != want {
			t.Fatalf("marks(%q) pairs %v, want %v", s, pairs, want)
		}
		if want := strings.Contains(s, " "); blank != want {
			t.Fatalf("marks(%q) blank %v, want %v", s, blank, want)
		}
	})
}

// A long text found clean is not scanned again while no secret is learned: whatever the
// order of texts (clean, holding a credential shape, a secret pair or a secret learned
// later) and of secrets learned between them, Text gives what a redactor that scans every
// text gives, and a text clean before that holds a secret learned since is redacted.
func TestTextRemembersCleanTexts(t *testing.T) {
	filler := strings.Repeat("the agent read the report and wrote a summary. ", 6) // past cleanMin
	secrets := []string{"hunter2-very-secret-value", "s3cr3t-passphrase-0042"}
	pieces := []string{filler, "plain words ", "api_key=abc123 ", "token: 4000 ",
		"ghp_" + strings.Repeat("A", 36) + " ", "sk-" + strings.Repeat("b", 40) + " ",
		"Bearer abcdefghijklmnop ", secrets[0] + " ", secrets[1] + " "}
	rapid.Check(t, func(t *rapid.T) {
		mem, scan := NewRedactor(nil, nil, nil), NewRedactor(nil, nil, nil) // scan: every text scanned (text)
		var texts []string
		for range rapid.IntRange(1, 6).Draw(t, "texts") {
			var b strings.Builder
			b.WriteString(filler)
			for range rapid.IntRange(0, 4).Draw(t, "pieces") {
				b.WriteString(rapid.SampledFrom(pieces).Draw(t, "piece"))
			}
			texts = append(texts, b.String())
		}
		for i := range rapid.IntRange(1, 30).Draw(t, "steps") {
			if rapid.IntRange(0, 4).Draw(t, "learn") == 0 {
				// a value under a secret key: hashed, and learned as a secret
				v := rapid.SampledFrom(secrets).Draw(t, "secret")
				if got, want := mem.Attr("password", v), scan.Attr("password", v); got != want {
					t.Fatalf("step %d: Attr %q, want %q", i, got, want)
				}
				continue
			}
			s := rapid.SampledFrom(texts).Draw(t, "text")
			if got, want := mem.Text(s), scan.text(s); got != want {
				t.Fatalf("step %d: Text(%.60q...) = %.80q, want %.80q", i, s, got, want)
			}
		}
	})
	// The case the memory must not miss: a text clean when first seen, a secret in it
	// learned after.
	r := NewRedactor(nil, nil, nil)
	s := filler + secrets[0]
	if got := r.Text(s); got != s {
		t.Fatalf("a text with no secret known yet: redacted to %.80q", got)
	}
	r.Attr("password", secrets[0])
	if got := r.Text(s); strings.Contains(got, secrets[0]) {
		t.Errorf("a secret learned after its text was found clean is left in it: %.80q", got)
	}
	if len(r.clean) != 0 {
		t.Errorf("%d texts remembered clean after learning a secret they may hold", len(r.clean))
	}
}
