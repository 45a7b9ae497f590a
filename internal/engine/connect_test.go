package engine_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dblat/dblat/internal/engine"
	_ "github.com/dblat/dblat/internal/engine/all"
)

// TestConnectTimeout: a server that takes the connection and never answers (the kernel
// completes the TCP handshake, nothing reads) is given up on after
// OpenOptions.ConnectTimeout, on every engine, by whichever knob its driver has.
func TestConnectTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	addr := ln.Addr().String()
	for name, dsn := range map[string]string{
		"postgres": "postgres://u:pw@" + addr + "/db?sslmode=disable",
		"mariadb":  "mysql://u:pw@" + addr + "/db",
		"firebird": "firebird://sysdba:pw@" + addr + "/db.fdb",
	} {
		e, err := engine.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		// The context bounds a driver that would ignore the timeout, so that the test
		// fails rather than hangs.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		db, err := e.Open(ctx, dsn, engine.OpenOptions{ConnectTimeout: 300 * time.Millisecond})
		took := time.Since(start)
		cancel()
		if err == nil {
			db.Close()
			t.Errorf("%s: connected to a server that never answers", name)
			continue
		}
		if !strings.Contains(err.Error(), "cannot connect") || took > 10*time.Second {
			t.Errorf("%s: gave up after %v with %v; want the connect timeout's error within seconds", name, took, err)
		}
	}
}
