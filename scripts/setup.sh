#!/usr/bin/env bash
# Installs what dblat, its tests and its benchmarks need on a fresh Debian/Ubuntu machine,
# idempotently: the PostgreSQL, MariaDB and Firebird 3 server binaries (their system services
# are never started), mariadb-backup, Chromium, socat, tcpdump, gcc and libmariadb-dev, an unprivileged
# "dblat" user for managed servers when run as root, the Go modules, and the pinned golangci-lint (in bin/).
set -euo pipefail
cd "$(dirname "$0")/.."

have_postgres() {
	ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && return 0
	local d
	d=$(pg_config --bindir 2>/dev/null) && [ -x "$d/postgres" ]
}

need_pkgs=()
have_postgres || need_pkgs+=(postgresql)
[ -x /usr/sbin/mariadbd ] || command -v mariadbd >/dev/null 2>&1 || need_pkgs+=(mariadb-server)
[ -x /usr/sbin/firebird ] || need_pkgs+=(firebird3.0-server)
command -v isql-fb >/dev/null 2>&1 || need_pkgs+=(firebird3.0-utils)
# A backup during a run's window (dblat run --during backup@30s) on MariaDB runs mariadb-backup;
# PostgreSQL's pg_basebackup and Firebird's nbackup come with their servers' packages.
command -v mariadb-backup >/dev/null 2>&1 || need_pkgs+=(mariadb-backup)
# The report tests render HTML in a real headless browser.
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
# BenchmarkLinkOverheadPgbench (make bench) runs pgbench through socat, the floor any proxy costs.
command -v socat >/dev/null 2>&1 || need_pkgs+=(socat)
# The capture tests and benchmarks record real clients' traffic with tcpdump (dblat observe --pcap).
command -v tcpdump >/dev/null 2>&1 || need_pkgs+=(tcpdump)
# The proxy-observe tests build a C client on libmariadb (MariaDB Connector/C) with gcc: the
# only client here whose prepared statements negotiate metadata caching without
# CLIENT_DEPRECATE_EOF, as C applications on libmariadb do.
command -v gcc >/dev/null 2>&1 || need_pkgs+=(gcc)
command -v mariadb_config >/dev/null 2>&1 || need_pkgs+=(libmariadb-dev)

if [ ${#need_pkgs[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: missing packages: ${need_pkgs[*]}; run as root or: sudo apt-get install ${need_pkgs[*]}" >&2
		exit 1
	fi
	echo "setup: installing ${need_pkgs[*]} (system services are not started)"
	# policy-rc.d 101 tells invoke-rc.d not to start services during installation.
	policy=/usr/sbin/policy-rc.d
	created_policy=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod +x "$policy"
		created_policy=1
	fi
	trap '[ "$created_policy" = 1 ] && rm -f "$policy"' EXIT
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# Database servers refuse to run as root; managed servers run as this user then.
if [ "$(id -u)" -eq 0 ] && ! id dblat >/dev/null 2>&1; then
	useradd --system --no-create-home --shell /usr/sbin/nologin dblat
	echo "setup: created system user dblat for managed servers"
fi

go mod download

# The linter `make lint` (and so `make test`) runs, pinned: its findings change between
# versions. Built from the Go module proxy into bin/ once, and again when the pin moves.
lint_version=v2.15.0
if ! bin/golangci-lint version 2>/dev/null | grep -q "version ${lint_version#v} "; then
	echo "setup: installing golangci-lint ${lint_version} into bin/"
	GOBIN="$PWD/bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${lint_version}"
fi
