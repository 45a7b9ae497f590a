#!/usr/bin/env bash
# The benchmarks behind the figures dblat's documentation quotes, each in the configuration
# the documentation quotes it in, with where it is quoted and what it is compared against.
#
#   scripts/bench.sh              run every figure below, one after another (hours; run it alone:
#                                 the figures are timings on a machine nothing else should use)
#   scripts/bench.sh NAME...      run those figures only (make bench FIGURE=NAME)
#   scripts/bench.sh --list       list the figures: the command, where it is quoted, the reference
#   scripts/bench.sh --check      check that every figure's -bench regexp names a benchmark of its
#                                 package (go test -list; compiles the test binaries, runs nothing)
#
# A figure belongs here when a doc.go, a doc comment (of a benchmark or of the code it
# measures), README.md or docs/ quotes a number a Benchmark* measures, or a target it is judged
# against. `make bench-all` runs every benchmark once, these and the rest.
# Every benchmark runs with -v, so that its b.Logf tables print in full (without -v the testing
# package keeps only the first lines of a benchmark's log). DBLAT_REQUIRE_SERVERS=1 (the
# default here, as in make test) turns a missing server into a failure rather than a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
export DBLAT_REQUIRE_SERVERS=${DBLAT_REQUIRE_SERVERS:-1}

names=()
declare -A pkg re btime count tmo envs where ref

# fig NAME PACKAGE REGEXP BENCHTIME COUNT TIMEOUT ENV QUOTED-IN REFERENCE
# ENV is VAR=VALUE words, or "" for none. REGEXP selects one top-level benchmark.
fig() {
	local n=$1
	names+=("$n")
	pkg[$n]=$2 re[$n]=$3 btime[$n]=$4 count[$n]=$5 tmo[$n]=$6 envs[$n]=$7 where[$n]=$8 ref[$n]=$9
}

# --- internal/latency: the link on its own, no database -------------------------------------
fig latency-clock ./internal/latency '^BenchmarkClock$' 1x 1 30m "" \
	'internal/latency/doc.go, "Clock" (the table of how late each way of sleeping wakes)' \
	'the table: p50 late at 50 µs-5 ms, time.Sleep and time.Timer 86-1030 µs, timerfd 25.8-67.9 µs, timerfd + spin 0.09-1.41 µs'
fig latency-accuracy ./internal/latency '^BenchmarkAccuracy$' 1x 2 60m "" \
	'internal/latency/doc.go, "Accuracy and cost" (two runs of one earlier session); internal/latency/clock.go (spinner); internal/analysis/credibility.go (RTTTolerance)' \
	'error of the added RTT: p50 within max(2 %, 25 µs), p99 within max(5 %, 150 µs), judged on every row it prints'
fig latency-overhead ./internal/latency '^BenchmarkOverhead$' 1x 2 30m "" \
	'internal/latency/doc.go, "Accuracy and cost"' \
	'a zero-delay proxy costs 14-20 µs of CPU per round trip (linked-cpu-us/rt - direct-cpu-us/rt), as much as client and echo server together'
fig latency-bulk ./internal/latency '^BenchmarkBulk$' 1x 2 30m "" \
	'internal/latency/doc.go, "Accuracy and cost"; internal/latency/pool.go (maxChunk)' \
	'delay=50ms: 495-640 MB/s, 34 MiB heap, bound QueueLimit/delay = 671 MB/s; delay=0: 0.6-1.35 GB/s (1.28-1.35 GB/s with 256 KiB reads)'
fig link-cost ./internal/latency '^BenchmarkLinkCost$' 1x 1 30m "" \
	'docs/link.md, "The link'"'"'s shape" (the data path with the shape'"'"'s fields unset); its doc comment (internal/latency/cost_bench_test.go)' \
	'issue 43: CPU per round trip (cpu-us/rt) and the scheduling of a chunk (due-ns) no more than 1.02× the build before the link'"'"'s shape became fields, the two builds run alternately on one machine'
fig sleeper-lateness ./internal/latency '^BenchmarkSleeperLateness$' 1x 1 30m "" \
	'its doc comment (internal/latency/sleeper_test.go)' \
	'time.Sleep beside it, which Go rounds up to about 1 ms below a millisecond (golang/go#53824)'

