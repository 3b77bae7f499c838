package secret

import "strings"

// KeyPatterns are the key substrings (case-insensitive) whose values are always secret.
var KeyPatterns = []string{"key", "token", "secret", "password", "passwd", "pwd", "credential", "authorization", "cookie"}

// Keys decides which keys name a secret: those containing any of KeyPatterns or of the extra
// patterns given to NewKeys. Its zero value uses KeyPatterns alone.
type Keys struct {
	patterns [][]byte // lower case
}

// NewKeys returns the key matcher for KeyPatterns plus extra (blank patterns are ignored).
func NewKeys(extra []string) Keys {
	var k Keys
	for _, p := range append(append([]string(nil), KeyPatterns...), extra...) {
		p = strings.TrimSpace(strings.ToLower(p))
		if p != "" {
			k.patterns = append(k.patterns, []byte(p))
		}
	}
	return k
}

var defaultKeys = NewKeys(nil)

// IsKey reports whether values under name are secret, by KeyPatterns alone.
func IsKey(name string) bool { return defaultKeys.Secret(name) }

// Secret reports whether values under name are secret.
//
// One exemption: an OpenTelemetry GenAI token count (gen_ai.<words>_tokens, such as
// gen_ai.usage.input_tokens) is a count, not a credential. The exemption only covers the
// word "token" itself: gen_ai.api_key_tokens or gen_ai.secret_tokens stay secret, since the
// rest of their name matches a pattern of its own.
func (k Keys) Secret(name string) bool {
	patterns := k.patterns
	if patterns == nil {
		patterns = defaultKeys.patterns
	}
	if mid, ok := genAICount(name); ok {
		for _, p := range patterns {
			if string(p) != "token" && ContainsFold(name, p) || ContainsFold(mid, p) {
				return true
			}
		}
		return false
	}
	for _, p := range patterns {
		if ContainsFold(name, p) {
			return true
		}
	}
	return false
}

// genAICount splits gen_ai.<mid>_tokens; ok is false for any other name.
func genAICount(name string) (mid string, ok bool) {
	const pre, suf = "gen_ai.", "_tokens"
	if len(name) < len(pre)+len(suf) || name[:len(pre)] != pre || !strings.HasSuffix(name, suf) {
		return "", false
	}
	return name[len(pre) : len(name)-len(suf)], true
}

// ContainsFold reports whether s contains the lower-case ASCII pattern p, ignoring ASCII case.
func ContainsFold(s string, p []byte) bool {
	n := len(p)
	if n == 0 {
		return true
	}
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != p[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// OnlyToken reports whether name is secret only because it contains "token": `tokens: 4000`
// in free text is a count, so a number after such a key is kept. A name that matches any
// other pattern (api_key, password, or an extra pattern) is not.
func (k Keys) OnlyToken(name string) bool {
	patterns := k.patterns
	if patterns == nil {
		patterns = defaultKeys.patterns
	}
	only := false
	for _, p := range patterns {
		if ContainsFold(name, p) {
			if string(p) != "token" {
				return false
			}
			only = true
		}
	}
	return only
}
