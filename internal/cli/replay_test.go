package cli_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/capture/capturetest"
	"github.com/dblat/dblat/internal/engine/postgres"
	"github.com/dblat/dblat/internal/engine/postgres/pgtest"
	"github.com/dblat/dblat/internal/replay"
)

// TestReplayCapture: pgbench in the extended and prepared protocols (named statements,
// portals) through `dblat proxy --capture`, and tcpdump's capture of it, replayed by `dblat
// replay` on a restored copy: every transaction, the same round trips, no divergence; the
// recording is its owner's and says what it holds; -o writes the result's fields; the
// replay is stored as a run that results show and report read; bad flags get one line.
func TestReplayCapture(t *testing.T) {
	capturetest.Need(t, pgtest.Required(), "pgbench", "tcpdump")
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(u.Host, ":")
	db := strings.TrimPrefix(u.Path, "/")
	tool(t, "pgbench", "-i", "-q", "-s", "1", "-h", host, "-p", port, "-U", "dblat", db)
	ctx := context.Background()
	if err := (postgres.Engine{}).SavePristine(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	var ids []string
	for _, mode := range []string{"extended", "prepared"} {
		t.Run(mode, func(t *testing.T) {
			recFile := filepath.Join(e.dir, mode+".rec")
			stopDump := capturetest.Tcpdump(t, "lo", "tcp port "+port)
			p := e.startProxy(u.Host, "--rtt", "0", "--capture", recFile)
			tool(t, "pgbench", "-n", "-c", "4", "-t", "30", "-M", mode, "-h", "127.0.0.1", "-p", p.port(), "-U", "dblat", db)
			p.stop(t)
			pcap := stopDump(u.Host)
			if !strings.Contains(p.stderr.String(), "WITH the application's data") {
				t.Errorf("the proxy does not say the recording holds the application's data:\n%s", p.stderr.String())
			}
			if fi, err := os.Stat(recFile); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("the recording: %v, want mode 0600", err)
			}
			rec, err := replay.ReadFile(recFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Conns) != 5 || // pgbench's 4 clients and its first connection, which counts the branches
				!strings.Contains(rec.Header.Warning, "application's statements and data") {
				t.Errorf("recording: %d connections, warning %q", len(rec.Conns), rec.Header.Warning)
			}

			// dblat observe writes the same recording from the packet capture.
			pcapRec := filepath.Join(e.dir, mode+"-pcap.rec")
			code, _, stderr := e.run("observe", "--pcap", pcap, "--server", u.Host, "--capture", pcapRec, "--no-store")
			if code != 0 || !strings.Contains(stderr, "WITH the application's data") {
				t.Fatalf("dblat observe --capture: exit %d\n%s", code, stderr)
			}
			if fi, err := os.Stat(pcapRec); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("the capture's recording: %v, want mode 0600", err)
			}
			if prec, err := replay.ReadFile(pcapRec); err != nil || len(prec.Conns) != 5 || prec.Header.Source != "pcap" {
				t.Errorf("the capture's recording: %v, %+v", err, prec)
			}

			for _, src := range [][]string{{"--recording", recFile}, {"--recording", pcapRec}, {"--pcap", pcap, "--server", u.Host}} {
				if err := (postgres.Engine{}).RestorePristine(ctx, dsn); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(e.dir, mode+"-replay.json")
				code, stdout, stderr := e.run(append(append([]string{"replay"}, src...), "--target", dsn, "--rtt", "0", "--fast", "--order", "commits", "-o", out)...)
				if code != 0 {
					t.Fatalf("dblat replay %v: exit %d\n%s\n%s", src, code, stdout, stderr)
				}
				if !strings.Contains(stderr, "it assumes") || !strings.Contains(stdout, "0 divergences") {
					t.Errorf("dblat replay %v:\n%s\n%s", src, stdout, stderr)
				}
				var res map[string]any
				raw, _ := os.ReadFile(out)
				if err := json.Unmarshal(raw, &res); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"transactions", "divergences", "duration_s", "latency_ms_mean", "shapes"} {
					if _, ok := res[k]; !ok {
						t.Errorf("-o has no %q", k)
					}
				}
				if res["transactions"].(float64) < 120 || res["transactions"] != res["capture_transactions"] || res["divergences"].(float64) != 0 {
					t.Errorf("replay %v: %v transactions of the capture's %v, %v divergences", src, res["transactions"], res["capture_transactions"], res["divergences"])
				}
				for _, s := range res["shapes"].([]any) {
					s := s.(map[string]any)
					c, ok := s["capture"].(map[string]any)
					if !ok || c["round_trips_mean"] != s["round_trips_mean"] || c["count"] != s["count"] {
						t.Errorf("shape %v: replay %v round trips, %v transactions; capture %v", s["shape"], s["round_trips_mean"], s["count"], c)
					}
				}
				if regexp.MustCompile(`aid = \d`).Match(raw) {
					t.Errorf("the result holds values")
				}
				id := regexp.MustCompile(`stored as run (\d+)`).FindStringSubmatch(stderr)
				if id == nil {
					t.Fatalf("not stored:\n%s", stderr)
				}
				if out := e.must("results", "show", id[1]); !strings.Contains(out, "observed through dblat replay") {
					t.Errorf("results show:\n%s", out)
				}
				if out := e.must("report", id[1]); !strings.Contains(out, "replayed by dblat replay") || !strings.Contains(out, "Replayed from a capture with no added RTT") {
					t.Errorf("report:\n%s", out)
				}
				ids = append(ids, id[1])
			}
		})
	}
	// Two replays against each other: side by side in a report, figure by figure in a diff.
	if len(ids) >= 2 {
		if out := e.must("report", ids[0]+","+ids[1]); !strings.Contains(out, "Replays side by side") {
			t.Errorf("report of two replays:\n%s", out)
		}
		if out := e.must("results", "diff", ids[0], ids[1]); !strings.Contains(out, "round trips per transaction") {
			t.Errorf("results diff of two replays:\n%s", out)
		}
	}
	e.fails(2, []string{"--pcap", "--recording"}, "replay", "--target", dsn)
	e.fails(2, []string{"--target is required"}, "replay", "--recording", "x.rec")
	e.fails(2, []string{"--speed"}, "replay", "--recording", "x.rec", "--target", dsn, "--speed", "0")
	e.fails(2, []string{"--order", "commits or none"}, "replay", "--recording", "x.rec", "--target", dsn, "--order", "scn")
	notRec := filepath.Join(e.dir, "not.rec")
	if err := os.WriteFile(notRec, []byte("SELECT 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.fails(2, []string{"not a dblat recording"}, "replay", "--recording", notRec, "--target", dsn)
	e.fails(2, []string{"--restore", "not a managed server"}, "replay", "--recording", filepath.Join(e.dir, "extended.rec"), "--target", dsn, "--restore")
}
