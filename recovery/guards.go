package recovery

// Guards are the fleet guards per tool shared by every investigation.
type Guards struct{}

// NewGuards returns guards for tools tools; a nil config turns that guard off.
func NewGuards(tools int, b *BudgetConfig, c *BreakerConfig) *Guards { return &Guards{} }

func (g *Guards) Tokens(tool int, now int64) float64       { return -1 }
func (g *Guards) Breaker(tool int, now int64) BreakerState { return BreakerClosed }
func (g *Guards) Parked(tool int) int                      { return 0 }
