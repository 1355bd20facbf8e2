#!/usr/bin/env bash
# make bench-peer (docs/benchmarks.md): the engine's MT940 parser beside the
# npm mt940js parser (pinned in bench/mt940js) on the same shared files, in
# one run, three alternations; prints each round and the median ratio.
# Skips with the reason where node or the npm registry is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${LEDGERLANE_SHARED:-$root/../shared}
SECONDS_PER_SIDE=${SECONDS_PER_SIDE:-2}

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "bench-peer: skipped: node and npm are not installed (apt-get install nodejs npm)"
	exit 0
fi
if ! (cd "$root/bench/mt940js" && npm ci --no-audit --no-fund --silent >/dev/null 2>&1); then
	echo "bench-peer: skipped: npm ci of mt940js failed (no npm registry?)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
peer="$root/bench/mt940js/peer.js"
find "$shared/samples/mt" -type f ! -name '*.yml' | sort | xargs node "$peer" list "$tmp/files" >"$tmp/list"
files=$(wc -l <"$tmp/list")
bytes=$(xargs cat <"$tmp/list" | wc -c)
echo "bench-peer: $files shared files mt940js parses ($bytes bytes, each from its first :20:)"
(cd "$root/services/converter" && go test -c -o "$tmp/builtin.test" ./builtin)

ratios=()
for round in 1 2 3; do
	theirs=$(node "$peer" bench "$tmp/list" "$SECONDS_PER_SIDE" | awk '{print $2}')
	ours=$(cd "$root/services/converter/builtin" && LEDGERLANE_MT940_LIST="$tmp/list" "$tmp/builtin.test" \
		-test.run '^$' -test.bench '^BenchmarkStatementFiles$/^parse$' -test.benchtime "${SECONDS_PER_SIDE}s" -test.cpu 1 |
		awk '/StatementFiles\/parse/ { for (i = 1; i < NF; i++) if ($(i + 1) == "MB/s") print $i }')
	ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.1f", a / b }')
	ratios+=("$ratio")
	echo "round $round: mt940js $theirs MB/s, engine $ours MB/s, ratio ${ratio}x"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | sed -n 2p)
echo "bench-peer: median ratio ${median}x (engine MB/s over mt940js MB/s, one core each)"
