package scenarios

import "testing"

func BenchmarkParseResearchFleet(b *testing.B) {
	data, _ := Embedded(Default)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("research-fleet.yaml", data, nil); err != nil {
			b.Fatal(err)
		}
	}
}
