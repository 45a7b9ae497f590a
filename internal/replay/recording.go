package replay

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dblat/dblat/internal/capture"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
)

// magic starts a recording file; the digit is FormatVersion.
const magic = "DBLATREC1\n"

// FormatVersion is the version of the recording format this build writes and reads.
const FormatVersion = 1

// Record kinds of a recording file: each record is its kind, the connection's number
// (uvarint), the time (varint, nanoseconds on the source's clock) and, for a chunk, its
// length (uvarint) and bytes. A header record (JSON) comes first.
const (
	recHeader  = 'H'
	recOpen    = 'O' // a connection followed from its start
	recResumed = 'R' // a connection followed from its middle (its protocol's name follows)
	recClient  = 'C'
	recServer  = 'S'
	recClose   = 'X' // its protocol's name follows
)

// maxChunk bounds one chunk's length in a file: the sources read at most a few hundred KiB
// at a time, so a larger length is a damaged file.
const maxChunk = 64 << 20

// Header describes a recording.
type Header struct {
	Version int `json:"version"`
	// Source is what showed the bytes (observe.SourceProxy, SourcePcap, SourceInterface).
	Source string `json:"source"`
	// Upstream is the server's address as the source saw it; Engine the engine named on
	// the command line, "" when each connection's protocol was told by its first bytes.
	Upstream string `json:"upstream,omitempty"`
	Engine   string `json:"engine,omitempty"`
	// Started is when the recording started, on the wall clock.
	Started time.Time `json:"started"`
	// Warning says what the file holds.
	Warning string `json:"warning"`
}

// dataWarning is every recording's Header.Warning.
const dataWarning = "this file holds the application's statements and data as sent and answered: keep it where such data may be kept"

// Chunk is one read of one direction of a connection, as the source saw it.
type Chunk struct {
	ToServer bool
	// At is when it was seen, in nanoseconds on the source's clock.
	At   int64
	Data []byte
}

// Conn is one recorded connection: a session of the application.
type Conn struct {
	// ID numbers the connection in the recording, from 0 in the order they were opened.
	ID uint64
	// Resumed reports a connection followed from its middle (its start was not captured,
	// or bytes of it were lost): its start-up is not in the recording.
	Resumed bool
	// Protocol is what the connection was followed as ("PostgreSQL"), "" when it was not.
	Protocol string
	// Closed is when it ended, 0 when the recording ended first.
	Closed int64
	Chunks []Chunk
}

// Opened is when the connection showed its first bytes (0 when it showed none).
func (c *Conn) Opened() int64 {
	if len(c.Chunks) == 0 {
		return 0
	}
	return c.Chunks[0].At
}

// Recording is a whole recording: every connection's conversation.
type Recording struct {
	Header Header
	// Conns are the connections in the order they showed their first bytes.
	Conns []*Conn
}

// Start returns the time of the recording's first chunk (0 for an empty one).
func (r *Recording) Start() int64 {
	var s int64
	for _, c := range r.Conns {
		if o := c.Opened(); o != 0 && (s == 0 || o < s) {
			s = o
		}
	}
	return s
}

// Bytes returns what the recording holds, client and server bytes.
func (r *Recording) Bytes() (up, down int64) {
	for _, c := range r.Conns {
		for _, ch := range c.Chunks {
			if ch.ToServer {
				up += int64(len(ch.Data))
			} else {
				down += int64(len(ch.Data))
			}
		}
	}
	return up, down
}

// Tape keeps the conversations an observe.Observer follows (observe.Config.Tape) as a
// Recording: in memory (NewTape), or written to a file as they go (CreateFile). It is safe
// for concurrent use.
type Tape struct {
	mu     sync.Mutex
	next   uint64
	rec    *Recording // in memory; nil for a file
	f      *os.File
	w      *bufio.Writer
	err    error // the first write error
	closed bool
	buf    []byte
}

// NewTape returns a Tape that keeps the recording in memory (Recording).
func NewTape(h Header) *Tape {
	h.Version, h.Warning = FormatVersion, dataWarning
	return &Tape{rec: &Recording{Header: h}}
}

