package sim

import "math/rand/v2"

// Stream namespaces: every entity draws from its own PCG stream derived from the run seed,
// its namespace and a stable id, so adding a tool, a fault or an investigation does not shift
// the draws of any other entity.
const (
	nsArrival uint64 = iota + 1
	nsAgent
	nsTool
	nsFault
	nsHumans
	nsModel
	nsValidator // the independent validator's verdict per investigation
)

// mix64 is the SplitMix64 finaliser: a bijection that spreads nearby ids apart.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// childKey derives a stable id for the n-th child of the entity with id parent.
func childKey(parent uint64, n uint64) uint64 { return mix64(parent ^ mix64(n+0x51ed27)) }

// nameKey is a stable id for a name (FNV-1a), for tools and faults.
func nameKey(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// stream returns the random stream of entity id in namespace ns for this run's seed.
func stream(seed, ns, id uint64) *rand.Rand {
	p := rand.NewPCG(0, 0)
	reseed(p, seed, ns, id)
	return rand.New(p)
}

// reseed resets p to the start of the stream of entity id in namespace ns.
func reseed(p *rand.PCG, seed, ns, id uint64) {
	s1 := mix64(seed ^ mix64(ns<<56^id))
	s2 := mix64(s1 ^ mix64(id+ns))
	p.Seed(s1, s2)
}

// chance is one Bernoulli draw of probability p from r: true when the uniform draw in
// [0, 1) falls below p, so p = 0 is never and p = 1 always. It always draws, p = 0 too.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }
