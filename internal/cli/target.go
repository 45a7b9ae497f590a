package cli

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/dblat/dblat/internal/engine"
	"github.com/dblat/dblat/internal/engine/mariadb"
	"github.com/dblat/dblat/internal/managed"
	"github.com/dblat/dblat/internal/workload"
)

// target is a database to benchmark: a managed server by name, or an external DSN.
type target struct {
	engine engine.Engine
	dsn    string
	// label names the target in output and results: the server name or the redacted DSN.
	label   string
	managed *managed.Instance
}

// schemes maps DSN URL schemes to engine names.
var schemes = map[string]string{"postgres": "postgres", "postgresql": "postgres", "mysql": "mariadb", "mariadb": "mariadb",
	"firebird": "firebird"}

// resolveTarget interprets --target.
func (a *app) resolveTarget(spec string) (*target, error) {
	if spec == "" {
		return nil, usagef("--target is required: a managed server's name (see `dblat server list`) or a DSN such as postgres://user@host:5432/db or mysql://user:pw@host:3306/db")
	}
	if strings.Contains(spec, "://") || strings.Contains(spec, "=") {
		u, err := url.Parse(spec)
		scheme := "postgres" // key=value DSNs are libpq's
		if err == nil && u.Scheme != "" {
			scheme = u.Scheme
		}
		name, ok := schemes[scheme]
		if !ok {
			return nil, usagef("--target: unknown DSN scheme %q (known: postgres://, mysql://, mariadb://, firebird://)", scheme)
		}
		e, err := engine.Lookup(name)
		if err != nil {
			return nil, err
		}
		return &target{engine: e, dsn: spec, label: e.Redact(spec)}, nil
	}
	inst, err := a.registry().Load(spec)
	if err != nil {
		return nil, err
	}
	if inst.PID == 0 {
		return nil, usagef("server %s is not running: start it with `dblat server start %s --name %s`", spec, inst.Engine, spec)
	}
	e, err := engine.Lookup(inst.Engine)
	if err != nil {
		return nil, err
	}
	return &target{engine: e, dsn: inst.DSN, label: spec, managed: inst}, nil
}

// open connects to the target.
func (t *target) open(ctx context.Context, opts engine.OpenOptions) (workload.Target, error) {
	db, err := t.engine.Open(ctx, t.dsn, opts)
	if err != nil {
		return workload.Target{}, fmt.Errorf("target %s: %w", t.label, err)
	}
	return workload.Target{Engine: t.engine, DB: db}, nil
}

// closeDB closes a target's pool.
func closeDB(t workload.Target) {
	if t.DB != nil {
		_ = t.DB.Close()
	}
}

// applyTransport points the target at its Unix socket when transport is "unix".
func (t *target) applyTransport(transport string, viaLink bool) error {
	switch transport {
	case "", "tcp":
		return nil
	case "unix":
	default:
		return usagef("--transport %q: use tcp or unix", transport)
	}
	if viaLink {
		return usagef("--transport unix cannot go through the latency link, which is TCP: drop --rtt, or use --transport tcp")
	}
	if t.managed == nil {
		return usagef("--transport unix needs a managed server (for an external server, put the socket in the DSN)")
	}
	inst := t.managed
	switch inst.Engine {
	case "postgres":
		t.dsn = fmt.Sprintf("postgres://dblat@/dblat?host=%s&port=%d&sslmode=disable", url.QueryEscape(filepath.Join(inst.Dir, "run")), inst.Port)
	case "mariadb":
		t.dsn = mariadb.SocketDSN(inst)
	default:
		return usagef("--transport unix: a %s server listens on TCP only", inst.Engine)
	}
	return nil
}

// setDSNParam adds a query parameter to a URL DSN (MariaDB/MySQL only: the only engine whose
// driver options are asked for as run options).
func (t *target) setDSNParam(key, value string) error {
	if t.engine.Name() != "mariadb" {
		return usagef("--interpolate-params is a MariaDB/MySQL driver option; %s has no such option", t.engine.Name())
	}
	sep := "?"
	if strings.Contains(t.dsn, "?") {
		sep = "&"
	}
	t.dsn += sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
	return nil
}