# --- the link in front of PostgreSQL ----------------------------------------------------------
fig link-overhead-pgbench ./internal/workload/simple '^BenchmarkLinkOverheadPgbench$' 1x 1 30m "" \
	'internal/latency/doc.go, "Accuracy and cost"; internal/latency/inline.go (Dial); docs/figures.md, "Added RTT" (any loopback proxy halves pgbench -S)' \
	'pgbench -S -c 10 through the link 0.442 and through socat 0.427 of direct, in one run (issue 3 asked ≥ 0.85 of the link)'
fig link-overhead-runner ./internal/workload/simple '^BenchmarkLinkOverheadRunner$' 1x 1 30m "" \
	'internal/latency/doc.go, "Accuracy and cost"; docs/figures.md, "Added RTT" (--rtt 0 costs next to nothing)' \
	'select-only at 10 terminals: in process (Link.Dial) 0.987 of direct, through the proxy (Link.Addr) 0.404'
fig proxy-pgbench-20ms ./internal/workload/simple '^BenchmarkProxyPgbench20ms$' 1x 1 30m "" \
	'its doc comment (internal/workload/simple/link_bench_test.go)' \
	'pgbench -S -c 10 average latency through a 20 ms link: +20 ms within 2 % (19.6-20.4 ms) over direct at the same rate (added-ms-paced), and over direct flat out'
fig select-only-vs-pgbench ./internal/workload/simple '^BenchmarkSelectOnlyVsPgbench$' 1x 1 30m "" \
	'its doc comment (issue 7); internal/workload/simple/doc.go' \
	'dblat select-only at 10 terminals ≥ 0.9 of pgbench -S -M prepared -c 10 -j 2 TPS'
fig link-cpu ./internal/execution '^BenchmarkLinkCPU$' 1x 1 30m "" \
	'internal/latency/doc.go, "Clock" (waking early against spinning, A/B); its doc comment' \
	'doc: lateness p50 at 1 ms 3.5 µs waking early against 23.6 spinning, client CPU 83 against 93 µs/tx, at 10 ms 43 against 90; targets: CPU through the link ≤ 2× direct, TPS at RTT 0 ≥ 0.97 of direct; and the 1 ms run against direct at its own rate (direct paced: waking from idle costs any client)'
fig link-in-run-tpcc ./internal/execution '^BenchmarkLinkInRunTPCC$' 1x 1 30m "" \
	'its doc comment (internal/execution/link_bench_test.go)' \
	'in-run lateness per direction p50 ≤ 15 µs, p99 ≤ 100 µs; calibration within ±25 µs of 1 ms'
fig link-many-terminals ./internal/execution '^BenchmarkLinkManyTerminals$' 1x 1 30m "" \
	'its doc comment (internal/execution/link_bench_test.go)' \
	'2000 terminals at 200 ms: TPS ≥ 0.98 of N/(r + s), client CPU ≤ 25 µs/tx, ≤ 100 KB resident per connection'

fig disturbances ./internal/execution '^BenchmarkDisturbances$' 1x 1 60m "" \
	'its doc comment (issue 41)' \
	'eight 5 s windows on disk: each stall-hit window named; in memory: CV of NOPM over undisturbed runs ≤ 3 %; an injected disk storm and busy loops named in their runs only; ten quiet runs: 0 named'
fig signals-cost ./internal/execution '^BenchmarkSignalsCost$' 1x 1 30m "" \
	'its doc comment (issue 41); internal/signals/doc.go' \
	'client CPU per transaction with the signals sampled ≤ 1.02 × without (TPC-C, 4 terminals, RTT 0)'

# --- what dblat costs, against pgbench -------------------------------------------------------
fig runner-overhead ./internal/runner '^BenchmarkRunnerOverhead$' 1x 1 30m "" \
	'its doc comment (the foundation issue)' \
	'pgbench TPC-B-like, 10 clients, on the same PostgreSQL for as long, side by side: TPS and client CPU per transaction and per round trip'
