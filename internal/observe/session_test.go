package observe_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/latency"
	"github.com/dblat/dblat/internal/observe"
	"github.com/dblat/dblat/internal/wire"
	"github.com/dblat/dblat/internal/wire/wiretest"
	"github.com/dblat/dblat/internal/workload/script"
)

// replaySource is a source of a Session other than the proxy, as a packet capture would
// be: it shows captured conversations to the Session's Observer, and its connections end
// when it is closed.
type replaySource struct {
	conns  []latency.ConnObserver
	ends   []int64
	closed int
}

func replay(obs latency.Observer, caps ...wiretest.Capture) *replaySource {
	src := &replaySource{}
	for _, c := range caps {
		co := obs.Open()
		for _, ch := range c {
			co.Data(ch.Dir == wire.Client, ch.Data, ch.At)
		}
		src.conns = append(src.conns, co)
		src.ends = append(src.ends, c[len(c)-1].At+1)
	}
	return src
}

func (s *replaySource) Close() error {
	s.closed++
	for i, co := range s.conns {
		co.Close(s.ends[i])
	}
	return nil
}

// TestSessionOtherSource: a Session fed by a source that is not the proxy counts what the
// source showed; a snapshot writes the observation and the recording (mode 0600) without
// ending anything; Stop closes the source, writes both again, and takes no more sources.
func TestSessionOtherSource(t *testing.T) {
	c, err := wiretest.ReadFile("../engine/postgres/testdata/wire/pgbench-simple.cap")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, rec := filepath.Join(dir, "o.json"), filepath.Join(dir, "o.sql")
	s := observe.NewSession(observe.SessionConfig{Config: observe.Config{Protocols: engine.WireProtocols(), Upstream: "db:5432"},
		File: file, Script: rec})
	src := replay(s.Observer(), c, c)
	if err := s.Attach(src); err != nil {
		t.Fatal(err)
	}
	mid, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if src.closed != 0 || mid.File != file || mid.Script != rec || mid.Shapes == 0 || mid.NotRecorded != nil {
		t.Errorf("snapshot: source closed %d times, %+v", src.closed, mid)
	}
	if s.Transactions() == 0 || s.Transactions() != mid.Observation.Transactions {
		t.Errorf("%d transactions so far, the snapshot says %d", s.Transactions(), mid.Observation.Transactions)
	}
	last, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if src.closed != 1 || last.Observation.Connections != 2 || last.Observation.Transactions < mid.Observation.Transactions {
		t.Errorf("stop: source closed %d times, %d connections, %d transactions (%d before)", src.closed,
			last.Observation.Connections, last.Observation.Transactions, mid.Observation.Transactions)
	}
	o, err := observe.ReadFile(file)
	if err != nil || o.Transactions != last.Observation.Transactions || o.Upstream != "db:5432" {
		t.Errorf("the file: %v, %+v", err, o)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := script.Parse(rec, b); err != nil {
		t.Errorf("the recording does not parse: %v\n%s", err, b)
	}
	if fi, err := os.Stat(rec); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the recording's mode: %v %v, want 0600", fi.Mode(), err)
	}
	late := replay(s.Observer())
	if err := s.Attach(late); err == nil || late.closed != 1 {
		t.Errorf("a source attached after Stop: %v, closed %d times", err, late.closed)
	}
}

// TestSessionWriteError: a file that cannot be written is a *WriteError naming it, and the
// snapshot is handed back all the same; a session that has recorded nothing says so and
// writes the observation.
func TestSessionWriteError(t *testing.T) {
	dir := t.TempDir()
	s := observe.NewSession(observe.SessionConfig{File: filepath.Join(dir, "none", "o.json")})
	snap, err := s.Snapshot()
	var we *observe.WriteError
	if !errors.As(err, &we) || we.Recording || snap == nil || snap.Observation == nil || snap.File != "" {
		t.Errorf("unwritable observation: %v, %+v", err, snap)
	}
	file := filepath.Join(dir, "o.json")
	s = observe.NewSession(observe.SessionConfig{File: file, Script: filepath.Join(dir, "o.sql")})
	snap, err = s.Stop()
	if err != nil || snap.File != file || snap.Script != "" || snap.NotRecorded == nil {
		t.Errorf("nothing recorded: %v, %+v", err, snap)
	}
	if _, err := os.Stat(filepath.Join(dir, "o.sql")); !os.IsNotExist(err) {
		t.Errorf("a recording of nothing was written: %v", err)
	}
}

// TestSessionListen: through the link the Session starts, a PostgreSQL client's
// transactions are followed; Stop closes the link, ending the connection the client left
// open, whose transactions are then in the observation. A link whose delays differ from
// the session's is refused.
func TestSessionListen(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := observe.NewSession(observe.SessionConfig{Config: observe.Config{Protocols: engine.WireProtocols(), Upstream: u.Host,
		Up: 500 * time.Microsecond, Down: 500 * time.Microsecond}})
	if _, err := s.Listen(ctx, "", latency.Config{RTT: 2 * time.Millisecond}); err == nil {
		t.Fatal("a link adding 2ms was accepted by a session observing at 1ms")
	}
	link, err := s.Listen(ctx, "", latency.Config{RTT: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	v := *u
	v.Host = link.Addr()
	conns := pgtest.Conns(t, v.String(), 2)
	for _, c := range conns {
		for range 5 {
			for _, sql := range []string{"BEGIN", "SELECT 1", "COMMIT"} {
				if _, err := c.Exec(ctx, sql).ReadAll(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	conns[1].Close(ctx)
	snap, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	o := snap.Observation
	if o.Transactions != 10 || o.Connections != 2 || o.Protocol != "PostgreSQL" || o.RTTNs != int64(time.Millisecond) {
		t.Errorf("observed %d transactions on %d connections in %q at %v, want 10 on 2 in PostgreSQL at 1ms",
			o.Transactions, o.Connections, o.Protocol, time.Duration(o.RTTNs))
	}
	if st := link.Stats(); st.Active != 0 {
		t.Errorf("%d connections still open after Stop", st.Active)
	}
}
