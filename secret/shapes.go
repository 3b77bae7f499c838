package secret

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// Shapes lists the credential shapes Find recognises by value, for documentation and tests.
var Shapes = []string{
	"private-key block (-----BEGIN … PRIVATE KEY----- to its END line)",
	"AWS access key id (AKIA, ASIA and the other key-id prefixes, then 16 capitals or digits)",
	"API key sk-… (OpenAI, Anthropic and the like: sk- and 16 or more characters)",
	"Stripe secret or restricted key (sk_live_…, sk_test_…, rk_live_…, rk_test_…)",
	"JSON Web Token (eyJ….….…)",
	"GitHub token (ghp_, gho_, ghu_, ghs_, ghr_ and 30 or more characters; github_pat_…)",
	"Slack token (xoxa-, xoxb-, xoxp-, xoxo-, xoxr-, xoxs-, xoxe-…)",
	"Google API key (AIza and 35 characters)",
	"GitLab token (glpat-…)",
	"npm token (npm_ and 36 characters)",
	"Hugging Face token (hf_ and 30 or more letters)",
	"the password of a URL (scheme://user:PASSWORD@host)",
}

// tokenAlternatives are the token shapes, each starting at one of candidate's prefixes.
var tokenAlternatives = []string{
	`(?s)-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)`,
	`\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}\b`,
	`\bsk-[A-Za-z0-9_-]{16,}`,
	`\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`,
	`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*`,
	`\bgh[pousr]_[A-Za-z0-9]{30,}`,
	`\bgithub_pat_[A-Za-z0-9_]{20,}`,
	`\bxox[aboprse]-[A-Za-z0-9-]{10,}`,
	`\bAIza[0-9A-Za-z_-]{35}`,
	`\bglpat-[A-Za-z0-9_-]{20,}`,
	`\bnpm_[A-Za-z0-9]{36}`,
	`\bhf_[A-Za-z]{30,}`,
}

// urlPasswordShape: group 1 is the password of scheme://user:password@host; the greedy
// password stops at the last @ before the path.
const urlPasswordShape = `[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:([^\s/@]*(?:@[^\s/@]*)*)@`

// tokenAt and urlPasswordAt match the shapes only at the start of the text they are given
// (the tests hold Find to the same expressions run over the whole text).
var (
	tokenAt       = regexp.MustCompile(`^(?:` + strings.Join(tokenAlternatives, "|") + `)`)
	urlPasswordAt = regexp.MustCompile(`^` + urlPasswordShape)
)