// CreateFile returns a Tape that writes the recording to path as it goes, created (or
// replaced) readable by its owner only: it holds the application's data. Flush writes out
// what is buffered, Close ends the file.
func CreateFile(path string, h Header) (*Tape, error) {
	os.Remove(path) // an older file keeps its permissions otherwise
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	h.Version, h.Warning = FormatVersion, dataWarning
	doc, err := json.Marshal(h)
	if err != nil {
		f.Close()
		return nil, err
	}
	t := &Tape{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	_, _ = t.w.WriteString(magic) // a bufio.Writer keeps its error for Close
	t.record(recHeader, 0, 0, doc)
	return t, nil
}

// Recording returns the recording kept in memory (nil for a Tape that writes a file). Call
// it once every connection has closed.
func (t *Tape) Recording() *Recording {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rec
}

// record writes one record to the file; t.mu is held.
func (t *Tape) record(kind byte, id uint64, at int64, data []byte) {
	if t.err != nil || t.closed {
		return
	}
	b := append(t.buf[:0], kind)
	b = binary.AppendUvarint(b, id)
	b = binary.AppendVarint(b, at)
	if kind != recOpen {
		b = binary.AppendUvarint(b, uint64(len(data)))
	}
	t.buf = b
	if _, err := t.w.Write(b); err != nil {
		t.err = err
		return
	}
	if _, err := t.w.Write(data); err != nil {
		t.err = err
	}
}

// Open implements observe.Tape.
func (t *Tape) Open(resume wire.Protocol) observe.TapeConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := &tapeConn{t: t, id: t.next}
	t.next++
	if t.rec != nil {
		c.c = &Conn{ID: c.id, Resumed: resume != nil}
		t.rec.Conns = append(t.rec.Conns, c.c)
		return c
	}
	if resume != nil {
		t.record(recResumed, c.id, 0, []byte(resume.Name()))
	} else {
		t.record(recOpen, c.id, 0, nil)
	}
	return c
}

type tapeConn struct {
	t  *Tape
	id uint64
	c  *Conn // in memory
}

// Chunk implements observe.TapeConn.
func (c *tapeConn) Chunk(toServer bool, b []byte, at int64) {
	t := c.t
	if c.c != nil {
		// Only this connection's goroutine appends to its Conn.
		c.c.Chunks = append(c.c.Chunks, Chunk{ToServer: toServer, At: at, Data: slices.Clone(b)})
		return
	}
	kind := byte(recServer)
	if toServer {
		kind = recClient
	}
	t.mu.Lock()
	t.record(kind, c.id, at, b)
	t.mu.Unlock()
}

// Close implements observe.TapeConn.
func (c *tapeConn) Close(at int64, protocol string) {
	if c.c != nil {
		c.c.Closed, c.c.Protocol = at, protocol
		return
	}
	c.t.mu.Lock()
	c.t.record(recClose, c.id, at, []byte(protocol))
	c.t.mu.Unlock()
}

// Flush writes out what a file's Tape buffers, and returns the first write error so far.
func (t *Tape) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w != nil && t.err == nil && !t.closed {
		t.err = t.w.Flush()
	}
	return t.err
}

// Close flushes and closes a file's Tape (connections still open are cut there); it returns
// the first write error. Later chunks are dropped.
func (t *Tape) Close() error {
	err := t.Flush()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil && !t.closed {
		if cerr := t.f.Close(); err == nil {
			err = cerr
		}
	}
	t.closed = true
	return err
}

// ErrNotRecording is ReadFile's error for a file that is not a recording.
var ErrNotRecording = errors.New("not a dblat recording (write one with dblat proxy --capture FILE or dblat observe --pcap … --capture FILE)")

