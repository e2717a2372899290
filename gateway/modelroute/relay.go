package modelroute

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/checkfu/checkfu"
)

// MaxEventBytes bounds one server-sent event from the provider (its lines
// and the blank line ending it): 4 MiB. A longer event cuts the stream
// with [CodeModelEventTooLarge]; nothing of it reaches the agent.
const MaxEventBytes = 4 << 20

// MaxAnswerBytes bounds a whole (non-streamed) answer: 32 MiB.
const MaxAnswerBytes = 32 << 20

// MaxStreamBytes bounds the bytes Relay writes for one streamed answer,
// its events' framing included: 64 MiB. The event that would take the
// total past it is not written, nor anything after it; the stream is
// cut with [CodeModelStreamTooLarge].
//
// Why 64 MiB: a long answer is 65,536 output tokens (a max_tokens of
// 64k, Claude's and Gemini 2.5 Pro's output ceiling; thinking counts
// in it), streamed in the worst case one delta a token. One delta's
// event, framing included, measured on each dialect's documented
// format with a 4-byte token: Anthropic text_delta 119 bytes
// (input_json_delta 138), OpenAI Responses output_text.delta 261 (item
// id, sequence number, logprobs, obfuscation), Chat Completions chunk
// 310, Gemini chunk 355 (its usage in every chunk). Put at 512 bytes a
// token, text JSON-escaped included, that is 32 MiB; twice that leaves
// room for what the figure leaves out: the events that repeat the whole
// text at the end (Responses' done events and response.completed),
// reasoning summaries, and Chat's logprobs (about 1.5 KB a token with
// 20 alternatives, for the shorter answers of the models that give
// them). The benchmark's long stream, 100,000 deltas, is 17.6 MB.
const MaxStreamBytes = 64 << 20

// A Screen checks bytes before they reach the agent (the outbound edge's
// echo check of the key); an error stops the relay before they are
// written. Given a stream's batches in order, it may ask to hold back
// the end of what it passed (custody/edge, Stream.Screen): hold is how
// many of the bytes passed so far, at their end, are not to be written
// yet. [RelayAnswer] writes a whole answer and holds nothing back.
type Screen func(p []byte) (hold int, err error)

// MaxHeldBytes bounds what Relay holds back for the screen: 8 MiB,
// twice MaxEventBytes, so the longest event holding the start of a
// held prefix of the key fits with the events after it until the next
// batch tells. A stream whose screen would hold more is cut with
// [CodeModelStreamHeldTooLong]; what was held is not written. A stream
// that holds this much is one whose text ended with a prefix of the key
// and then ran on for megabytes without adding to that text.
const MaxHeldBytes = 8 << 20

// MaxBatchBytes is Relay's read buffer, 64 KiB: the most one read of
// the provider's stream brings. The whole events read are screened and
// written together as soon as nothing more has arrived, or once they
// reach MaxBatchBytes, so a batch is at most MaxBatchBytes plus one
// event (itself at most MaxEventBytes), whatever the provider's reads
// look like. An event is never held back for a later one.
const MaxBatchBytes = 64 << 10

