package scenarios

import (
	"errors"
	"strings"
	"testing"

	"github.com/mayday-sim/mayday/secret"
)

// A secret that fails its own check (a list, a mapping, a value with ": " in a --set or a
// sweep), a secret pasted as a key, and a credential-shaped value anywhere in a message are
// reported by key and place, never echoed: not in the message, not in the override, not in
// the key. Before, each of these printed the secret.
func TestErrorsNeverEchoSecrets(t *testing.T) {
	const sk = "sk-live-canary0123456789"
	base := "name: t\ntools:\n  a:\n    timeout: 1s\n"
	for _, c := range []struct {
		file string
		sets []string
		key  string
	}{
		{base + "    arguments: {api_key: [" + sk + "]}\n", nil, "tools.a.arguments.api_key"},
		{base + "    arguments: {password: {x: " + sk + "}}\n", nil, "tools.a.arguments.password"},
		{base, []string{"tools.a.arguments.api_key=[" + sk + "]"}, "tools.a.arguments.api_key"},
		{base, []string{"tools.a.arguments.token=" + sk + ": x"}, "tools.a.arguments.token"},
		// A secret of no known shape, masked for its key alone.
		{base, []string{"tools.a.arguments.api_key=[hunter2canary]"}, "tools.a.arguments.api_key"},
		{base, []string{"tools.a.arguments.password=hunter2canary: x"}, "tools.a.arguments.password"},
		{base, []string{"tools.a.arguments={api_key: [" + sk + "]}"}, "tools.a.arguments.api_key"},
		{base, []string{"tools.a.arguments={api_key: " + sk + ", b: [1]}"}, "tools.a.arguments.b"},
		{base, []string{"tools.a.arguments.api_key=[" + sk}, "tools.a.arguments.api_key"}, // not YAML
		{base, []string{sk}, ""},                                     // not path=value
		{base, []string{"tools.a.timeout=" + sk}, "tools.a.timeout"}, // the shape, anywhere
		{base + "sweep:\n  tools.a.arguments.api_key: [ok-value, [" + sk + "]]\n", nil, "tools.a.arguments.api_key"},
		{base + "    " + sk + ": 1\n", nil, ""},
		{sk + "\n", nil, ""},
	} {
		_, err := Parse("f.yaml", []byte(c.file), c.sets)
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Errorf("%q %q: %v; want a refusal", c.file, c.sets, err)
			continue
		}
		found := c.key == ""
		for _, e := range list {
			for _, field := range []string{e.Key, e.Msg, e.Override, e.Suggestion, e.Error()} {
				if strings.Contains(field, "canary") {
					t.Errorf("%q %q: the error shows the secret: %v", c.file, c.sets, e)
				}
			}
			found = found || e.Key == c.key
		}
		if !found {
			t.Errorf("%q %q: %v; want an error at %s", c.file, c.sets, err, c.key)
		}
	}
	// An ordinary override is still echoed: the redaction is for secrets only.
	_, err := Parse("f.yaml", []byte(base), []string{"recovery.retry.max_attempts=0"})
	if err == nil || !strings.Contains(err.Error(), "--set recovery.retry.max_attempts=0") {
		t.Errorf("ordinary override: %v; want it named", err)
	}
	_, err = Parse("f.yaml", []byte(base), []string{"recovery.budgets={tokens: [1]}"})
	if err == nil || !strings.Contains(err.Error(), "={tokens: [1]}") {
		t.Errorf("a format key that says tokens: %v; want the override named", err)
	}
}

// MaskAssignment hides the value of an assignment whose path names a secret (an argument
// or a tool the file names so; the format's own keys such as tokens never do) or whose
// value holds a secret-named key or a credential-shaped value; everything else prints as
// given.
func TestMaskAssignment(t *testing.T) {
	for in, want := range map[string]string{
		"tools.db.arguments.api_key=hunter2":                   "tools.db.arguments.api_key=" + secret.Masked,
		"tools.db.arguments.password=a=b":                      "tools.db.arguments.password=" + secret.Masked,
		"tools.token.timeout=1s":                               "tools.token.timeout=" + secret.Masked,
		"tools.db.arguments={api_key: x}":                      "tools.db.arguments=" + secret.Masked,
		"tools.db.arguments.note=[password]":                   "tools.db.arguments.note=" + secret.Masked,
		"tools.db.arguments.note=sk-live-0123456789abcdefghij": "tools.db.arguments.note=" + secret.Masked,
		"tools.db.arguments.api_key=":                          "tools.db.arguments.api_key=",
		"tools.db.arguments.note=hunter2":                      "tools.db.arguments.note=hunter2",
		"tools.db.arguments.x={tokens: 3}":                     "tools.db.arguments.x={tokens: 3}",
		"workload.tokens=5":                                    "workload.tokens=5",
		"recovery.budgets.tokens=5":                            "recovery.budgets.tokens=5",
		"faults[0].for=1m":                                     "faults[0].for=1m",
		"no-equals":                                            "no-equals",
	} {
		if got := MaskAssignment(in); got != want {
			t.Errorf("MaskAssignment(%q) = %q; want %q", in, got, want)
		}
	}
}