// ReadFile reads a recording file whole.
func ReadFile(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Read reads a recording. A recording cut short (its writer killed) gives what it holds
// up to the cut.
func Read(rd io.Reader) (*Recording, error) {
	br := bufio.NewReaderSize(rd, 1<<20)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != magic {
		return nil, ErrNotRecording
	}
	rec := &Recording{}
	conns := map[uint64]*Conn{}
	conn := func(id uint64) *Conn {
		c := conns[id]
		if c == nil {
			c = &Conn{ID: id}
			conns[id] = c
		}
		return c
	}
	first := true
	for {
		kind, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		id, err1 := binary.ReadUvarint(br)
		at, err2 := binary.ReadVarint(br)
		if err != nil || err1 != nil || err2 != nil {
			break // cut short
		}
		var data []byte
		if kind != recOpen {
			n, err := binary.ReadUvarint(br)
			if err != nil || n > maxChunk {
				if err == nil {
					return nil, fmt.Errorf("a chunk of %d bytes: the file is damaged", n)
				}
				break
			}
			data = make([]byte, n)
			if _, err := io.ReadFull(br, data); err != nil {
				break
			}
		}
		if first != (kind == recHeader) {
			return nil, ErrNotRecording
		}
		switch kind {
		case recHeader:
			first = false
			if err := json.Unmarshal(data, &rec.Header); err != nil {
				return nil, fmt.Errorf("its header: %w", err)
			}
			if rec.Header.Version != FormatVersion {
				return nil, fmt.Errorf("a recording of format %d; this dblat reads format %d", rec.Header.Version, FormatVersion)
			}
		case recOpen:
			conn(id)
		case recResumed:
			conn(id).Resumed = true
		case recClient, recServer:
			c := conn(id)
			c.Chunks = append(c.Chunks, Chunk{ToServer: kind == recClient, At: at, Data: data})
		case recClose:
			c := conn(id)
			c.Closed, c.Protocol = at, string(data)
		default:
			return nil, fmt.Errorf("a record of kind %q: the file is damaged", kind)
		}
	}
	if first {
		return nil, ErrNotRecording
	}
	for _, c := range conns {
		rec.Conns = append(rec.Conns, c)
	}
	rec.sort()
	return rec, nil
}

// sort orders the connections by their first bytes (those without any last).
func (r *Recording) sort() {
	slices.SortStableFunc(r.Conns, func(a, b *Conn) int {
		oa, ob := a.Opened(), b.Opened()
		switch {
		case oa == ob:
			return int(a.ID) - int(b.ID)
		case oa == 0:
			return 1
		case ob == 0:
			return -1
		case oa < ob:
			return -1
		}
		return 1
	})
}

// Sorted returns an in-memory Tape's recording with its connections in order; call it
// once every connection has closed.
func (t *Tape) Sorted() *Recording {
	r := t.Recording()
	if r != nil {
		r.sort()
	}
	return r
}

// ReadPcap follows the database connections of a capture file (package capture: pcap or
// pcapng) into a Recording in memory, without writing one. cfg says which servers' (its
// Session and Source are set here); the capture must hold the connections of one server
// only, or the error names them all. protos are the protocols to follow.
func ReadPcap(ctx context.Context, path string, cfg capture.Config, protos []wire.Protocol) (*Recording, error) {
	var (
		mu    sync.Mutex
		tapes []*Tape
		names []string
	)
	cfg.Source = observe.SourcePcap
	cfg.Session = func(server netip.AddrPort) *observe.SessionConfig {
		mu.Lock()
		defer mu.Unlock()
		t := NewTape(Header{Source: observe.SourcePcap, Upstream: server.String()})
		tapes, names = append(tapes, t), append(names, server.String())
		return &observe.SessionConfig{Config: observe.Config{Protocols: protos, Tape: t}}
	}
	fol := capture.New(cfg)
	if _, err := capture.ReadFile(ctx, path, fol); err != nil {
		return nil, err
	}
	for _, s := range fol.Sessions() {
		_, _ = s.Stop()
	}
	switch len(tapes) {
	case 0:
		return nil, &ServersError{Path: path, Looked: fol.String()}
	case 1:
		return tapes[0].Sorted(), nil
	}
	return nil, &ServersError{Path: path, Servers: names}
}

// ServersError is ReadPcap's error for a capture of no server it follows, or of several.
type ServersError struct {
	Path string
	// Looked says where it looked (no server found); Servers are the servers found.
	Looked  string
	Servers []string
}

func (e *ServersError) Error() string {
	if len(e.Servers) == 0 {
		return fmt.Sprintf("%s: no TCP connection to a database server on %s", e.Path, e.Looked)
	}
	return fmt.Sprintf("%s holds connections to several servers (%s): replay one at a time", e.Path, strings.Join(e.Servers, ", "))
}
