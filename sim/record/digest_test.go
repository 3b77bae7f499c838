package record

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// workerBytes is the canonical encoding of a Worker record, written out by hand: tag 'W',
// the worker as a little-endian int64, the zone length-prefixed.
func workerBytes(w int64, zone string) []byte {
	b := []byte{'W'}
	b = binary.LittleEndian.AppendUint64(b, uint64(w))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(zone)))
	return append(b, zone...)
}

// The digest is the SHA-256 of the records' encodings in order, however many chunks they
// fill and wherever Sum is called in between: 30,000 records of 17-22 bytes fill several
// chunks, and the sums taken along the way are those of the prefixes.
func TestDigestIsHashOfEncodingsAcrossChunks(t *testing.T) {
	d := NewDigest()
	ref := sha256.New()
	var total int
	for i := range 30000 {
		zone := []string{"", "eu", "us-east"}[i%3]
		d.Worker(&Worker{Worker: int64(i) * 7919, Zone: zone})
		b := workerBytes(int64(i)*7919, zone)
		ref.Write(b)
		total += len(b)
		if i == 0 || i == 9999 || i == 29999 {
			if got, want := d.Sum(), hex.EncodeToString(ref.Sum(nil)); got != want {
				t.Fatalf("after %d records: digest %s, want %s", i+1, got, want)
			}
		}
	}
	if total < 3*digestChunk {
		t.Fatalf("the records filled %d bytes, fewer than three chunks of %d: the test crosses too few chunk ends", total, digestChunk)
	}
	if d.Rows() != 30000 {
		t.Errorf("Rows = %d, want 30000", d.Rows())
	}
}

// An empty digest is the SHA-256 of nothing.
func TestDigestEmpty(t *testing.T) {
	if got, want := NewDigest().Sum(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("empty digest %s, want %s", got, want)
	}
}
