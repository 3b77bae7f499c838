package traces

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"hash/maphash"
	"io"
	"strings"

	"github.com/mayday-sim/mayday/secret"
)

// DefaultSecretPatterns are the attribute-key substrings (case-insensitive) whose values are
// always redacted (secret.KeyPatterns). Besides them, Text redacts the credential after
// "Bearer " or "Basic " (an HTTP Authorization value) and every credential-shaped value
// (secret.Find) wherever it appears. docs/traces.md lists them.
var DefaultSecretPatterns = secret.KeyPatterns

// authSchemes are the HTTP authorization schemes whose next word is a credential.
var authSchemes = []string{"bearer ", "basic "}

// RedactedPrefix starts every redacted value: "redacted:hmac-sha256:" and 16 hex digits.
const RedactedPrefix = "redacted:hmac-sha256:"

// defaultRedactKey is used when Options.RedactKey is empty. It keeps digests reproducible
// across machines, but anyone who holds a trace can then test guesses of a low-entropy
// secret against its hash; high-entropy secrets (API keys, tokens) stay unreadable.
var defaultRedactKey = []byte("mayday trace redaction v1")

const (
	maxCached      = 4096 // redacted values remembered, so repeats cost a map lookup
	maxLearned     = 16   // secret values scrubbed from free text wherever they appear
	minLearnedSize = 8    // shorter values are too likely to occur by chance in free text
)

// Redactor replaces secrets with a keyed hash (HMAC-SHA256), so that equal secrets stay
// equal, and joinable, in a trace without being readable. It is not safe for concurrent use.
//
// It knows three shapes of secret:
//   - a value under a secret-looking key (Attr; members of JSON objects; key=value text);
//   - a JSON argument pair {"key": "api_key", "value": ...} (the resolved scenario's tool
//     arguments, OTLP attributes);
//   - a value seen before under a secret-looking key, or given in Options.Secrets, wherever
//     it reappears in free text;
//   - a value shaped like a credential (an AWS key id, a JWT, a URL's password: secret.Find)
//     under any key.
type Redactor struct {
	keys  secret.Keys
	mac   hash.Hash
	sum   []byte
	cache map[string]string
	// secretKeys remembers SecretKey's answer for each key it has seen (up to
	// maxSecretKeys keys of at most maxSecretKeyLen bytes): a run's attribute keys are few
	// and come back on every span, and the answer depends on the key alone.
	secretKeys map[string]bool
	onlyTokens map[string]bool      // onlyToken's answers, bounded as secretKeys
	secrets    []string             // known secret values, longest first is not needed: each is replaced whole
	shortest   int                  // the length of the shortest of secrets: a shorter text holds none
	pairs      [1 << 16 / 64]uint64 // the first two bytes of each secret, as a set of 65,536 bits (mayHold)
	buf        []byte
	// clean holds the long texts (cleanMin bytes or more) Text found nothing to redact in,
	// by a keyed 128-bit hash, while the learned secrets are the cleanAt first: a model
	// call's system prompt and tool schemas come back on every call, and scanning a prompt
	// is most of redacting it. Learning a secret empties it, since a text clean before may
	// hold the new one.
	clean      map[[2]uint64]struct{}
	cleanAt    int
	cleanSeeds [2]maphash.Seed
}

// cleanMin is the shortest text Text remembers as clean, and maxClean how many it
// remembers (about 3 MB) before it starts over.
const (
	cleanMin = 256
	maxClean = 1 << 16
)

