package capture

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// FileStats is what ReadFile read.
type FileStats struct {
	// Format is "pcap" or "pcapng"; Packets and Bytes what was read (captured lengths).
	Format  string
	Packets int64
	Bytes   int64
	// Truncated reports that the file ended inside a packet (a capture still being
	// written, or cut short); what came before it was read.
	Truncated bool
}

// pcapng's section header block type, the first four bytes of a pcapng file.
const pcapngMagic = 0x0a0d0d0a

// ReadFile shows every packet of a pcap or pcapng file to f, in the file's order, then
// closes f (every connection ends: see Follower.Close). ctx stops it between packets.
func ReadFile(ctx context.Context, path string, f *Follower) (FileStats, error) {
	fh, err := os.Open(path)
	if err != nil {
		return FileStats{}, err
	}
	defer fh.Close()
	st, err := Read(ctx, fh, f)
	if err != nil {
		return st, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// Read is ReadFile from a reader.
func Read(ctx context.Context, r io.Reader, f *Follower) (FileStats, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, err := br.Peek(4)
	if err != nil {
		return FileStats{}, errors.New("not a capture file: it is shorter than a pcap header")
	}
	var st FileStats
	type source interface {
		ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var src source
	var linkOf func(gopacket.CaptureInfo) layers.LinkType
	if binary.LittleEndian.Uint32(head) == pcapngMagic {
		st.Format = "pcapng"
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{})
		if err != nil {
			return st, fmt.Errorf("not a readable pcapng file: %w", err)
		}
		src = ng
		first := ng.LinkType()
		linkOf = func(ci gopacket.CaptureInfo) layers.LinkType {
			if ci.InterfaceIndex > 0 {
				if i, err := ng.Interface(ci.InterfaceIndex); err == nil {
					return i.LinkType
				}
			}
			return first
		}
	} else {
		st.Format = "pcap"
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return st, fmt.Errorf("not a pcap or pcapng file: %w", err)
		}
		src = pr
		link := pr.LinkType()
		linkOf = func(gopacket.CaptureInfo) layers.LinkType { return link }
	}
	for {
		if st.Packets&1023 == 0 && ctx.Err() != nil {
			f.Close()
			return st, ctx.Err()
		}
		data, ci, err := src.ZeroCopyReadPacketData()
		if err != nil {
			f.Close()
			switch {
			case errors.Is(err, io.EOF):
				return st, nil
			case errors.Is(err, io.ErrUnexpectedEOF):
				st.Truncated = true
				return st, nil
			}
			return st, err
		}
		st.Packets++
		st.Bytes += int64(len(data))
		f.Packet(data, ci, linkOf(ci))
	}
}