fig client-cpu ./internal/runner '^BenchmarkClientCPU$' 1x 1 30m "" \
	'its doc comment (issue 26)' \
	'client CPU per round trip against pgbench -S -M prepared -c 4: PostgreSQL ≤ 2×, Firebird ≤ 3×; beside them dblat select-only and a bare pgconn loop on pgbench'"'"'s own statement (a plain Go client of the driver)'
fig openloop-rate ./internal/runner '^BenchmarkOpenLoopRate$' 1x 1 30m "" \
	'its doc comment (internal/runner/openloop_bench_test.go)' \
	'achieved rate within 1 % of the target; schedule lag p99 ≤ 1 ms while unsaturated'
fig openloop-co ./internal/runner '^BenchmarkOpenLoopCoordinatedOmission$' 1x 1 30m "" \
	'its doc comment (internal/runner/openloop_bench_test.go)' \
	'a 1 s stall shows in the open loop'"'"'s response p99 (≥ 1 s), not necessarily in its service p99 or the closed loop'"'"'s'
fig openloop-overload ./internal/runner '^BenchmarkOpenLoopOverload$' 1x 1 30m "" \
	'its doc comment (internal/runner/openloop_bench_test.go)' \
	'at twice the capacity: ends on time, heap flat, skipped and unstarted arrivals counted'
fig script-vs-pgbench ./internal/workload/script '^BenchmarkScriptVsPgbench$' 1x 1 30m "" \
	'its doc comment (issue 23)' \
	'pgbench -n -f at 8 clients: TPS ≥ 0.95, client CPU per transaction ≤ 1.5×, 7 and 1 round trips'
fig predict-pgbench ./internal/observe '^BenchmarkPredictPgbench$' 1x 1 30m "" \
	'its doc comment (issue 24)' \
	'predicted TPS and mean latency of pgbench -N at +5 and +20 ms within 5 % of pgbench'"'"'s through a link'
fig predict-contention ./internal/observe '^BenchmarkPredictContention$' 1x 1 30m "" \
	'its doc comment (issue 24)' \
	'tpcb-like at scale 1: prediction within 10 %, the model blind to the serial section overestimating'
fig observe-cost ./internal/observe '^BenchmarkObserveCost$' 1x 1 30m "" \
	'its doc comment (issue 24)' \
	'the proxy with an observer: CPU per round trip ≤ 1.1× without at one offered rate (and saturated, for comparison), release lateness at 1 ms unchanged'
fig replay-pgbench ./internal/cli '^BenchmarkReplayPgbench$' 1x 1 30m "" \
	'its doc comment (issue 24)' \
	'pgbench tpcb-like, scale 1, 4 clients, at 0 and 5 ms: the same 7 round trips, TPS within 10 %; at RTT 0 a bare pgconn loop of the same statements beside them (a plain Go client of the driver)'
fig replay-sessions-pgbench ./internal/replay '^BenchmarkReplayPgbench$' 1x 1 30m "" \
	'its doc comment (issue 42)' \
	'pgbench tpcb-like, 4 clients, 5 s, captured by tcpdump: replayed at RTT 0 with the same transactions and round trips, 0 divergences, duration within 10 %; --fast at least the capture'"'"'s TPS; at +5 ms the mean latency within 5 % of dblat predict'"'"'s'
fig capture-read ./internal/capture '^BenchmarkReadCapture$' 20x 1 30m "" \
	'its doc comment (issue 37); internal/capture/doc.go' \
	'a tcpdump capture of pgbench -N read into an observation at ≥ 100 MB/s'
fig capture-predict-pgbench ./internal/capture '^BenchmarkCapturePredictPgbench$' 1x 1 30m "" \
	'its doc comment (issue 37)' \
	'pgbench -N, 4 clients, 6 s, captured on lo: its count at 5 round trips; predicted TPS and latency at +20 ms within 5 % of pgbench through the link'
fig capture-predict-mysqlslap ./internal/capture '^BenchmarkCapturePredictMysqlslap$' 1x 1 30m "" \
	'its doc comment (issue 37)' \
	'mysqlslap, 4 clients, captured on lo: its count at 5 round trips; predicted TPS and time per transaction at +20 ms within 5 % of mysqlslap through the link'
