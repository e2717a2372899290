package wire

// A journal is the provider's bounded stdout replay journal: the last
// capacity bytes of the stream, addressed by absolute byte offset. It
// holds offsets [low, head); appending past capacity evicts the oldest
// bytes and raises low. Storage grows on demand up to capacity, so a
// process with little output costs little memory.
type journal struct {
	capacity int
	buf      []byte // ring storage, len(buf) <= capacity
	start    int    // index in buf of offset low
	n        int    // bytes held
	head     uint64 // offset one past the newest byte
}

// low returns the journal's low-water mark: the oldest offset it can
// still serve.
func (j *journal) low() uint64 { return j.head - uint64(j.n) }

// append adds p at the head, evicting the oldest bytes beyond capacity.
func (j *journal) append(p []byte) {
	if len(p) > j.capacity {
		skip := len(p) - j.capacity
		j.head += uint64(skip)
		j.start, j.n = 0, 0 // everything held is older than p's tail
		p = p[skip:]
	}
	if need := j.n + len(p); need > len(j.buf) && len(j.buf) < j.capacity {
		j.grow(min(j.capacity, max(2*len(j.buf), need, 64<<10)))
	}
	for len(p) > 0 {
		if j.n == len(j.buf) { // full: evict the oldest byte run
			drop := min(len(p), j.n)
			j.start = (j.start + drop) % len(j.buf)
			j.n -= drop
		}
		end := (j.start + j.n) % len(j.buf)
		room := len(j.buf) - j.n
		if end+room > len(j.buf) {
			room = len(j.buf) - end
		}
		c := copy(j.buf[end:end+min(room, len(p))], p)
		j.n += c
		j.head += uint64(c)
		p = p[c:]
	}
}

// grow re-linearises the ring into storage of the given size.
func (j *journal) grow(size int) {
	nb := make([]byte, size)
	j.copyOut(nb[:j.n], j.low())
	j.buf, j.start = nb, 0
}

// readAt copies bytes starting at offset off into dst and returns how many
// it copied. off must lie in [low, head].
func (j *journal) readAt(dst []byte, off uint64) int {
	if off < j.low() || off > j.head {
		return 0
	}
	n := min(len(dst), int(j.head-off))
	j.copyOut(dst[:n], off)
	return n
}

func (j *journal) copyOut(dst []byte, off uint64) {
	if len(dst) == 0 {
		return
	}
	i := (j.start + int(off-j.low())) % len(j.buf)
	c := copy(dst, j.buf[i:])
	copy(dst[c:], j.buf)
}