// NewRedactor returns a redactor keyed with key (the built-in key when empty) that treats
// keys containing any of DefaultSecretPatterns or extra (case-insensitive) as secret, and
// scrubs the given secret values from free text.
func NewRedactor(key []byte, extra, secrets []string) *Redactor {
	if len(key) == 0 {
		key = defaultRedactKey
	}
	r := &Redactor{keys: secret.NewKeys(extra), mac: hmac.New(sha256.New, key), cache: make(map[string]string),
		secretKeys: make(map[string]bool), clean: make(map[[2]uint64]struct{}),
		cleanSeeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	for _, s := range secrets {
		if s != "" {
			r.learn(s)
		}
	}
	return r
}

// SecretKey reports whether values under the key k must be redacted (secret.Keys.Secret:
// OpenTelemetry GenAI token counts such as gen_ai.usage.input_tokens are counts, not
// credentials, unless another part of their name is secret-looking).
func (r *Redactor) SecretKey(k string) bool { return remembered(&r.secretKeys, k, r.keys.Secret) }

// onlyToken is secret.Keys.OnlyToken for the key k, remembered like SecretKey's answers:
// in free text a count such as "tokens: 4000" follows the same few keys again and again.
func (r *Redactor) onlyToken(k string) bool { return remembered(&r.onlyTokens, k, r.keys.OnlyToken) }

// remembered is answer(k), from *answers when it holds k, else computed and kept there
// while the bounds allow: a run's keys are few and come back on every span, and the
// answer depends on the key alone.
func remembered(answers *map[string]bool, k string, answer func(string) bool) bool {
	if v, ok := (*answers)[k]; ok {
		return v
	}
	v := answer(k)
	if *answers == nil {
		*answers = make(map[string]bool)
	}
	if len(*answers) < maxSecretKeys && len(k) <= maxSecretKeyLen {
		(*answers)[strings.Clone(k)] = v
	}
	return v
}

// The bounds of Redactor.secretKeys and onlyTokens: past them, keys are checked each time.
const (
	maxSecretKeys   = 4096
	maxSecretKeyLen = 256
)

// Redacted reports whether v is exactly a redacted value: RedactedPrefix and 16 hex digits.
// A secret that merely starts with the prefix is not.
func Redacted(v string) bool {
	if len(v) != len(RedactedPrefix)+16 || !strings.HasPrefix(v, RedactedPrefix) {
		return false
	}
	for i := len(RedactedPrefix); i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Hash returns the redacted form of v: RedactedPrefix and the first 16 hex digits of
// HMAC-SHA256(key, v). Values already redacted are returned unchanged.
func (r *Redactor) Hash(v string) string {
	if Redacted(v) {
		return v
	}
	if h, ok := r.cache[v]; ok {
		return h
	}
	r.mac.Reset()
	io.WriteString(r.mac, v)
	r.sum = r.mac.Sum(r.sum[:0])
	var hx [16]byte
	hex.Encode(hx[:], r.sum[:8])
	h := RedactedPrefix + string(hx[:])
	// What is remembered is a copy: v can be a part of a much larger text (a request as
	// an import decoded it), which the memory would otherwise keep alive.
	if len(r.cache) < maxCached {
		r.cache[strings.Clone(v)] = h
	}
	if len(v) >= minLearnedSize && len(r.secrets) < maxLearned && !r.known(v) {
		r.learn(strings.Clone(v))
	}
	return h
}

// learn adds v to the secret values scrubbed from free text.
func (r *Redactor) learn(v string) {
	if len(r.secrets) == 0 || len(v) < r.shortest {
		r.shortest = len(v)
	}
	r.secrets = append(r.secrets, v)
	if len(v) >= 2 {
		x := uint(v[0])<<8 | uint(v[1])
		r.pairs[x>>6] |= 1 << (x & 63)
	}
}

func (r *Redactor) known(v string) bool {
	for _, s := range r.secrets {
		if s == v {
			return true
		}
	}
	return false
}

// Attr returns the value to record for the attribute key=value.
func (r *Redactor) Attr(key, value string) string {
	if value == "" {
		return value
	}
	if r.SecretKey(key) {
		return r.Hash(value)
	}
	return r.Text(value)
}

// Text redacts free text: the value after a secret-looking key followed by '=' or ':'
// (`api_key=sk-1`, `"token": "abc"`), every credential-shaped value (secret.Find) and every
// known secret value. A purely numeric value is kept after a key that is secret-looking only
// because it says "token" ("tokens: 4000" is a count). Text that holds neither ':' nor '='
// nor a known secret nor a credential's prefix is returned as is, without allocating; a
// long text found clean once is not scanned again while no secret is learned (clean).
func (r *Redactor) Text(s string) string {
	if len(s) < cleanMin {
		return r.text(s)
	}
	if r.cleanAt != len(r.secrets) {
		clear(r.clean)
		r.cleanAt = len(r.secrets)
	}
	h := [2]uint64{maphash.String(r.cleanSeeds[0], s), maphash.String(r.cleanSeeds[1], s)}
	if _, ok := r.clean[h]; ok {
		return s
	}
	out := r.text(s)
	if out == s && r.cleanAt == len(r.secrets) {
		if len(r.clean) >= maxClean {
			clear(r.clean)
		}
		r.clean[h] = struct{}{}
	}
	return out
}

// text is Text without the memory of clean texts.
func (r *Redactor) text(s string) string {
	if s == "" {
		return s
	}
	pairs, blank := marks(s)
	if pairs {
		s = r.keyValues(s)
	}
	s = secret.Replace(s, r.shape)
	// A redaction adds no blank, so a text without one before has none after.
	if blank && strings.IndexByte(s, ' ') >= 0 {
		s = r.schemes(s)
	}
	if len(s) < r.shortest {
		return s // most values (numbers, names, states) are shorter than any secret learned
	}
	if !r.mayHold(s) {
		return s
	}
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, r.Hash(sec))
		}
	}
	return s
}