fig capture-predict-isql ./internal/capture '^BenchmarkCapturePredictIsql$' 1x 1 30m "" \
	'its doc comment (issue 37)' \
	'4 isql-fb clients (wire encryption off), captured on lo: their count at 9 round trips; predicted TPS and time per transaction at +20 ms within 5 % of the same clients through the link'
fig capture-live ./internal/capture '^BenchmarkLivePgbenchSelect$' 1x 1 30m "" \
	'its doc comment (issue 37)' \
	'pgbench -S at full speed on lo, captured live: every transaction followed, the kernel'"'"'s drop count reported'
fig agents ./internal/cli '^BenchmarkAgents$' 1x 1 30m "" \
	'its doc comment (issue 15)' \
	'select-only at 12 terminals in one process, beside 3 agents × 4: start skew, throughput ratio'

# --- TPC-C -----------------------------------------------------------------------------------
fig tpcc-modes ./internal/workload/tpcc '^BenchmarkModes$' 1x 1 30m "" \
	'internal/workload/tpcc/doc.go, "Transactions" (37 round trips); docs/workloads.md (New-Order in 37, 2 or 1 round trips)' \
	'round trips per New-Order (RT/NO) on PostgreSQL: client 37, batched 2, procedure 1 (Firebird'"'"'s procedure 3)'
fig tpcc-load4 ./internal/workload/tpcc '^BenchmarkLoad4Warehouses$' 1x 1 30m "" \
	'its doc comment (internal/workload/tpcc/bench_test.go)' \
	'go-tpc'"'"'s loader: about 22 warehouses/min (4 warehouses in 11 s, 4 threads, 2 cores)'

# --- Firebird --------------------------------------------------------------------------------
fig firebird-txparams ./internal/engine/firebird '^BenchmarkTxParams$' 1x 1 2h \
	'DBLAT_TXPARAMS_ARCHS=Super,SuperClassic DBLAT_TXPARAMS_ROUNDS=2' \
	'internal/engine/firebird/doc.go, "Transaction parameters" (Super and SuperClassic: medians of 2 rounds)' \
	'the table: at 50 terminals conflicts 32 % with wait,rec_version against 4.0 % (Super) and 2.1 % (SuperClassic) with wait,no_rec_version'
fig firebird-txparams-classic ./internal/engine/firebird '^BenchmarkTxParams$' 1x 1 1h \
	'DBLAT_TXPARAMS_ARCHS=Classic DBLAT_TXPARAMS_ROUNDS=1' \
	'internal/engine/firebird/doc.go, "Transaction parameters" (Classic: 1 round)' \
	'the table: at 50 terminals conflicts 32.0 % with wait,rec_version against 8.5 % with wait,no_rec_version'
fig firebird-load ./internal/engine/firebird '^BenchmarkLoad10Warehouses$' 1x 1 30m "" \
	'internal/engine/firebird/doc.go, "Loading"; internal/engine/firebird/load.go (CopyRows); internal/engine/firebird/extload.go' \
	'external tables 5.6 warehouses/min, 3.5 s of server and 0.9 s of dblat CPU per warehouse; EXECUTE BLOCKs 1.0, 16.4 s and 9.3 s (at load average 9-17)'
fig firebird-copyrows ./internal/engine/firebird '^BenchmarkCopyRows$' 20000x 3 30m "" \
	'internal/engine/firebird/load.go (blockParams, CopyRows)' \
	'narrow blocks of 85-255 rows 250k-280k rows/s; CUSTOMER blocks of 12-48 rows 35k-38k rows/s, of 97 rows 26k; prepared INSERTs 12k rows/s'
fig firebird-restore ./internal/engine/firebird '^BenchmarkRestore$' 3x 1 30m "" \
	'internal/engine/firebird/doc.go, "Pristine copies and page sizes"; internal/engine/firebird/pristine.go (SavePristine)' \
	'1036 MB: restore 1.7 s by copy (about 610 MB/s) against 4.7 s by nbackup (220 MB/s); save 4.6 s (225 MB/s) against 4.8 s (215 MB/s)'
fig firebird-roundtrip ./internal/engine/firebird '^BenchmarkRoundTrip$' 1s 1 10m "" \
	'internal/engine/firebird/firebird.go (Engine.Open); internal/engine/firebird/doc.go (Dial)' \
	'a 2-round-trip prepared SELECT through Dial costs no more than direct (2 alternating rounds: Dial 0.77-0.79× direct; through the old lifelong bridge 1.24-1.30×)'

