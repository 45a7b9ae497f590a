package firebird

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dblat/dblat/internal/managed"
)

// TestKnownKeysCoverInstalledConf checks the compiled-in key list against the keys the
// installed Firebird documents in its default firebird.conf ("#Key = default").
func TestKnownKeysCoverInstalledConf(t *testing.T) {
	f, err := os.Open("/etc/firebird/3.0/firebird.conf")
	if err != nil {
		t.Skipf("no installed firebird.conf: %v", err)
	}
	defer f.Close()
	known := map[string]bool{}
	for _, k := range knownKeys {
		known[k] = true
	}
	documented := regexp.MustCompile(`^#\s*([A-Za-z0-9]+)\s*=`)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if m := documented.FindStringSubmatch(sc.Text()); m != nil {
			n++
			if !known[m[1]] {
				t.Errorf("firebird.conf documents %s, which knownKeys lacks", m[1])
			}
		}
	}
	if n < 50 {
		t.Errorf("found only %d documented keys: format changed?", n)
	}
}

func TestCheckSettings(t *testing.T) {
	cfg, err := checkSettings(map[string]string{"servermode": "multiprocess", "defaultdbcachepages": " 4096 ",
		"PageSize": "16384", "forcedwrites": "OFF", "WireCrypt": "Disabled"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.mode != "Classic" || cfg.pageSize != 16384 || cfg.forcedWrites != "off" ||
		cfg.conf["DefaultDbCachePages"] != "4096" || cfg.conf["ServerMode"] != "Classic" || len(cfg.conf) != 3 {
		t.Errorf("checkSettings = %+v", cfg)
	}
	conf := confFile(&managed.Instance{Port: 4321, Dir: "/srv/i"}, cfg)
	for _, want := range []string{"RemoteServicePort = 4321\n", "RemoteBindAddress = 127.0.0.1\n",
		"SecurityDatabase = /srv/i/security3.fdb\n", "ServerMode = Classic\n", "DefaultDbCachePages = 4096\n",
		"WireCrypt = Disabled\n", "AuthServer = Srp256, Srp\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("firebird.conf lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "PageSize") || strings.Contains(conf, "ForcedWrites") || strings.Count(conf, "WireCrypt =") != 1 {
		t.Errorf("dblat's own settings or duplicates in firebird.conf:\n%s", conf)
	}
	if cfg, _ := checkSettings(nil); cfg.mode != "Super" || cfg.pageSize != 0 {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestBlockSQL(t *testing.T) {
	got := blockSQL("warehouse", []string{"w_id", `"Mixed"`}, 2)
	want := `EXECUTE BLOCK (P0 TYPE OF COLUMN "WAREHOUSE"."W_ID" = ?, P1 TYPE OF COLUMN "WAREHOUSE"."Mixed" = ?, ` +
		`P2 TYPE OF COLUMN "WAREHOUSE"."W_ID" = ?, P3 TYPE OF COLUMN "WAREHOUSE"."Mixed" = ?) AS BEGIN
INSERT INTO "WAREHOUSE" ("W_ID", "Mixed") VALUES (:P0, :P1);
INSERT INTO "WAREHOUSE" ("W_ID", "Mixed") VALUES (:P2, :P3);
END`
	if got != want {
		t.Errorf("blockSQL =\n%s\nwant\n%s", got, want)
	}
	for ncols, want := range map[int]int{1: 255, 3: 170, 21: 24, 600: 1} {
		if got := blockRows(ncols); got != want {
			t.Errorf("blockRows(%d) = %d, want %d", ncols, got, want)
		}
	}
}

func TestListenAddrsFindsLoopback(t *testing.T) {
	port, err := managed.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if addrs, err := listenAddrs(port); err != nil || len(addrs) != 0 {
		t.Fatalf("free port %d: %v %v", port, addrs, err)
	}
	l, err := listenLoopback(port)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addrs, err := listenAddrs(port)
	if err != nil || len(addrs) != 1 || addrs[0].String() != "127.0.0.1" {
		t.Errorf("listening on 127.0.0.1:%d, read back %v %v", port, addrs, err)
	}
}
