package recovery

import (
	"fmt"
	"math"
	"time"
)

// Guards are the fleet guards of every tool, shared by all investigations: a retry budget
// (token bucket) and a circuit breaker per tool. The zero value has no tools; build one with
// NewGuards. Guards are not safe for concurrent use: like the engines that share them, they
// are driven by one caller in time order.
type Guards struct {
	budgets  []budget  // nil when the retry budget is off
	breakers []breaker // nil when the breaker is off
	parked   []int32
}

// Defaults of the fleet guards. The retry budget earns DefaultBudget.Ratio tokens per first
// attempt, spends one per retry, refills at MinPerSecond and holds at most MaxTokens; see doc.go
// for how this compares with gRPC retry throttling and Finagle's RetryBudget.
var (
	DefaultBudget  = BudgetConfig{Ratio: 0.1, MinPerSecond: 1, MaxTokens: 10}
	DefaultBreaker = BreakerConfig{Window: time.Minute, FailureRatio: 0.5, MinCalls: 20, Cooldown: 2 * time.Minute}
)

// NewGuards returns the guards of tools tools. A nil config turns that guard off for every
// tool. Zero MaxTokens, Window or FailureRatio take the value of DefaultBudget or
// DefaultBreaker; the other fields are used as given (MinPerSecond 0: no floor; MinCalls 0:
// one call may trip; Cooldown 0: probe at once).
func NewGuards(tools int, b *BudgetConfig, c *BreakerConfig) *Guards {
	g := &Guards{parked: make([]int32, tools)}
	if b != nil {
		cfg := *b
		if cfg.MaxTokens <= 0 {
			cfg.MaxTokens = DefaultBudget.MaxTokens
		}
		g.budgets = make([]budget, tools)
		for i := range g.budgets {
			g.budgets[i] = budget{ratio: cfg.Ratio, perNs: cfg.MinPerSecond / 1e9, max: cfg.MaxTokens, tokens: cfg.MaxTokens}
		}
	}
	if c != nil {
		cfg := *c
		if cfg.Window <= 0 {
			cfg.Window = DefaultBreaker.Window
		}
		if cfg.FailureRatio <= 0 {
			cfg.FailureRatio = DefaultBreaker.FailureRatio
		}
		width := max(int64(cfg.Window)/breakerBuckets, 1)
		g.breakers = make([]breaker, tools)
		for i := range g.breakers {
			g.breakers[i] = breaker{
				width: width, ratio: cfg.FailureRatio, minCalls: int64(cfg.MinCalls),
				cooldown: int64(cfg.Cooldown),
			}
		}
	}
	return g
}

// Tools is the number of tools the guards cover.
func (g *Guards) Tools() int { return len(g.parked) }

// Tokens is the retry budget of tool at now; -1 when the budget is off. It does not change
// the guards.
func (g *Guards) Tokens(tool int, now int64) float64 {
	if g.budgets == nil || tool < 0 || tool >= len(g.budgets) {
		return -1
	}
	return g.budgets[tool].at(now)
}

// Breaker is the state of tool's breaker at now (BreakerOff when the breaker is off). An open
// breaker whose cooldown has passed reports half-open. It does not change the guards.
func (g *Guards) Breaker(tool int, now int64) BreakerState {
	if g.breakers == nil || tool < 0 || tool >= len(g.breakers) {
		return BreakerOff
	}
	b := &g.breakers[tool]
	if b.state == BreakerOpen && now >= b.openedAt+b.cooldown {
		return BreakerHalfOpen
	}
	return b.state
}

// Parked is the number of operations now parked on tool's open breaker.
func (g *Guards) Parked(tool int) int {
	if tool < 0 || tool >= len(g.parked) {
		return 0
	}
	return int(g.parked[tool])
}

func (g *Guards) checkTool(tool int32) error {
	if tool < 0 || int(tool) >= len(g.parked) {
		return fmt.Errorf("%w: tool %d, want 0..%d", ErrUnknownTool, tool, len(g.parked)-1)
	}
	return nil
}

