package wire

import "errors"

// Framing is what a Framer needs to know about a protocol whose messages carry their
// length in a fixed-size header (PostgreSQL's type and length, MySQL's length and
// sequence number).
type Framing interface {
	// HeaderLen returns the size of the next message's header.
	HeaderLen() int
	// Body reads a header and returns the length of the body that follows it and how much
	// of the body the decoder wants to see (0 <= keep <= body); the rest is skipped without
	// being kept. An error stops the framing.
	Body(header []byte) (body, keep int, err error)
	// Message handles a message once all of it has passed: its header and the first keep
	// bytes of its body. Both are valid during the call only. An error stops the framing.
	Message(header, body []byte) error
}

// Framer cuts a stream of length-prefixed messages out of the chunks it is fed. A message
// that arrives whole within one chunk is handed over in place, without a copy; only a
// message split across chunks is assembled in the Framer's buffer (up to its keep bytes),
// which it reuses. The zero value is ready.
type Framer struct {
	hdr    []byte // header assembled across chunks
	body   []byte // kept body assembled across chunks
	inBody bool
	left   int // body bytes still to come
	keep   int // of those, bytes still to keep
}

// errFramer reports a Framing that broke its contract.
var errFramer = errors.New("wire: a message body of negative length")

// Partial reports whether the stream so far ends inside a message.
func (f *Framer) Partial() bool { return len(f.hdr) > 0 || f.inBody }

// Feed cuts b into messages for fr. After an error the Framer must not be fed again.
func (f *Framer) Feed(b []byte, fr Framing) error {
	for len(b) > 0 {
		if f.inBody {
			n := min(f.left, len(b))
			if k := min(f.keep, n); k > 0 {
				f.body = append(f.body, b[:k]...)
				f.keep -= k
			}
			f.left -= n
			b = b[n:]
			if f.left > 0 {
				return nil
			}
			f.inBody = false
			err := fr.Message(f.hdr, f.body)
			f.hdr, f.body = f.hdr[:0], f.body[:0]
			if err != nil {
				return err
			}
			continue
		}
		hl := fr.HeaderLen()
		var h []byte
		if len(f.hdr) == 0 && len(b) >= hl {
			h, b = b[:hl], b[hl:]
		} else {
			n := min(hl-len(f.hdr), len(b))
			f.hdr = append(f.hdr, b[:n]...)
			b = b[n:]
			if len(f.hdr) < hl {
				return nil
			}
			h = f.hdr
		}
		body, keep, err := fr.Body(h)
		if err != nil {
			return err
		}
		if body < 0 || keep < 0 {
			return errFramer
		}
		keep = min(keep, body)
		if len(f.hdr) == 0 && len(b) >= body {
			// The whole message is in this chunk: no copy.
			if err := fr.Message(h, b[:keep]); err != nil {
				return err
			}
			b = b[body:]
			continue
		}
		if len(f.hdr) == 0 {
			f.hdr = append(f.hdr, h...)
		}
		f.inBody, f.left, f.keep = true, body, keep
		f.body = f.body[:0]
		if body == 0 {
			f.inBody = false
			err := fr.Message(f.hdr, f.body)
			f.hdr = f.hdr[:0]
			if err != nil {
				return err
			}
		}
	}
	return nil
}
