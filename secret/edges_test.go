package secret

import (
	"pgregory.net/rapid"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// OnlyToken is decided by every pattern a name holds, not by the first: token_password is a
// password whatever comes first in KeyPatterns, so the number after it in free text is a
// secret.
func TestOnlyToken(t *testing.T) {
	k := NewKeys([]string{"count"})
	for name, want := range map[string]bool{
		"tokens": true, "max_tokens": true, "TOKEN": true, "Input-Tokens": true,
		"token_password": false, "password_token": false, "api_token_key": false, "tokenSecret": false,
		"token_count": false, // an extra pattern counts as much as the built-in ones
		"api_key":     false, "strategy": false, "": false,
	} {
		if got := k.OnlyToken(name); got != want {
			t.Errorf("OnlyToken(%q) = %v, want %v", name, got, want)
		}
	}
	var zero Keys
	if !zero.OnlyToken("tokens") || zero.OnlyToken("token_password") || zero.OnlyToken("momentum") {
		t.Error("the zero Keys must decide OnlyToken by KeyPatterns")
	}
	// The first pattern a name holds is "key", the second "token": neither order may let it pass.
	if NewKeys(nil).OnlyToken("key_token") || NewKeys(nil).OnlyToken("token_key") {
		t.Error("a name with key and token must not count as a token count")
	}
}

// ContainsFold folds exactly the 26 capitals: the characters on either side of A-Z ('@',
// '[') are not letters and stay as they are.
func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{
		{"PASSWORD", "password", true}, {"pAsSwOrD", "password", true}, {"A", "a", true}, {"Z", "z", true},
		{"ZONE", "zone", true}, {"@", "`", false}, {"[", "{", false}, {"a", "A", false},
		{"xkey", "key", true}, {"keyx", "key", true}, {"ke", "key", false}, {"kez", "key", false},
		{"kkey", "key", true}, {"", "", true}, {"abc", "", true}, {"", "a", false}, {"keY", "key", true},
	} {
		if got := ContainsFold(c.s, []byte(c.p)); got != c.want {
			t.Errorf("ContainsFold(%q, %q) = %v, want %v", c.s, c.p, got, c.want)
		}
	}
}