// Relay copies src, a server-sent-event stream of dialect d, to dst as
// it arrives, whole events only, at most MaxStreamBytes in all: the
// events read (see MaxBatchBytes)
// are screened together, then written, then flush is called (nil for
// none), as soon as no more of src has arrived or they reach
// MaxBatchBytes. So the agent sees each event as
// soon as the provider sent it, and never a byte the screen refused: a
// refused batch is not written at all, nor anything after it. It returns
// the usage the stream reported, with the first error: the screen's,
// [CodeModelEventTooLarge], [CodeModelStreamTooLarge] (after the whole
// events before the one that passes the bound are written), dst's, or
// src's (io.EOF is the stream's
// normal end and is not an error; a partial last event is dropped).
// After the screen or dst fails, the usage is what the stream reported
// up to the end of the failed batch.
//
// The screen and the write of one batch run on a goroutine of their own
// while the next batch is read (a batchWriter), so at most two batches
// are held: the one being screened or written, and the one being read.
// Relay waits for the batch before to be written before it hands on the
// next, and returns only once nothing more will be written: dst, flush
// and screen are never called after it returns.
//
// The screen is given the batches in order, each once: the edge's
// carries from one batch to the next what it needs to catch a key split
// across two (custody/edge, Stream.Screen), and refuses the batch that
// completes it, which is then not written. A batch that passes is
// written but for the hold the screen asks: its last hold bytes
// (events from where a prefix of the key begins, maybe with held bytes
// of batches before) wait for the next batch, and are written, in order
// and before it, once the screen passes it with a smaller hold; never
// when it refuses it. At the stream's normal end what is held is
// written (the key never completed); when the stream is cut (any
// error) it is not. At most MaxHeldBytes are held
// ([CodeModelStreamHeldTooLong]).
func Relay(dst io.Writer, flush func(), src io.Reader, d Dialect, screen Screen) (Usage, error) {
	w := startBatchWriter(dst, flush, screen)
	u, err := relayEvents(w, src, d)
	if err == nil {
		// The stream ended: what is held is written.
		err = w.finish(u)
	}
	if wu, werr := w.close(); werr != nil {
		// The failed batch came before anything relayEvents read after
		// it: its error is the first.
		return wu, werr
	}
	return u, err
}

// relayEvents reads src's events into batches and hands each to w, as
// Relay describes; it returns the usage read and the first error it
// saw, which w.close may precede with an earlier batch's.
func relayEvents(w *batchWriter, src io.Reader, d Dialect) (Usage, error) {
	ur := usageReader{d: d}
	marker := usageMarker(d)
	br := bufio.NewReaderSize(src, MaxBatchBytes)
	// batch holds the whole events read and not yet handed on,
	// batch[:end], then what has arrived of the next; each byte is
	// copied into it once.
	var batch, data []byte
	end := 0
	sent := 0 // the bytes handed to w, at most MaxStreamBytes
	send := func() error {
		if end == 0 {
			return nil
		}
		// send runs only where an event has just ended, or at the end of
		// the stream, where a partial event is dropped. The batch goes
		// to w; the one w wrote before comes back to be filled.
		sent += end
		next, err := w.send(batch[:end], ur.u)
		batch, end = next[:0], 0
		return err
	}
	// eventEnd is called when batch ends with an event's blank line:
	// the event's usage is read, and the batch handed on when nothing
	// more has arrived (buffered, the bytes read past the event, is 0)
	// or once the whole events held reach MaxBatchBytes: a provider
	// whose reads end inside events never empties the buffer at an
	// event's end.
	eventEnd := func(buffered int) error {
		if sent+len(batch) > MaxStreamBytes {
			// The event passes the stream's bound: the whole events
			// before it are written, it and the rest are not.
			if err := send(); err != nil {
				return err
			}
			return errStreamTooLarge
		}
		if ev := batch[end:]; bytes.Contains(ev, marker) {
			data = eventData(data[:0], ev)
			if len(data) > 0 && !bytes.Equal(data, []byte("[DONE]")) {
				ur.event(data)
			}
		}
		end = len(batch)
		if buffered == 0 || end >= MaxBatchBytes {
			return send()
		}
		return nil
	}
	for {
		// The whole lines already read are framed where they lie in br's
		// buffer and copied into batch an event at a time; what is left
		// (a line not yet whole) is read below.
		if n := br.Buffered(); n > 0 {
			buf, _ := br.Peek(n)
			whole := bytes.LastIndexByte(buf, '\n') + 1
			mark := 0 // buf[mark:] is not yet in batch
			for pos := 0; pos < whole; {
				next := pos + bytes.IndexByte(buf[pos:whole], '\n') + 1
				if len(batch)-end+next-mark > MaxEventBytes {
					return ur.u, errEventTooLarge()
				}
				line := buf[pos:next]
				pos = next
				if len(trimEOL(line)) != 0 {
					continue
				}
				// A blank line ends the event.
				batch, mark = append(batch, buf[mark:pos]...), pos
				if err := eventEnd(n - pos); err != nil {
					return ur.u, err
				}
			}
			batch = append(batch, buf[mark:whole]...)
			br.Discard(whole)
		}
		line, err := readLine(br, MaxEventBytes-(len(batch)-end))
		if err != nil {
			if errors.Is(err, io.EOF) {
				return ur.u, send()
			}
			return ur.u, err
		}
		batch = append(batch, line...)
		if len(trimEOL(line)) != 0 {
			continue
		}
		// A blank line ends the event.
		if err := eventEnd(br.Buffered()); err != nil {
			return ur.u, err
		}
	}
}