// mayHold reports whether s might hold one of the learned secrets: false only when no
// secret begins at any position of s. It tests each position's two bytes against the first
// two of every secret (pairs) before comparing any secret, where testing every secret with
// strings.Contains scanned s once for each of up to maxLearned secrets.
func (r *Redactor) mayHold(s string) bool {
	if r.shortest < 2 {
		return len(r.secrets) > 0 // a secret of one byte (Options.Secrets): no pair to test
	}
	for i := 0; i+r.shortest <= len(s); i++ {
		x := uint(s[i])<<8 | uint(s[i+1])
		if r.pairs[x>>6]&(1<<(x&63)) == 0 {
			continue
		}
		for _, sec := range r.secrets {
			if strings.HasPrefix(s[i:], sec) {
				return true
			}
		}
	}
	return false
}

// marks reports whether s holds a ':' or '=' (a key=value pair may follow) and a blank (a
// scheme's credential may follow). Most values are short: one loop over their bytes costs
// less than three calls of strings.IndexByte, which a long text is left to.
func marks(s string) (pairs, blank bool) {
	if len(s) > 32 {
		return strings.IndexByte(s, ':') >= 0 || strings.IndexByte(s, '=') >= 0, strings.IndexByte(s, ' ') >= 0
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':', '=':
			pairs = true
		case ' ':
			blank = true
		}
	}
	return pairs, blank
}

// shape is the redacted form of a credential-shaped value: its hash, which Hash also learns
// as a secret so its other occurrences go too.
func (r *Redactor) shape(v string) string { return r.Hash(v) }

// schemes redacts the credential that follows "Bearer " or "Basic " (any case) in s.
func (r *Redactor) schemes(s string) string {
	for _, sc := range authSchemes {
		from := 0
		for {
			i := indexFold(s[from:], sc)
			if i < 0 {
				break
			}
			i += from
			// Only a whole word: "Bearer" not preceded by a letter.
			if i > 0 && isIdent(s[i-1]) {
				from = i + len(sc)
				continue
			}
			vs := i + len(sc)
			for vs < len(s) && s[vs] == ' ' {
				vs++
			}
			ve := vs
			for ve < len(s) && !isDelim(s[ve]) {
				ve++
			}
			v := s[vs:ve]
			if v == "" || Redacted(v) {
				from = max(ve, vs+1)
				if from >= len(s) {
					break
				}
				continue
			}
			h := r.Hash(v)
			s = s[:vs] + h + s[ve:]
			from = vs + len(h)
		}
	}
	return s
}

// indexFold is the index of the lower-case ASCII pattern p in s, ignoring ASCII case, or -1.
// Only the positions whose byte is p's first, in either case, are compared in full: values
// can be whole prompts.
func indexFold(s, p string) int {
	if p == "" {
		return 0
	}
	first, upper := p[0], p[0]
	if first >= 'a' && first <= 'z' {
		upper = first - 'a' + 'A'
	}
	// The next position of each case of the first byte at or after i (-1: none left), found
	// by IndexByte, which scans far faster than a loop over every byte.
	next := func(c byte, from int) int {
		if j := strings.IndexByte(s[from:], c); j >= 0 {
			return from + j
		}
		return -1
	}
	lo, up := next(first, 0), -1
	if upper != first {
		up = next(upper, 0)
	}
	for {
		i := lo
		if i < 0 || up >= 0 && up < i {
			i = up
		}
		if i < 0 || i+len(p) > len(s) {
			return -1
		}
		if secret.ContainsFold(s[i:i+len(p)], []byte(p)) {
			return i
		}
		if i == lo {
			lo = next(first, i+1)
		} else {
			up = next(upper, i+1)
		}
	}
}

func isIdent(c byte) bool { return identBytes[c] }