// The GenAI token-count exemption covers gen_ai.<words>_tokens only, and only the word
// token: a pattern anywhere else in the name, built in or extra, still makes it secret.
func TestGenAICountExemption(t *testing.T) {
	usage := NewKeys([]string{"usage"})
	for _, c := range []struct {
		k    Keys
		name string
		want bool
	}{
		{Keys{}, "gen_ai.usage.input_tokens", false},
		{usage, "gen_ai.usage.input_tokens", true},
		{Keys{}, "gen_ai.token_id", true},        // not a count: no _tokens suffix
		{Keys{}, "x.gen_ai.input_tokens", true},  // not under gen_ai.
		{Keys{}, "GEN_AI.input_tokens", true},    // the prefix is lower case
		{Keys{}, "gen_ai.tokens_tokens", true},   // the middle holds token again
		{Keys{}, "gen_ai.password_tokens", true}, // the middle names a secret
		{Keys{}, "gen_ai.x_tokens.key", true},    // no _tokens suffix
		{Keys{}, "gen_ai.output_tokens", false},
	} {
		if got := c.k.Secret(c.name); got != c.want {
			t.Errorf("Secret(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// merge sorts the spans and joins those that overlap; spans that only touch stay apart.
func TestMerge(t *testing.T) {
	for _, c := range []struct{ in, want [][2]int }{
		{nil, nil},
		{[][2]int{{3, 4}}, [][2]int{{3, 4}}},
		{[][2]int{{5, 8}, {0, 2}}, [][2]int{{0, 2}, {5, 8}}},
		{[][2]int{{5, 8}, {0, 6}}, [][2]int{{0, 8}}},
		{[][2]int{{0, 9}, {2, 3}}, [][2]int{{0, 9}}},
		{[][2]int{{0, 5}, {5, 8}}, [][2]int{{0, 5}, {5, 8}}},
		{[][2]int{{9, 12}, {4, 6}, {0, 5}, {11, 15}}, [][2]int{{0, 6}, {9, 15}}},
	} {
		if got := merge(slices.Clone(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("merge(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// Find reports every secret once, in order, even when a URL's password (found second)
// comes before a token or holds one.
func TestFindOrderAndOverlap(t *testing.T) {
	s := "AKIAIOSFODNN7EXAMPLE then https://u:pw@h then postgres://u:sk-abcdefghijklmnopqrstu@db"
	var got []string
	Find(s, func(start, end int) { got = append(got, s[start:end]) })
	want := []string{"AKIAIOSFODNN7EXAMPLE", "pw", "sk-abcdefghijklmnopqrstu"}
	if !slices.Equal(got, want) {
		t.Errorf("Find found %q, want %q", got, want)
	}
	if m := Mask("https://u:pw@h AKIAIOSFODNN7EXAMPLE"); m != "https://u:"+Masked+"@h "+Masked {
		t.Errorf("Mask = %q", m)
	}
	// Every match of each kind, not the first only.
	s = "ghp_" + strings.Repeat("a", 30) + " AKIAIOSFODNN7EXAMPLE https://u:one@h https://v:two@h"
	got = got[:0]
	Find(s, func(start, end int) { got = append(got, s[start:end]) })
	if want := []string{"ghp_" + strings.Repeat("a", 30), "AKIAIOSFODNN7EXAMPLE", "one", "two"}; !slices.Equal(got, want) {
		t.Errorf("Find found %q, want %q", got, want)
	}
	// An empty password is not a secret.
	for _, s := range []string{"postgres://admin:@db/x", "redis://:@cache:6379"} {
		if Contains(s) || Mask(s) != s {
			t.Errorf("%q: an empty password was found", s)
		}
	}
}

// A shape is found wherever it sits, at the very end of the text too, and not one
// character short of its length.
func TestShapeLengths(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"AKIAIOSFODNN7EXAMPLE", true}, {"AKIAIOSFODNN7EXAMPL", false}, {"xAKIAIOSFODNN7EXAMPLE", false},
		{"ghp_" + strings.Repeat("a", 30), true}, {"ghp_" + strings.Repeat("a", 29), false},
		{"sk-" + strings.Repeat("b", 16), true}, {"sk-" + strings.Repeat("b", 15), false},
		{"hf_" + strings.Repeat("c", 30), true}, {"npm_" + strings.Repeat("d", 36), true},
		{"xoxb-" + strings.Repeat("1", 10), true}, {"glpat-" + strings.Repeat("e", 20), true},
		{"github_pat_" + strings.Repeat("f", 20), true}, {"AIza" + strings.Repeat("g", 35), true},
		{"rk_live_" + strings.Repeat("h", 16), true}, {"-----BEGIN PRIVATE KEY-----x", true},
		{"eyJhbGciOiJIUzI1.ab.", true}, {"a://u:p@h", true},
	} {
		if got := Contains(c.s); got != c.want {
			t.Errorf("Contains(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// candidate is true from each shape's fixed prefix on, and false on text that holds none:
// it lets ordinary text through without running the expressions, never a secret.
func TestCandidate(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"", false}, {"plain words", false},
		{"-----BEGIN", true}, {"----BEGIN", false},
		{"AKIA" + strings.Repeat("X", 16), true}, {"ASCA" + strings.Repeat("X", 16), true}, {"AKIA" + strings.Repeat("X", 15), false},
		{"A" + strings.Repeat("x", 19), false}, {"AIza", true}, {"AIz", false},
		{"sk-", true}, {"sk_", true}, {"rk_", true}, {"rk-", true}, {"s", false}, {"sx-", false},
		{"eyJ", true}, {"ey", false},
		{"ghp_x", true}, {"ghp_", false}, {"gxp_x", false}, {"ghpxx", false},
		{"github_pat_", true}, {"glpat-", true}, {"glpat", false},
		{"xox", true}, {"xo", false}, {"npm_", true}, {"npm", false}, {"hf_", true}, {"hf", false},
		{"://", true}, {":/", false},
	} {
		if got := candidate(c.s); got != c.want {
			t.Errorf("candidate(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// candidate never lets a shape through: on text made of the shapes' prefixes, each followed
// by a run of characters the shapes take, and separators, whenever an expression would
// match, candidate is true.
func TestCandidateHoldsEveryMatch(t *testing.T) {
	prefixes := []string{"AKIA", "ASIA", "ASCA", "AIza", "A", "AB", "sk-", "sk_live_", "rk_test_", "eyJ", ".", "ghp_", "github_pat_",
		"xoxb-", "glpat-", "npm_", "hf_", "://", "user:", "@", "-----BEGIN RSA PRIVATE KEY-----", " ", ""}
	fillers := []string{"X", "x", "7", "_", "-", "abcd", "WXYZ"}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for range rapid.IntRange(1, 6).Draw(t, "segments") {
			b.WriteString(rapid.SampledFrom(prefixes).Draw(t, "prefix"))
			b.WriteString(strings.Repeat(rapid.SampledFrom(fillers).Draw(t, "filler"), rapid.IntRange(0, 40).Draw(t, "run")))
		}
		s := b.String()
		if (tokenShape.MatchString(s) || urlPassword.MatchString(s)) && !candidate(s) {
			t.Fatalf("candidate(%q) = false, and an expression matches it", s)
		}
	})
}

// tokenShape and urlPassword find the shapes anywhere: the definition Find is held to.
var (
	tokenShape  = regexp.MustCompile(strings.Join(tokenAlternatives, "|"))
	urlPassword = regexp.MustCompile(urlPasswordShape)
)

// findReference is Find as the expressions define it: each one run over the whole text.
func findReference(s string) [][2]int {
	var spans [][2]int
	for _, m := range tokenShape.FindAllStringIndex(s, -1) {
		spans = append(spans, [2]int{m[0], m[1]})
	}
	for _, m := range urlPassword.FindAllStringSubmatchIndex(s, -1) {
		if m[3] > m[2] {
			spans = append(spans, [2]int{m[2], m[3]})
		}
	}
	return merge(spans)
}

// Find, which runs the expressions only where a shape can begin, finds exactly what they
// find over the whole text: on text made of the shapes' prefixes and of the characters
// around their edges (word characters before a prefix, schemes, users, passwords, '@',
// '/', spaces, private-key blocks with and without their end).
func TestFindMatchesTheExpressions(t *testing.T) {
	parts := []string{"AKIA", "ASIA", "AIza", "A", "sk-", "sk_live_", "rk_test_", "eyJ", "eyJhbGciOi.", "ghp_", "gho_", "github_pat_",
		"xoxb-", "glpat-", "npm_", "hf_", "://", "http", "postgres", "redis", "a1+.-", "1", "user:", ":", "@", "/", " ", "\n", ".",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "-----BEGIN", "X", "x", "7", "_", "-", "abcd", "WXYZ",
		"Sup3r-S3cret", "é", "", "://user:pw@", "://:pw@", "://u:p@ss@", "://u@h", "://a:b/c@d"}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for range rapid.IntRange(1, 12).Draw(t, "segments") {
			b.WriteString(rapid.SampledFrom(parts).Draw(t, "part"))
			b.WriteString(strings.Repeat(rapid.SampledFrom([]string{"X", "x", "7", "_", "-", "aZ9", "."}).Draw(t, "filler"), rapid.IntRange(0, 40).Draw(t, "run")))
		}
		s := b.String()
		var got [][2]int
		Find(s, func(start, end int) { got = append(got, [2]int{start, end}) })
		if want := findReference(s); !slices.Equal(got, want) {
			t.Fatalf("Find(%q) = %v; the expressions find %v", s, got, want)
		}
	})
}

// startPairs lets through every position where candidateAt can be true: for every two
// bytes outside it, followed by the rest of any shape's prefix (and enough characters for
// the longest), candidateAt is false.
func TestStartPairsHoldEveryPrefix(t *testing.T) {
	tails := []string{"---BEGIN", "za", "-", "_", "J", "p_", "thub_pat_", "at-", "x", "m_", "_", "//"}
	for _, p := range awsKeyPrefixes {
		tails = append(tails, p[2:])
	}
	pad := strings.Repeat("X", 40)
	for x := range 1 << 16 {
		a, b := byte(x>>8), byte(x)
		s := string([]byte{a, b})
		if mayStart(s, 0) {
			continue
		}
		for _, tail := range tails {
			if v := s + tail + pad; candidateAt(v, 0) {
				t.Fatalf("candidateAt(%q) is true, but %q is not among startPairs", v, s)
			}
		}
	}
}