// A batchWriter screens, writes and flushes the batches Relay hands it,
// in order, one at a time, on a goroutine of its own.
type batchWriter struct {
	dst    io.Writer
	flush  func()
	screen Screen
	work   chan written // the batch to write; closed by close
	back   chan written // the batch written, with its error
	busy   bool         // a batch is on work and not yet back
	failed *written     // the first batch that failed, once seen
	spare  []byte       // a written batch's buffer, to be filled again
	held   []byte       // the bytes passed and held back, run's own
}

// written is one batch, the usage read up to its end, and the error of
// screening or writing it; end marks the stream's end, where what is
// held is written.
type written struct {
	b   []byte
	u   Usage
	err error
	end bool
}

// startBatchWriter starts the writer's goroutine; close stops it.
func startBatchWriter(dst io.Writer, flush func(), screen Screen) *batchWriter {
	w := &batchWriter{dst: dst, flush: flush, screen: screen, work: make(chan written), back: make(chan written, 1)}
	go w.run()
	return w
}

// run writes each batch: screened first, and written (then flushed)
// only when the screen passed it. send hands on no batch after one has
// failed.
func (w *batchWriter) run() {
	for j := range w.work {
		if j.end {
			// The stream's end: what is held is written.
			if len(w.held) > 0 {
				j.err = w.write(nil, 0)
				if j.err == nil && w.flush != nil {
					w.flush()
				}
			}
			w.back <- j
			continue
		}
		hold := 0
		if w.screen != nil {
			hold, j.err = w.screen(j.b)
		}
		if j.err == nil {
			j.err = w.write(j.b, hold)
		}
		if j.err == nil && w.flush != nil {
			w.flush()
		}
		w.back <- j
	}
	close(w.back)
}

// write writes what is held, then b, but for their last hold bytes,
// which it holds (copied: b's buffer goes back to be filled).
func (w *batchWriter) write(b []byte, hold int) error {
	if hold < 0 || hold > len(w.held)+len(b) || hold > MaxHeldBytes {
		w.held = w.held[:0]
		return errStreamHeld
	}
	if len(w.held) == 0 {
		n := len(b) - hold
		if n > 0 {
			if _, err := w.dst.Write(b[:n]); err != nil {
				return err
			}
		}
		w.held = append(w.held, b[n:]...)
		return nil
	}
	w.held = append(w.held, b...)
	n := len(w.held) - hold
	if n > 0 {
		if _, err := w.dst.Write(w.held[:n]); err != nil {
			return err
		}
	}
	w.held = w.held[:copy(w.held, w.held[n:])]
	return nil
}

// finish hands on the stream's end, once the batches before are
// written: what is held is written then. It returns the first failed
// batch's error.
func (w *batchWriter) finish(u Usage) error {
	if err := w.wait(); err != nil {
		return err
	}
	w.work <- written{u: u, end: true}
	w.busy = true
	return w.wait()
}

// send waits for the batch handed on before to be written, then hands
// on b with the usage read up to its end, and returns a buffer for the
// next batch. Once a batch has failed it hands on nothing and returns
// that batch's error.
func (w *batchWriter) send(b []byte, u Usage) ([]byte, error) {
	if err := w.wait(); err != nil {
		return nil, err
	}
	next := w.spare
	w.spare = nil
	w.work <- written{b: b, u: u}
	w.busy = true
	return next, nil
}