// budget is one tool's retry token bucket: first attempts earn ratio tokens, retries cost
// one, and a floor of perNs tokens per nanosecond refills it up to max.
type budget struct {
	ratio, perNs, max float64
	tokens            float64
	last              int64
	// next is the earliest time the next throttled retry is told to come back. Throttled
	// retries are given successive slots one floor-refill apart, in the order they were
	// throttled, so that a crowd of them does not wake together, find one token, and park
	// again (which costs work quadratic in the crowd).
	next int64
	// Without a floor only first attempts refill the bucket (earns counts them), and
	// nothing says when the next will come: throttled retries then take successive slots
	// gap apart, a gap that starts at defaultThrottleDelay after a first attempt earned
	// tokens and doubles, up to MaxThrottleGap, with every slot handed out while none did
	// (slotEarns is earns when the last slot was handed out). A crowd parked on a bucket
	// that nothing refills wakes a few times an hour in all, not each of it every second.
	earns, slotEarns uint64
	gap              int64
}

// MaxThrottleGap bounds the gap between two throttled retries' slots on a budget without a
// floor: a bucket that no first attempt refills is tried once an hour at least, and at
// most a few times an hour.
const MaxThrottleGap = int64(time.Hour)

func (b *budget) at(now int64) float64 {
	if now <= b.last {
		return b.tokens
	}
	return math.Min(b.max, b.tokens+b.perNs*float64(now-b.last))
}

// refill brings the bucket to now; an earlier now changes nothing.
func (b *budget) refill(now int64) {
	b.tokens, b.last = b.at(now), max(b.last, now)
}

// wait is how long until the floor refills one token, or -1 if it never will by itself
// (only first attempts can earn it), or waitNever when nothing can ever refill it (no floor
// and no ratio); a floor so slow that the wait passes noCap (tokens fewer than one in 36
// years) waits noCap.
func (b *budget) wait(now int64) int64 {
	t := b.at(now)
	if t >= 1 {
		return 0
	}
	if b.perNs <= 0 && b.ratio <= 0 {
		return waitNever
	}
	if b.perNs <= 0 {
		return -1
	}
	return int64(min(math.Ceil((1-t)/b.perNs), float64(noCap)))
}

// waitNever is the wait of a budget nothing can refill: a retry it refuses parks for good.
const waitNever = -2

// retryWait reports whether a retry on tool may go now, and if not how long until the floor
// would let one through (-1: only new first attempts can earn it).
func (g *Guards) retryWait(tool int32, now int64) (ok bool, wait int64) {
	if g.budgets == nil {
		return true, 0
	}
	w := g.budgets[tool].wait(now)
	return w == 0, w
}

// throttleSlot reserves when a retry throttled at now comes back: no earlier than at, and no
// earlier than one floor-refill (at most noCap) after the retry throttled before it. Without
// a floor, the slots are a gap apart that doubles while no first attempt earns a token
// (budget.gap), so that retries parked on a bucket nothing refills do not poll it.
func (g *Guards) throttleSlot(tool int32, at int64) int64 {
	b := &g.budgets[tool]
	if b.perNs <= 0 {
		if b.ratio <= 0 || at >= noCap {
			return at // parked for good: nothing can refill it
		}
		if b.gap == 0 || b.earns != b.slotEarns {
			b.gap = defaultThrottleDelay
		} else {
			b.gap = min(2*b.gap, MaxThrottleGap)
		}
		b.slotEarns = b.earns
		at = max(at, b.next)
		b.next = at + b.gap
		return at
	}
	at = max(at, b.next)
	b.next = at + int64(min(math.Ceil(1/b.perNs), float64(noCap)))
	return at
}

func (g *Guards) spendRetry(tool int32, now int64) {
	if g.budgets != nil {
		b := &g.budgets[tool]
		b.refill(now)
		b.tokens--
	}
}

func (g *Guards) earn(tool int32, now int64) {
	if g.budgets != nil {
		b := &g.budgets[tool]
		b.refill(now)
		b.tokens = math.Min(b.max, b.tokens+b.ratio)
		b.earns++
	}
}

// breakerBuckets is the number of fixed buckets of a breaker's sliding window: the window
// slides in steps of Window/breakerBuckets and allocates nothing.
const breakerBuckets = 10

// breaker is one tool's circuit breaker. Each state change starts a new generation; an
// outcome counts only if its attempt was admitted in the current generation, so replies to
// attempts sent before the breaker opened cannot close or re-open it.
type breaker struct {
	width, cooldown int64
	ratio           float64
	minCalls        int64 // at full width: min_calls may be 2^31

	state    BreakerState // closed, open or half-open (open turns half-open lazily)
	gen      uint32
	openedAt int64
	probing  bool
	probeAt  int64

	epoch [breakerBuckets]int64
	calls [breakerBuckets]int32
	fails [breakerBuckets]int32
}

