#!/usr/bin/env bash
# The fixed benchmark set (docs/benchmarks.md), run the same way every time so
# that figures from two commits compare.
#
#   bench/bench.sh run                 # make bench: the set on this tree, a table
#   bench/bench.sh compare <commit>    # make bench-compare BASE=<commit>
#
# Each package of the set is compiled once per side into a test binary; the
# rounds then run the binaries (one -count per round), and compare alternates
# base and head round by round, so a machine that slows down mid-run slows
# both alike. benchstat (golang.org/x/perf, pinned in proto/tools) prints the
# table or the comparison. COUNT (rounds, default 6) and BENCHTIME (per
# benchmark, default 300ms) tune the length; OUT keeps the raw files.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-300ms}
OUT=${OUT:-$(mktemp -d)}
BIN=${BIN:-$root/.bin}
mkdir -p "$OUT"

# The set: module dir; package; benchmark pattern; -cpu (empty: the default). Everything here runs on
# one core (-cpu 1) except the metered convert and the limiter, which drive
# the whole stack (or Redis) concurrently as a server would be driven.
SET=(
	"services/converter;./builtin;^(BenchmarkFamilies|BenchmarkStatementFiles)$;1"
	"gateway;./route;^BenchmarkLookup$;1"
	"services/metering/admission;.;^BenchmarkLimiter$/^meter_bucket\+quota/;"
	"deploy/local;.;^BenchmarkMeteredConvert$/^in-process$/;"
)

# build <src> <bindir>: one test binary per entry of the set.
build() {
	local src=$1 bindir=$2 i=0
	mkdir -p "$bindir"
	for entry in "${SET[@]}"; do
		IFS=';' read -r mod pkg _ _ <<<"$entry"
		(cd "$src/$mod" && go test -c -o "$bindir/$i.test" "$pkg")
		i=$((i + 1))
	done
}

# round <src> <bindir> <out>: every binary once, from its package's
# directory (the benchmarks find the shared samples relative to it).
round() {
	local src=$1 bindir=$2 out=$3 i=0
	for entry in "${SET[@]}"; do
		IFS=';' read -r mod pkg pattern cpu <<<"$entry"
		[ -x "$bindir/$i.test" ] || { i=$((i + 1)); continue; }
		local args=(-test.run '^$' -test.bench "$pattern" -test.benchmem -test.benchtime "$BENCHTIME" -test.count 1)
		[ -n "$cpu" ] && args+=(-test.cpu "$cpu")
		(cd "$src/$mod/$pkg" && "$bindir/$i.test" "${args[@]}") >>"$out" 2>&1 || {
			echo "bench: $mod $pkg failed; its output is in $out" >&2
			return 1
		}
		i=$((i + 1))
	done
}

benchstat_bin() {
	[ -x "$BIN/benchstat" ] || (cd "$root/proto/tools" && GOWORK=off GOBIN="$BIN" go install golang.org/x/perf/cmd/benchstat)
	echo "$BIN/benchstat"
}

case "${1:-}" in
run)
	build "$root" "$OUT/head"
	for ((n = 1; n <= COUNT; n++)); do
		echo "bench: round $n of $COUNT" >&2
		round "$root" "$OUT/head" "$OUT/head.txt"
	done
	"$(benchstat_bin)" "$OUT/head.txt"
	echo "raw results: $OUT/head.txt" >&2
	;;
compare)
	base=${2:?usage: bench.sh compare <commit>}
	sha=$(git -C "$root" rev-parse --verify "$base^{commit}")
	# A sibling of the repository, so relative paths to ../shared hold there.
	wt="$(dirname "$root")/.bench-base-${sha:0:12}"
	git -C "$root" worktree add --detach "$wt" "$sha" >/dev/null
	trap 'git -C "$root" worktree remove --force "$wt"' EXIT
	# The set's converter benchmarks only read public API: an older commit
	# without them gets today's file, so its families compare too.
	if [ ! -f "$wt/services/converter/builtin/bench_test.go" ]; then
		cp "$root/services/converter/builtin/bench_test.go" "$wt/services/converter/builtin/"
	fi
	build "$wt" "$OUT/base" || echo "bench: some of the set does not build at $base; it is left out" >&2
	build "$root" "$OUT/head"
	for ((n = 1; n <= COUNT; n++)); do
		echo "bench: round $n of $COUNT (base, then head)" >&2
		round "$wt" "$OUT/base" "$OUT/base.txt"
		round "$root" "$OUT/head" "$OUT/head.txt"
	done
	"$(benchstat_bin)" base="$OUT/base.txt" head="$OUT/head.txt"
	echo "raw results: $OUT/base.txt $OUT/head.txt" >&2
	;;
*)
	echo "usage: bench.sh run | compare <commit>" >&2
	exit 2
	;;
esac
