package replay_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dblat/dblat/internal/replay"
)

// TestRecordingFile: a recording written as it goes reads back whole, connection by
// connection in the order they opened; it is its owner's only; a file cut short reads up
// to the cut; a file that is not a recording says so.
func TestRecordingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.rec")
	tape, err := replay.CreateFile(path, replay.Header{Source: "proxy", Upstream: "127.0.0.1:5432"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := tape.Open(nil), tape.Open(nil)
	b.Chunk(true, []byte("second's start"), 90)
	a.Chunk(true, []byte("first's query"), 100)
	a.Chunk(false, []byte("first's answer"), 150)
	b.Close(200, "PostgreSQL")
	a.Close(300, "PostgreSQL")
	if err := tape.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v, want 0600", fi.Mode(), err)
	}
	rec, err := replay.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Header.Upstream != "127.0.0.1:5432" || rec.Header.Warning == "" || len(rec.Conns) != 2 {
		t.Fatalf("read: %+v", rec)
	}
	second, first := rec.Conns[0], rec.Conns[1]
	if second.ID != 1 || second.Opened() != 90 || second.Closed != 200 || len(second.Chunks) != 1 {
		t.Errorf("the connection that showed bytes first: %+v", second)
	}
	if first.Protocol != "PostgreSQL" || len(first.Chunks) != 2 || first.Chunks[1].ToServer ||
		string(first.Chunks[1].Data) != "first's answer" || first.Chunks[1].At != 150 {
		t.Errorf("the other: %+v", first)
	}
	if up, down := rec.Bytes(); up != int64(len("second's start")+len("first's query")) || down != int64(len("first's answer")) {
		t.Errorf("bytes %d up, %d down", up, down)
	}

	raw, _ := os.ReadFile(path)
	cut, err := replay.Read(bytes.NewReader(raw[:len(raw)-20]))
	if err != nil || len(cut.Conns) == 0 {
		t.Errorf("a recording cut short: %v, %+v", err, cut)
	}
	if _, err := replay.Read(bytes.NewReader([]byte("SELECT 1;\n"))); !errors.Is(err, replay.ErrNotRecording) {
		t.Errorf("a script read as a recording: %v", err)
	}
}
