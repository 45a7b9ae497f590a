#!/usr/bin/env bash
# Installs the client libraries of dblat's client matrix (clients/), idempotently, under a
# cache directory, each with its registry's ordinary client and default configuration:
#
#   CACHE/python        a venv with clients/python/requirements.txt
#   CACHE/node          node_modules from clients/node/package.json and its lock (npm ci)
#   CACHE/m2            Maven's local repository; CACHE/java/lib the JDBC drivers' jars
#
# CACHE is $DBLAT_CLIENTS_CACHE, by default ${XDG_CACHE_HOME:-~/.cache}/dblat-clients. Each
# part is installed only when missing or when its manifest changed (a stamp holds the
# manifest's checksum). The system packages the clients need (python3-venv, nodejs/npm, a JDK
# and Maven, libfbclient2 for firebird-driver) are installed with apt-get when missing and
# run as root. Prints the cache directory on its last line.
#
#   scripts/clients.sh            install what is missing
#   scripts/clients.sh --check    exit 1 if anything is missing, install nothing
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
cache=${DBLAT_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dblat-clients}
check=0
[ "${1:-}" = --check ] && check=1

need_pkgs=()
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_pkgs+=(python3-venv)
command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)
command -v javac >/dev/null 2>&1 || need_pkgs+=(default-jdk-headless)
command -v mvn >/dev/null 2>&1 || need_pkgs+=(maven)
ldconfig -p 2>/dev/null | grep 'libfbclient\.so\.2' >/dev/null || need_pkgs+=(libfbclient2)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	if [ $check = 1 ]; then echo "clients: missing packages: ${need_pkgs[*]}" >&2; exit 1; fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "clients: missing packages: ${need_pkgs[*]}; run as root or: sudo apt-get install ${need_pkgs[*]}" >&2
		exit 1
	fi
	echo "clients: installing ${need_pkgs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

mkdir -p "$cache"
# stale PART FILE...: true when PART's stamp does not hold the checksum of FILE...
stale() {
	local part=$1
	shift
	local sum
	sum=$(cat "$@" | sha256sum | cut -d' ' -f1)
	[ "$(cat "$cache/$part.stamp" 2>/dev/null)" != "$sum" ]
}
stamp() {
	local part=$1
	shift
	cat "$@" | sha256sum | cut -d' ' -f1 >"$cache/$part.stamp"
}
missing=0

if stale python clients/python/requirements.txt; then
	missing=1
	if [ $check = 0 ]; then
		echo "clients: Python venv in $cache/python"
		rm -rf "$cache/python"
		python3 -m venv "$cache/python"
		"$cache/python/bin/pip" install -q --disable-pip-version-check -r clients/python/requirements.txt
		stamp python clients/python/requirements.txt
	fi
fi

if stale node clients/node/package.json clients/node/package-lock.json; then
	missing=1
	if [ $check = 0 ]; then
		echo "clients: node_modules in $cache/node"
		rm -rf "$cache/node"
		mkdir -p "$cache/node"
		cp clients/node/package.json clients/node/package-lock.json "$cache/node/"
		(cd "$cache/node" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
		stamp node clients/node/package.json clients/node/package-lock.json
	fi
fi

if stale java clients/java/pom.xml clients/java/JdbcClient.java; then
	missing=1
	if [ $check = 0 ]; then
		echo "clients: JDBC drivers in $cache/java (Maven's repository in $cache/m2)"
		rm -rf "$cache/java"
		mkdir -p "$cache/java/classes"
		if ! mvn -q -B -Dstyle.color=never -f clients/java/pom.xml -Dmaven.repo.local="$cache/m2" \
			dependency:copy-dependencies -DoutputDirectory="$cache/java/lib" >"$cache/mvn.log" 2>&1; then
			cat "$cache/mvn.log" >&2
			exit 1
		fi
		javac -d "$cache/java/classes" -cp "$cache/java/lib/*" clients/java/JdbcClient.java
		stamp java clients/java/pom.xml clients/java/JdbcClient.java
	fi
fi

if [ $check = 1 ] && [ $missing = 1 ]; then
	echo "clients: not installed (or out of date) in $cache: run scripts/clients.sh" >&2
	exit 1
fi
echo "$cache"
