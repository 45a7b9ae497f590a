// Package wiretest helps test wire decoders with real traffic: a tee proxy that forwards a
// real client's connection to a real server and feeds a wire.Tracker on the way (Proxy),
// captures of that traffic and their file format (Capture), and the checks every decoder
// must pass on captured, truncated, corrupted and fuzzed streams (CheckRobust,
// FuzzReplay, BenchReplay). It sits beside package wire and is imported only by tests;
// the proxy integration can reuse Proxy's forwarding records to check that forwarding is
// byte-identical.
package wiretest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/dblat/dblat/internal/wire"
)

// Chunk is one piece of a conversation as the proxy received it.
type Chunk struct {
	Dir wire.Direction
	// At is the receive time, ns since the connection was accepted.
	At   int64
	Data []byte
}

// Capture is a recorded conversation, in the order the proxy received its chunks.
type Capture []Chunk

// magic starts a capture file. The format: magic, then per chunk one byte 'c' (client) or
// 's' (server), the time since the previous chunk (uvarint, ns), the length (uvarint) and
// the bytes. The end of the file is the end of the connection.
const magic = "dblat-wire-capture 1\n"

// maxChunk bounds a chunk's length when reading, so that a fuzzed length cannot allocate
// without bound.
const maxChunk = 1 << 20

// Marshal encodes c in the capture format.
func (c Capture) Marshal() []byte {
	var b []byte
	b = append(b, magic...)
	prev := int64(0)
	for _, ch := range c {
		d := byte('c')
		if ch.Dir == wire.Server {
			d = 's'
		}
		b = append(b, d)
		b = binary.AppendUvarint(b, uint64(max(0, ch.At-prev)))
		b = binary.AppendUvarint(b, uint64(len(ch.Data)))
		b = append(b, ch.Data...)
		prev = ch.At
	}
	return b
}

// Unmarshal decodes a capture. Lenient, it returns the chunks before the first malformed
// one (for fuzzing) together with the error; a capture that ends cleanly has no error.
func Unmarshal(b []byte) (Capture, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, errors.New("not a capture: it does not start with " + fmt.Sprintf("%q", magic))
	}
	b = b[len(magic):]
	var c Capture
	at := int64(0)
	for len(b) > 0 {
		var dir wire.Direction
		switch b[0] {
		case 'c':
			dir = wire.Client
		case 's':
			dir = wire.Server
		default:
			return c, fmt.Errorf("chunk %d: direction byte %q, want c or s", len(c), b[0])
		}
		b = b[1:]
		dt, n := binary.Uvarint(b)
		if n <= 0 {
			return c, fmt.Errorf("chunk %d: bad time", len(c))
		}
		b = b[n:]
		l, n := binary.Uvarint(b)
		if n <= 0 || l > maxChunk || l > uint64(len(b)-n) {
			return c, fmt.Errorf("chunk %d: bad length", len(c))
		}
		b = b[n:]
		at += int64(min(dt, 1<<40))
		c = append(c, Chunk{Dir: dir, At: at, Data: b[:l:l]})
		b = b[l:]
	}
	return c, nil
}

// ReadFile reads a capture file.
func ReadFile(path string) (Capture, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// WriteFile writes c to path in the capture format.
func (c Capture) WriteFile(path string) error { return os.WriteFile(path, c.Marshal(), 0o644) }

// Replay feeds c to d in order and closes it at the last chunk's time.
func (c Capture) Replay(d wire.Decoder) {
	end := int64(0)
	for _, ch := range c {
		if ch.Dir == wire.Client {
			d.ClientData(ch.Data, ch.At)
		} else {
			d.ServerData(ch.Data, ch.At)
		}
		end = ch.At
	}
	d.Close(end)
}

// RoundTrips counts the turns of c (server data after client data), as wire.Tracker does.
func (c Capture) RoundTrips() int {
	n, last := 0, wire.Server
	for i, ch := range c {
		if ch.Dir == wire.Server && last == wire.Client && i > 0 {
			n++
		}
		last = ch.Dir
	}
	return n
}

// Recorder is a wire.Sink that keeps copies of every event.
type Recorder struct {
	Events []wire.Event
}

// Event implements wire.Sink.
func (r *Recorder) Event(e *wire.Event) {
	c := *e
	c.Text = bytes.Clone(e.Text)
	c.Params = nil
	for _, p := range e.Params {
		c.Params = append(c.Params, wire.Param{Null: p.Null, Text: bytes.Clone(p.Text)})
	}
	r.Events = append(r.Events, c)
}

// Statements returns the texts of the recorded statements, in order.
func (r *Recorder) Statements() []string {
	var out []string
	for _, e := range r.Events {
		if e.Kind == wire.EvStatement {
			out = append(out, string(e.Text))
		}
	}
	return out
}

// CannotFollow returns the reason of the first EvCannotFollow, or "".
func (r *Recorder) CannotFollow() string {
	for _, e := range r.Events {
		if e.Kind == wire.EvCannotFollow {
			return e.Reason
		}
	}
	return ""
}