// identBytes holds the bytes of an identifier (a key, or the word before a scheme): ASCII
// letters, digits, '_', '-' and '.'. A table: keyValues tests every byte of a long value.
var identBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
	}
	return t
}()

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ';', '&', '}', ']', ')', '"', '\'':
		return true
	}
	return false
}

// nextAt is the index of the first c in s at or after i (len(s) when there is none), given
// the one found before, at: looked for again only once i has passed it.
func nextAt(s string, c byte, i, at int) int {
	if at >= i {
		return at
	}
	if n := strings.IndexByte(s[i:], c); n >= 0 {
		return i + n
	}
	return len(s)
}

func numeric(v string) bool {
	if v == "true" || v == "false" || v == "null" {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return true
}

// keyValues redacts the values of secret-looking key=value / key: value pairs in s.
//
// A key is an identifier (identBytes) followed by any quotes, then any blanks, then ':' or
// '='. The scan goes from one ':' or '=' to the next (strings.IndexByte, many bytes at a
// time) and reads the identifier before each backwards, no further back than where the scan
// stands: a long text is mostly words that no ':' or '=' follows, which reading forwards
// tested byte by byte (keyValuesForward in the tests, which it is held to).
func (r *Redactor) keyValues(s string) string {
	colon, equals := -1, -1 // the next ':' and '=' at or after i (len(s): none), once looked for
	return r.redactPairs(s, func(i int) (st, e, k int) {
		colon, equals = nextAt(s, ':', i, colon), nextAt(s, '=', i, equals)
		k = min(colon, equals)
		e = k // the identifier's end: before its quotes and blanks
		for e > i && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
		for e > i && (s[e-1] == '"' || s[e-1] == '\'') {
			e--
		}
		st = e
		for st > i && isIdent(s[st-1]) {
			st--
		}
		return st, e, k
	})
}

// redactPairs redacts the values of the secret-looking pairs of s that key finds: key(i)
// returns the next ':' or '=' at or after i (len(s) when there is none) and the identifier
// [st, e) before it (empty when there is none), read no further back than i.
func (r *Redactor) redactPairs(s string, key func(i int) (st, e, k int)) string {
	out := r.buf[:0]
	last := 0 // s[last:] is not yet copied to out
	changed := false
	for i := 0; i < len(s); {
		st, e, k := key(i)
		if k >= len(s) {
			break
		}
		if st == e || !r.SecretKey(s[st:e]) {
			i = k + 1
			continue
		}
		vs, ve, next, redact := r.pairValue(s, k, s[st:e])
		if redact {
			out = append(out, s[last:vs]...)
			out = append(out, r.Hash(s[vs:ve])...)
			last = ve
			changed = true
		}
		i = next
	}
	if !changed {
		r.buf = out
		return s
	}
	out = append(out, s[last:]...)
	r.buf = out[:0]
	return string(out)
}

// pairValue reads the value of the pair whose key (secret-looking) ends before the ':' or
// '=' at k: its bounds, where the scan of s goes on, and whether to redact it (not an empty
// value, a count after a key that is secret only for "token", a value redacted already, or
// a nested object, whose own keys decide).
func (r *Redactor) pairValue(s string, k int, ident string) (vs, ve, next int, redact bool) {
	k++
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k >= len(s) {
		return 0, 0, len(s), false
	}
	if q := s[k]; q == '"' || q == '\'' {
		vs = k + 1
		ve = vs
		for ve < len(s) && s[ve] != q {
			if s[ve] == '\\' {
				ve++
			}
			ve++
		}
		if ve > len(s) {
			ve = len(s)
		}
	} else {
		if s[k] == '{' || s[k] == '[' {
			return 0, 0, k, false
		}
		vs = k
		ve = vs
		for ve < len(s) && !isDelim(s[ve]) {
			ve++
		}
		// "authorization: Bearer abc": the scheme and its credential are one value.
		for _, sc := range authSchemes {
			if ve < len(s) && s[ve] == ' ' && strings.EqualFold(s[vs:ve+1], sc) {
				ve++
				for ve < len(s) && !isDelim(s[ve]) {
					ve++
				}
			}
		}
	}
	v := s[vs:ve]
	if v == "" || numeric(v) && r.onlyToken(ident) || Redacted(v) {
		if ve == k {
			return vs, ve, ve + 1, false
		}
		return vs, ve, ve, false
	}
	return vs, ve, ve, true
}

// JSON redacts a JSON document: string members under secret-looking names, the value of
// argument pairs {"key": <secret-looking>, "value": ...} (every scalar inside it), the
// values of sweep axes {"path": "...<secret-looking>", "values": [...]}, and free text in
// every other string. Member order is kept; the output is compact. Text that
// is not valid JSON is redacted as free text.
func (r *Redactor) JSON(s string) string {
	if s == "" {
		return s
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return r.Text(s)
	}
	if _, err := dec.Token(); err != io.EOF {
		return r.Text(s)
	}
	if !r.redactNode(&n, false) {
		return s
	}
	var b bytes.Buffer
	writeNode(&b, &n)
	return b.String()
}

type nodeKind uint8

const (
	nScalar nodeKind = iota // bool, number, null: raw text
	nString
	nObject
	nArray
)

type node struct {
	kind  nodeKind
	text  string // nScalar: JSON text; nString: the decoded string
	names []string
	kids  []node
}

func parseNode(dec *json.Decoder) (node, error) {
	tok, err := dec.Token()
	if err != nil {
		return node{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		var n node
		switch t {
		case '{':
			n.kind = nObject
			for dec.More() {
				nt, err := dec.Token()
				if err != nil {
					return node{}, err
				}
				name, _ := nt.(string)
				kid, err := parseNode(dec)
				if err != nil {
					return node{}, err
				}
				n.names = append(n.names, name)
				n.kids = append(n.kids, kid)
			}
		case '[':
			n.kind = nArray
			for dec.More() {
				kid, err := parseNode(dec)
				if err != nil {
					return node{}, err
				}
				n.kids = append(n.kids, kid)
			}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return node{}, err
		}
		return n, nil
	case string:
		return node{kind: nString, text: t}, nil
	case json.Number:
		return node{kind: nScalar, text: t.String()}, nil
	case bool:
		if t {
			return node{kind: nScalar, text: "true"}, nil
		}
		return node{kind: nScalar, text: "false"}, nil
	default:
		return node{kind: nScalar, text: "null"}, nil
	}
}

// redactNode applies JSON's rules; all means every scalar below is a secret. It reports
// whether anything changed.
func (r *Redactor) redactNode(n *node, all bool) bool {
	switch n.kind {
	case nString:
		old := n.text
		if all {
			n.text = r.Hash(n.text)
		} else {
			n.text = r.Text(n.text)
		}
		return n.text != old
	case nScalar:
		if all && n.text != "null" {
			n.kind, n.text = nString, r.Hash(n.text)
			return true
		}
	case nArray:
		changed := false
		for i := range n.kids {
			changed = r.redactNode(&n.kids[i], all) || changed
		}
		return changed
	case nObject:
		pairKey, pairValue := -1, -1
		for i, name := range n.names {
			switch name {
			case "key", "name", "path":
				if n.kids[i].kind == nString {
					pairKey = i
				}
			case "value", "values":
				pairValue = i
			}
		}
		pair := pairKey >= 0 && pairValue >= 0
		pairSecret := false
		if pair {
			k := n.kids[pairKey].text
			if n.names[pairKey] == "path" { // a sweep axis: the path's last key names the value
				k = lastSegment(k)
			}
			pairSecret = r.SecretKey(k)
		}
		changed := false
		for i, name := range n.names {
			kid := &n.kids[i]
			switch {
			case all:
				changed = r.redactNode(kid, true) || changed
			case pair && i == pairValue:
				changed = r.redactNode(kid, pairSecret) || changed
			case pair && i == pairKey:
				changed = r.redactNode(kid, false) || changed
			case kid.kind == nString && r.SecretKey(name):
				changed = r.redactNode(kid, true) || changed
			default:
				changed = r.redactNode(kid, false) || changed
			}
		}
		return changed
	}
	return false
}

// lastSegment is the last key of a dotted path (tools.db.arguments.api_key: api_key); a
// plain key is its own last segment.
func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func writeNode(b *bytes.Buffer, n *node) {
	switch n.kind {
	case nScalar:
		b.WriteString(n.text)
	case nString:
		writeString(b, n.text)
	case nArray:
		b.WriteByte('[')
		for i := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			writeNode(b, &n.kids[i])
		}
		b.WriteByte(']')
	case nObject:
		b.WriteByte('{')
		for i := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, n.names[i])
			b.WriteByte(':')
			writeNode(b, &n.kids[i])
		}
		b.WriteByte('}')
	}
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // Encode ends with a newline
}
