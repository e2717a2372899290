package wire

// A byteQueue is a FIFO of bytes that reuses its storage: consumed bytes
// are reclaimed by compacting when the queue would otherwise grow, so a
// steady stream through a bounded queue does not reallocate.
type byteQueue struct {
	buf []byte
	off int // bytes before off are consumed
}

// len returns the number of queued bytes.
func (q *byteQueue) len() int { return len(q.buf) - q.off }

// bytes returns the queued bytes; valid until the next push.
func (q *byteQueue) bytes() []byte { return q.buf[q.off:] }

// push appends b.
func (q *byteQueue) push(b []byte) {
	if q.off > 0 && len(q.buf)+len(b) > cap(q.buf) {
		n := copy(q.buf, q.buf[q.off:])
		q.buf, q.off = q.buf[:n], 0
	}
	q.buf = append(q.buf, b...)
}

// consume drops the first n queued bytes.
func (q *byteQueue) consume(n int) {
	q.off += n
	if q.off == len(q.buf) {
		q.buf, q.off = q.buf[:0], 0
	}
}

// reset drops everything and releases the storage.
func (q *byteQueue) reset() { q.buf, q.off = nil, 0 }
