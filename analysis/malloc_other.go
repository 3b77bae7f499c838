//go:build duckdb_arrow && !(linux && cgo)

package analysis

// tuneMalloc does nothing where the C library is not glibc's.
func tuneMalloc() bool { return false }

// glibc reports whether the C library is glibc's.
func glibc() bool { return false }
