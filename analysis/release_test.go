//go:build duckdb_arrow

package analysis

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// heldBytes is the memory the Go runtime holds from the operating system and has not
// returned.
func heldBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// A load that has drained leaves its batches as garbage; ReleaseGoMemory hands their pages
// back at once when the runtime holds more than ReleaseAbove, and leaves a smaller heap
// alone.
func TestReleaseGoMemory(t *testing.T) {
	garbage := make([][]byte, 0, 64)
	for range 64 {
		b := make([]byte, 8<<20) // 512 MiB in all, touched so that it is resident
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		garbage = append(garbage, b)
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	if held := heldBytes(); held < ReleaseAbove {
		t.Fatalf("the runtime holds %d MiB after 512 MiB of garbage; the test needs more than %d", held>>20, ReleaseAbove>>20)
	}
	ReleaseGoMemory()
	if held := heldBytes(); held > ReleaseAbove {
		t.Errorf("after ReleaseGoMemory the runtime holds %d MiB, want at most %d", held>>20, ReleaseAbove>>20)
	}
}
