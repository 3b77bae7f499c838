//go:build duckdb_arrow && linux && cgo

package analysis

/*
#include <malloc.h>

// mayday_tune_malloc fixes glibc's two thresholds (bytes) and reports whether it could:
// other C libraries have no such knobs.
static int mayday_tune_malloc(int mmap_threshold, int trim_threshold) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
#else
	return 0;
#endif
}

static int mayday_glibc(void) {
#if defined(__GLIBC__)
	return 1;
#else
	return 0;
#endif
}
*/
import "C"

// glibc reports whether the C library is glibc's.
func glibc() bool { return C.mayday_glibc() == 1 }

// tuneMalloc fixes the thresholds of the C allocator DuckDB allocates with (see TuneMalloc)
// and reports whether it could.
func tuneMalloc() bool {
	return C.mayday_tune_malloc(C.int(MallocMmapThreshold), C.int(MallocTrimThreshold)) == 1
}