// wait waits for the batch handed on, if any, and returns the first
// failed batch's error.
func (w *batchWriter) wait() error {
	if w.busy {
		j := <-w.back
		w.busy = false
		if j.err != nil && w.failed == nil {
			w.failed = &j
		}
		if !j.end {
			w.spare = j.b
		}
	}
	if w.failed != nil {
		return w.failed.err
	}
	return nil
}

// close waits for the last batch handed on and stops the goroutine; it
// returns the first failed batch's usage and error, if one failed.
func (w *batchWriter) close() (Usage, error) {
	err := w.wait()
	close(w.work)
	for range w.back {
	}
	if err != nil {
		return w.failed.u, err
	}
	return Usage{}, nil
}

// eventData appends to dst the data of the event ev, its lines each
// ending with a newline: the value of each data line (after "data:" and
// one optional space), joined by newlines.
func eventData(dst, ev []byte) []byte {
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i+1], ev[i+1:]
		} else {
			ev = nil
		}
		v, ok := bytes.CutPrefix(trimEOL(line), []byte("data:"))
		if !ok {
			continue
		}
		if len(dst) > 0 {
			dst = append(dst, '\n')
		}
		dst = append(dst, bytes.TrimPrefix(v, []byte(" "))...)
	}
	return dst
}

// trimEOL returns line without the carriage returns and newlines it ends
// with.
func trimEOL(line []byte) []byte {
	n := len(line)
	for n > 0 && (line[n-1] == '\n' || line[n-1] == '\r') {
		n--
	}
	return line[:n]
}

// readLine reads one line, its newline included, of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var long []byte
	for {
		piece, err := br.ReadSlice('\n')
		if len(long)+len(piece) > max {
			return nil, errEventTooLarge()
		}
		switch {
		case err == nil:
			if long == nil {
				return piece, nil
			}
			return append(long, piece...), nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, piece...)
		default:
			return nil, err
		}
	}
}

// errEventTooLarge is the refusal of an event longer than MaxEventBytes.
func errEventTooLarge() error {
	return checkfu.Refuse(CodeModelEventTooLarge, "modelroute: the provider sent an event longer than %d bytes", MaxEventBytes)
}

// errStreamHeld is the refusal of a hold longer than MaxHeldBytes, or
// than what the screen was given.
var errStreamHeld = checkfu.Refuse(CodeModelStreamHeldTooLong, "modelroute: the screen would hold back more than %d bytes of the provider's stream; it is cut", MaxHeldBytes)

// errStreamTooLarge is the refusal of a stream longer than
// MaxStreamBytes.
var errStreamTooLarge = checkfu.Refuse(CodeModelStreamTooLarge, "modelroute: the provider's stream is longer than %d bytes; it is cut", MaxStreamBytes)

// RelayAnswer copies a whole (non-streamed) JSON answer of dialect d,
// at most MaxAnswerBytes ([CodeModelEventTooLarge] beyond), from src to
// dst once the screen has passed it, and returns its usage.
func RelayAnswer(dst io.Writer, src io.Reader, d Dialect, screen Screen) (Usage, error) {
	b, err := io.ReadAll(io.LimitReader(src, MaxAnswerBytes+1))
	if err != nil {
		return Usage{}, err
	}
	if len(b) > MaxAnswerBytes {
		return Usage{}, checkfu.Refuse(CodeModelEventTooLarge, "modelroute: the provider's answer is longer than %d bytes", MaxAnswerBytes)
	}
	if screen != nil {
		// A whole answer: nothing follows to complete a prefix, so the
		// hold is not used.
		if _, err := screen(b); err != nil {
			return Usage{}, err
		}
	}
	ur := usageReader{d: d}
	ur.event(b)
	if _, err := dst.Write(b); err != nil {
		return ur.u, err
	}
	return ur.u, nil
}
