package secret

import (
	"strings"
	"testing"
)

// Canaries is one value of every shape Shapes lists, each in a sentence, with the part that
// must disappear.
var canaries = []struct{ text, secret string }{
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7canary\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA7canary"},
	{"key -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAA canary (cut)", "b3BlbnNzaC1rZXktdjEAAAA"},
	{"aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"},
	{"session ASIAY34FZKBOKMUTVV7A,", "ASIAY34FZKBOKMUTVV7A"},
	{"openai=sk-proj-Abc123def456ghi789JKL", "sk-proj-Abc123def456ghi789JKL"},
	{"claude sk-ant-api03-Zz9yY8xX7wW6vV5u", "sk-ant-api03-Zz9yY8xX7wW6vV5u"},
	{"stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
	{"restricted rk_test_4eC39HqLyjWDarjtT1zdp7dc.", "rk_test_4eC39HqLyjWDarjtT1zdp7dc"},
	{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Sfl_KxwRJSM-eKKF2QT4", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Sfl_KxwRJSM-eKKF2QT4"},
	{"gh ghp_16C7e42F292c6912E7710c838347Ae178B4a end", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"},
	{"oauth gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a"},
	{"pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"},
	{"slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"},
	{"google AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"},
	{"gitlab glpat-xxxxxxxxxxxxxxxxxxxx1", "glpat-xxxxxxxxxxxxxxxxxxxx1"},
	{"npm npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrstuvwxyz0123456789"},
	{"hf hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"},
	{"dsn postgres://admin:Sup3r-S3cret@db.internal:5432/prod", "Sup3r-S3cret"},
	{"redis://:only-a-password@cache:6379", "only-a-password"},
	{"https://user:p@ss@host/x", "p@ss"},
}

func TestFindEveryShape(t *testing.T) {
	for _, c := range canaries {
		got := Mask(c.text)
		if strings.Contains(got, c.secret) || !strings.Contains(got, Masked) {
			t.Errorf("Mask(%q) = %q; the secret is readable", c.text, got)
		}
	}
	// A URL keeps its user and host: only the password is a secret.
	if got := Mask("postgres://admin:pw123@db:5432/x"); got != "postgres://admin:"+Masked+"@db:5432/x" {
		t.Errorf("URL masked as %q", got)
	}
}

// Ordinary text of the kind traces hold is left alone, and costs no allocation.
func TestFindLeavesTextAlone(t *testing.T) {
	for _, s := range []string{
		"", "momentum", "retrying after a timeout", "https://example.com:8080/path?q=1",
		"the risk-adjusted-return-of-the-fund", "task-scheduler-0123456789abcdef", "AKIA", "ghp_short",
		"ALLCAPSWORDSTHATARELONG ENOUGH", "eyJ", "mailto:someone@example.com", "tokens: 4000",
	} {
		if got := Mask(s); got != s {
			t.Errorf("Mask(%q) = %q; want it unchanged", s, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Contains("an ordinary reason: retrying after a timeout of 30s") }); n != 0 {
		t.Errorf("Contains allocates %v times on plain text", n)
	}
}

func TestKeys(t *testing.T) {
	k := NewKeys([]string{"Session", " "})
	for name, want := range map[string]bool{
		"api_key": true, "API_KEY": true, "db_password": true, "x-session-id": true, "Cookie": true,
		"strategy": false, "": false, "gen_ai.tool.name": false,
		"gen_ai.usage.input_tokens": false, "gen_ai.request.max_tokens": false,
		// The token-count exemption cannot swallow a secret-looking name.
		"gen_ai.api_key_tokens": true, "gen_ai.secret_tokens": true, "gen_ai.session_tokens": true,
		"gen_ai.refresh_token_tokens": true, "gen_ai._tokens": false, "gen_ai.tokens": true,
	} {
		if got := k.Secret(name); got != want {
			t.Errorf("Secret(%q) = %v, want %v", name, got, want)
		}
	}
	var zero Keys
	if !zero.Secret("password") || zero.Secret("strategy") || !IsKey("PWD") {
		t.Error("the zero Keys and IsKey must use KeyPatterns")
	}
}