// Find calls found with the bounds s[start:end] of every credential-shaped value in s, in
// order, without overlaps: the matches of tokenAlternatives and of urlPasswordShape's
// password, as regexp's FindAll finds them over the whole of s, merged. It costs a scan of s and nothing more when s holds
// no candidate. The expressions run only where a shape can begin (a token at one of its
// prefixes, a URL at the scheme before a "://"), each anchored there: over the whole of a
// long text (a prompt with a link in it) they cost a hundred times more.
func Find(s string, found func(start, end int)) {
	if !candidate(s) {
		return
	}
	var spans [][2]int
	for p := 0; p < len(s); {
		q := nextToken(s, p)
		if q < 0 {
			break
		}
		// Every shape but the private-key block begins with \b: not after a word character.
		if q > 0 && isWord(s[q-1]) && s[q] != '-' {
			p = q + 1
			continue
		}
		if m := tokenAt.FindStringIndex(s[q:]); m != nil {
			spans = append(spans, [2]int{q, q + m[1]})
			p = q + m[1]
			continue
		}
		p = q + 1
	}
	for p := 0; p < len(s); {
		c := strings.Index(s[p:], "://")
		if c < 0 {
			break
		}
		c += p
		// The leftmost start a match through this "://" can have: back over the scheme's
		// characters (not before the end of the last match), then on to its first letter.
		q := c
		for q > p && schemeChar(s[q-1]) {
			q--
		}
		for q < c && !isLetter(s[q]) {
			q++
		}
		if q < c {
			if m := urlPasswordAt.FindStringSubmatchIndex(s[q:]); m != nil {
				if m[3] > m[2] {
					spans = append(spans, [2]int{q + m[2], q + m[3]})
				}
				p = q + m[1]
				continue
			}
		}
		p = c + 1
	}
	for _, sp := range merge(spans) {
		found(sp[0], sp[1])
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isWord is regexp's \w: an ASCII letter, digit or underscore.
func isWord(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '_' }

// schemeChar is a character a URL's scheme may hold after its first letter.
func schemeChar(c byte) bool { return isWord(c) && c != '_' || c == '+' || c == '.' || c == '-' }

// merge sorts spans and joins the overlapping ones.
func merge(spans [][2]int) [][2]int {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp[0] < last[1] {
			last[1] = max(last[1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Contains reports whether s holds a credential-shaped value.
func Contains(s string) bool {
	found := false
	Find(s, func(int, int) { found = true })
	return found
}

// Replace returns s with every credential-shaped value replaced by repl(value).
func Replace(s string, repl func(string) string) string {
	var b strings.Builder
	last := 0
	Find(s, func(start, end int) {
		b.WriteString(s[last:start])
		b.WriteString(repl(s[start:end]))
		last = end
	})
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Masked is what Mask puts in place of a secret.
const Masked = "<redacted>"

// Mask replaces every credential-shaped value in s by Masked.
func Mask(s string) string { return Replace(s, func(string) string { return Masked }) }

// awsKeyPrefixes are the prefixes of an AWS key id (tokenAlternatives).
var awsKeyPrefixes = []string{"AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA", "ASCA"}

// awsKeyPrefix reports whether p is one of awsKeyPrefixes.
func awsKeyPrefix(p string) bool { return len(p) == 4 && slices.Contains(awsKeyPrefixes, p) }

// startPairs holds the first two bytes of every prefix candidateAt accepts, and of "://",
// as a set of 65,536 bits: where the two bytes are not in it, no shape begins, which a scan
// of a long text (a prompt) tests with one load a byte before it tests the prefixes.
var startPairs = func() (set [1 << 16 / 64]uint64) {
	pairs := []string{"--", "AI", "sk", "rk", "ey", "gh", "gi", "gl", "xo", "np", "hf", ":/"}
	for _, p := range awsKeyPrefixes {
		pairs = append(pairs, p[:2])
	}
	for _, p := range pairs {
		x := uint(p[0])<<8 | uint(p[1])
		set[x>>6] |= 1 << (x & 63)
	}
	return set
}()

// mayStart reports whether s[i:i+2] is in startPairs; i+1 < len(s).
func mayStart(s string, i int) bool {
	x := uint(s[i])<<8 | uint(s[i+1])
	return startPairs[x>>6]&(1<<(x&63)) != 0
}

// candidate is a cheap test that s might hold a shape: one of the shapes' fixed prefixes.
// Every prefix is longer than one byte, so the last byte begins none.
func candidate(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if mayStart(s, i) && (candidateAt(s, i) || s[i] == ':' && strings.HasPrefix(s[i:], "://")) {
			return true
		}
	}
	return false
}

// nextToken is the first position from p on where a token shape may begin, else -1.
func nextToken(s string, p int) int {
	for i := p; i+1 < len(s); i++ {
		if mayStart(s, i) && candidateAt(s, i) {
			return i
		}
	}
	return -1
}

// candidateAt reports whether a token shape's fixed prefix begins at s[i].
func candidateAt(s string, i int) bool {
	rest := s[i:]
	switch s[i] {
	case '-':
		return strings.HasPrefix(rest, "-----BEGIN")
	case 'A':
		return len(rest) >= 20 && awsKeyPrefix(rest[:4]) || strings.HasPrefix(rest, "AIza")
	case 's', 'r':
		return strings.HasPrefix(rest[1:], "k-") || strings.HasPrefix(rest[1:], "k_")
	case 'e':
		return strings.HasPrefix(rest, "eyJ")
	case 'g':
		return len(rest) > 4 && rest[1] == 'h' && rest[3] == '_' || strings.HasPrefix(rest, "github_pat_") || strings.HasPrefix(rest, "glpat-")
	case 'x':
		return strings.HasPrefix(rest, "xox")
	case 'n':
		return strings.HasPrefix(rest, "npm_")
	case 'h':
		return strings.HasPrefix(rest, "hf_")
	}
	return false
}