# --- MariaDB ---------------------------------------------------------------------------------
fig mariadb-bulkload ./internal/engine/mariadb '^BenchmarkBulkLoad$' 3x 1 30m "" \
	'internal/engine/mariadb/load.go (CopyRows); internal/engine/mariadb/dialect.go (500 rows per INSERT)' \
	'LOAD DATA about 0.5 M rows/s narrow and 66 k rows/s wide, INSERTs 36-62 k rows/s wide; 500 rows per INSERT as fast as 1000, faster than 2000'

# command NAME prints the figure's go test command, as a shell would read it.
command() {
	local n=$1 e=${envs[$1]}
	printf '%s%s test %s -run '"'"'^$'"'"' -bench '"'"'%s'"'"' -benchtime %s -count %s -timeout %s -v\n' \
		"${e:+$e }" "$GO" "${pkg[$n]}" "${re[$n]}" "${btime[$n]}" "${count[$n]}" "${tmo[$n]}"
}

known() { [[ -v "pkg[$1]" ]]; }

list() {
	local n
	for n in "${names[@]}"; do
		printf '%s\n    make bench FIGURE=%s\n    %s\n    quoted in: %s\n    reference: %s\n\n' \
			"$n" "$n" "$(command "$n")" "${where[$n]}" "${ref[$n]}"
	done
}

# check lists each package's benchmarks once (go test -list, which compiles the test binary
# and runs no test or benchmark) and fails for a figure whose regexp matches none of them.
check() {
	local tmp p n top out bad=0
	declare -A listed
	# The test binaries' TestMain sweeps the temporary directory for servers that dead test
	# binaries left; a private one keeps the check from touching anyone else's.
	tmp=$(mktemp -d)
	for n in "${names[@]}"; do
		p=${pkg[$n]}
		if [[ ! -v "listed[$p]" ]]; then
			if ! out=$(TMPDIR=$tmp "$GO" test -run '^$' -list 'Benchmark.*' "$p"); then
				echo "FAIL  go test -list $p: $out" >&2
				bad=1
			fi
			listed[$p]=$(grep '^Benchmark' <<<"$out" || true)
		fi
		top=${re[$n]%%/*} # -bench matches the top level against the part before the first /
		if grep -Eq -- "$top" <<<"${listed[$p]}"; then
			echo "ok    $n: $(grep -E -- "$top" <<<"${listed[$p]}" | tr '\n' ' ')"
		else
			echo "FAIL  $n: -bench '${re[$n]}' matches no benchmark in $p" >&2
			bad=1
		fi
	done
	rm -rf "$tmp"
	return $bad
}

run() {
	local n=$1 e rc=0
	e=${envs[$n]}
	echo "=== figure $n"
	echo "    quoted in: ${where[$n]}"
	echo "    reference: ${ref[$n]}"
	echo "    command:   DBLAT_REQUIRE_SERVERS=$DBLAT_REQUIRE_SERVERS $(command "$n")"
	# shellcheck disable=SC2086 # ENV is VAR=VALUE words
	env $e "$GO" test "${pkg[$n]}" -run '^$' -bench "${re[$n]}" -benchtime "${btime[$n]}" \
		-count "${count[$n]}" -timeout "${tmo[$n]}" -v || rc=$?
	echo "=== end of figure $n (exit $rc)"
	echo
	return $rc
}

case "${1:-}" in
--list)
	list
	exit 0
	;;
--check)
	check
	exit
	;;
-h | --help)
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
-*)
	echo "bench: unknown option $1 (--list, --check, --help)" >&2
	exit 2
	;;
esac

todo=("$@")
[ ${#todo[@]} -gt 0 ] || todo=("${names[@]}")
for n in "${todo[@]}"; do
	if ! known "$n"; then
		echo "bench: no figure $n; scripts/bench.sh --list shows them" >&2
		exit 2
	fi
done
failed=()
for n in "${todo[@]}"; do
	run "$n" || failed+=("$n")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "bench: figures that failed: ${failed[*]}" >&2
	exit 1
fi
