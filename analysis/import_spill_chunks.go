package analysis

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/klauspost/compress/s2"
)

// A run's spill is written in chunks: records gathered up to spillChunkSize bytes, each
// chunk compressed on its own (S2's block format) behind its length and CRC-32C, with
// where each chunk begins kept in memory. Any chunk reads back alone, so a part's records
// can be read from the chunks that hold them, without the pass that copies every record
// of the spill into a file of its part (spillRun.parts): an exporter's batches, and
// mayday's own export, send a trace's spans close together, and then each part's traces
// lie in a few consecutive chunks.

// spillChunkSize is how many bytes of records a chunk holds, at most (a record longer than
// that is a chunk of its own). A variable for tests.
var spillChunkSize = 1 << 20

// spillChunks is the chunked spill file of one run.
type spillChunks struct {
	f    *os.File
	size int64   // bytes written to f
	cur  []byte  // the records of the chunk being filled
	enc  []byte  // the chunk compressed, scratch
	at   []int64 // where each chunk written begins in f
}

// chunkHead is a chunk's header: the length of its compressed records and their CRC-32C.
const chunkHead = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// add appends the record rec (its length prefix included) to the chunk being filled,
// writing the chunk out first when rec would not fit.
func (c *spillChunks) add(rec []byte) error {
	if len(c.cur) > 0 && len(c.cur)+len(rec) > spillChunkSize {
		if err := c.flush(); err != nil {
			return err
		}
	}
	c.cur = append(c.cur, rec...)
	return nil
}

// filling is the index of the chunk being filled: the chunk of the record added last.
func (c *spillChunks) filling() int32 { return int32(len(c.at)) }

// flush writes the chunk being filled, if it holds a record.
func (c *spillChunks) flush() error {
	if len(c.cur) == 0 {
		return nil
	}
	c.enc = s2.Encode(c.enc[:cap(c.enc)], c.cur)
	var head [chunkHead]byte
	binary.LittleEndian.PutUint32(head[:4], uint32(len(c.enc)))
	binary.LittleEndian.PutUint32(head[4:], crc32.Checksum(c.enc, castagnoli))
	if _, err := c.f.Write(head[:]); err != nil {
		return fmt.Errorf("%w: %w", errSpill, err)
	}
	if _, err := c.f.Write(c.enc); err != nil {
		return fmt.Errorf("%w: %w", errSpill, err)
	}
	c.at = append(c.at, c.size)
	c.size += chunkHead + int64(len(c.enc))
	c.cur = c.cur[:0]
	return nil
}

// chunkReader reads chunks of a spill back, reusing its buffers from chunk to chunk.
type chunkReader struct {
	c        *spillChunks
	enc, dec []byte
}

// read returns the records of chunk i; they are valid until the next read.
func (r *chunkReader) read(i int32) ([]byte, error) {
	c := r.c
	end := c.size
	if int(i)+1 < len(c.at) {
		end = c.at[i+1]
	}
	n := end - c.at[i]
	if n < chunkHead || n > math.MaxInt32 {
		return nil, errSpillCorrupt
	}
	if int64(cap(r.enc)) < n {
		r.enc = make([]byte, n)
	}
	b := r.enc[:n]
	if _, err := c.f.ReadAt(b, c.at[i]); err != nil {
		if err == io.EOF {
			return nil, errSpillCorrupt
		}
		return nil, fmt.Errorf("%w: %w", errSpill, err)
	}
	body := b[chunkHead:]
	if binary.LittleEndian.Uint32(b[:4]) != uint32(len(body)) || binary.LittleEndian.Uint32(b[4:8]) != crc32.Checksum(body, castagnoli) {
		return nil, errSpillCorrupt
	}
	dec, err := s2.Decode(r.dec[:cap(r.dec)], body)
	if err != nil {
		return nil, errSpillCorrupt
	}
	r.dec = dec
	return dec, nil
}

// eachRecord calls fn with each record of recs (a chunk's records, as read) and its trace
// index; rec keeps its length prefix, as readSpillRecord returns it.
func eachRecord(recs []byte, fn func(trace int32, rec []byte) error) error {
	for len(recs) > 0 {
		n, k := binary.Uvarint(recs)
		if k <= 0 || n > uint64(len(recs)-k) {
			return errSpillCorrupt
		}
		rec := recs[:k+int(n)]
		t, err := spillTrace(rec[k:])
		if err != nil {
			return err
		}
		if err := fn(t, rec); err != nil {
			return err
		}
		recs = recs[len(rec):]
	}
	return nil
}
