package latency

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestQuickIO checks that a socket's quick reader and writer behave as net.Conn's Read and
// Write do where callers depend on it: a write larger than the socket buffers completes
// (waiting for room), reads return what was written, a deadline fails a read with a
// timeout, the peer's close is io.EOF, and use after Close fails with net.ErrClosed.
func TestQuickIO(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "unix" {
				addr = filepath.Join(t.TempDir(), "s")
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					close(accepted)
					return
				}
				accepted <- c
			}()
			c, err := net.Dial(network, ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			peer := <-accepted
			if peer == nil {
				t.Fatal("accept failed")
			}
			defer peer.Close()
			r, w := quickIO(c)

			// 8 MiB: far more than the socket buffers, so the writer must wait for room.
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19)
			echoed := make(chan error, 1)
			go func() {
				got := make([]byte, len(big))
				if _, err := io.ReadFull(peer, got); err != nil {
					echoed <- err
					return
				}
				_, err := peer.Write(got)
				echoed <- err
			}()
			if n, err := w.Write(big); err != nil || n != len(big) {
				t.Fatalf("Write: %d of %d bytes, %v", n, len(big), err)
			}
			back := make([]byte, len(big))
			if _, err := io.ReadFull(r, back); err != nil {
				t.Fatalf("reading the echo: %v", err)
			}
			if err := <-echoed; err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, big) {
				t.Fatal("the echo differs from what was written")
			}

			if n, err := r.Read(nil); n != 0 || err != nil {
				t.Errorf("Read of nothing: %d, %v; want 0, nil", n, err)
			}
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			var ne net.Error
			if _, err := r.Read(back); !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("Read past its deadline: %v; want a timeout", err)
			}
			_ = c.SetReadDeadline(time.Time{})

			peer.Close()
			if n, err := r.Read(back); n != 0 || err != io.EOF {
				t.Errorf("Read after the peer closed: %d, %v; want 0, io.EOF", n, err)
			}
			c.Close()
			if _, err := w.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Write after Close: %v; want net.ErrClosed", err)
			}
			if _, err := r.Read(back); !errors.Is(err, net.ErrClosed) {
				t.Errorf("Read after Close: %v; want net.ErrClosed", err)
			}
		})
	}
}