// settle applies the time-driven change open → half-open.
func (b *breaker) settle(now int64) {
	if b.state == BreakerOpen && now >= b.openedAt+b.cooldown {
		b.state = BreakerHalfOpen
		b.gen++
		b.probing = false
	}
}

// allow admits an attempt (ok, with its generation) or says when a probe may go (at).
func (b *breaker) allow(now int64) (ok bool, at int64, gen uint32) {
	b.settle(now)
	switch b.state {
	case BreakerOpen:
		return false, b.openedAt + b.cooldown, 0
	case BreakerHalfOpen:
		// One probe at a time; a probe whose outcome never comes (its worker died) is
		// replaced after a cooldown so the breaker cannot stay half-open for ever.
		if b.probing && now < b.probeAt+b.cooldown {
			return false, b.probeAt + b.cooldown, 0
		}
		b.probing, b.probeAt = true, now
	}
	return true, now, b.gen
}

func (b *breaker) record(now int64, gen uint32, success bool) {
	b.settle(now)
	if gen != b.gen {
		return
	}
	switch b.state {
	case BreakerHalfOpen:
		if success {
			b.state = BreakerClosed
			b.reset()
		} else {
			b.open(now)
		}
		b.gen++
		b.probing = false
	case BreakerClosed:
		idx := floorDiv(now, b.width)
		s := int(idx % breakerBuckets)
		if s < 0 {
			s += breakerBuckets
		}
		if b.epoch[s] != idx {
			b.epoch[s], b.calls[s], b.fails[s] = idx, 0, 0
		}
		b.calls[s]++
		if success {
			return
		}
		b.fails[s]++
		calls, fails := b.window(idx)
		if int64(calls) >= b.minCalls && float64(fails) >= b.ratio*float64(calls) {
			b.open(now)
			b.gen++
		}
	}
}

// window sums the calls and failures of the buckets in the window that ends with bucket
// idx: the last breakerBuckets widths, idx included.
func (b *breaker) window(idx int64) (calls, fails int32) {
	for i := range b.epoch {
		if b.epoch[i] > idx-breakerBuckets && b.epoch[i] <= idx {
			calls += b.calls[i]
			fails += b.fails[i]
		}
	}
	return calls, fails
}

func (b *breaker) open(now int64) {
	b.state = BreakerOpen
	b.openedAt = now
	b.reset()
}

func (b *breaker) reset() {
	for i := range b.epoch {
		b.epoch[i], b.calls[i], b.fails[i] = math.MinInt64, 0, 0
	}
}

// floorDiv is a/b rounded toward minus infinity, for b > 0 (a breaker's width is at least
// 1 ns): Go's / rounds toward 0, and its remainder takes the sign of a.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// allow asks tool's breaker to admit an attempt.
func (g *Guards) allow(tool int32, now int64) (ok bool, at int64, gen uint32) {
	if g.breakers == nil {
		return true, now, 0
	}
	return g.breakers[tool].allow(now)
}

// record feeds an attempt's outcome to tool's breaker.
func (g *Guards) record(tool int32, now int64, gen uint32, success bool) {
	if g.breakers != nil {
		g.breakers[tool].record(now, gen, success)
	}
}

// Passed feeds a call that reached tool without asking its guards (a model call the
// provider admitted at once; a refused one goes through the engine) to them: the breaker
// counts it as a success in its window, and a half-open breaker closes as after a
// successful probe; a first call (not a retry) earns the retry budget its ratio, as a first
// attempt does. A call during an open breaker's cooldown changes nothing.
func (g *Guards) Passed(tool int, now int64, retry bool) {
	if tool < 0 || tool >= len(g.parked) {
		return
	}
	if g.breakers != nil {
		b := &g.breakers[tool]
		b.settle(now)
		b.record(now, b.gen, true)
	}
	if !retry {
		g.earn(int32(tool), now)
	}
}

// Clone returns an independent copy of the guards, for what-if runs from the same fleet
// state.
func (g *Guards) Clone() *Guards {
	c := &Guards{parked: append([]int32(nil), g.parked...)}
	if g.budgets != nil {
		c.budgets = append([]budget(nil), g.budgets...)
	}
	if g.breakers != nil {
		c.breakers = append([]breaker(nil), g.breakers...)
	}
	return c
}
