#!/usr/bin/env bash
# Benchmark: the same 20 documents from ../shared/corpus (DOC, DOCX, ODT, RTF, HTML, TXT, XLSX, ODS, PPTX, ODP)
# converted to PDF by a warm Chute daemon (its document workers have LibreOffice loaded, through LibreOfficeKit),
# against `soffice --headless --convert-to pdf`, started cold for each file, in the same run.
#
#   bash Benchmarks/documents.sh             (or CHUTE=.build/debug/chute bash Benchmarks/documents.sh)
#
# The daemon is warmed with one document (not timed) before the 20 are dropped at once; soffice gets one untimed
# run too, which creates its profile. Prints both wall times and their ratio (the goal is at most 0.3). Not a test:
# nothing here asserts on time.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
source Benchmarks/common.sh

corpus="$(cd .. && pwd)/shared/corpus"
[ -f "$corpus/MANIFEST.tsv" ] || { echo "no corpus at $corpus" >&2; exit 1; }

chute="$(release_binary chute)"
work="$(mktemp -d /tmp/chute-bench-XXXXXX)"
daemon=""
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT

# The corpus documents that convert ("ok" in the manifest), the first 20 in manifest order, but for the web page
# whose 84 remote resources soffice (which has the network) would try to fetch while Chute's workers cannot.
mkdir -p "$work/source"
awk -F'\t' '$1 ~ /^document\// && $8 == "ok" && $1 !~ /external_resources/ { print $1 }' "$corpus/MANIFEST.tsv" |
    head -n 20 |
    while read -r path; do cp "$corpus/$path" "$work/source/"; done
count=$(find "$work/source" -type f | wc -l)
echo "$count documents in $work/source" >&2
printf 'A document that warms the workers.\n' > "$work/warm-up.txt"

dir="$work/daemon"
mkdir -p "$dir/inbox" "$dir/staging"
cp "$work"/source/* "$dir/staging/"
cat > "$dir/rules.yaml" <<YAML
watch:
  - path: ./inbox
rules:
  - name: to-pdf
    match: "*"
    to: pdf
    output: ./outbox
settings:
  quietPeriod: 100ms
YAML
"$chute" run --config "$dir/rules.yaml" 2> "$dir/log" &
daemon=$!
until grep -q "Watcher ready" "$dir/log"; do sleep 0.05; done
cp "$work/warm-up.txt" "$dir/inbox/"
wait_for_lines "$dir/log" 'Job (completed|failed)' 1 "$daemon"
echo "chute daemon, warm ..." >&2
start=$(now)
mv "$dir"/staging/* "$dir/inbox/"
wait_for_lines "$dir/log" 'Job (completed|failed)' $((count + 1)) "$daemon"
end=$(now)
kill -TERM "$daemon"
wait "$daemon" || true
daemon=""
daemon_wall=$(elapsed "$start" "$end")
daemon_failed=$( (grep -l '"status" : "failed"' "$dir"/outbox/*.chute.json || true) | wc -l)
daemon_outputs=$(find "$dir/outbox" -name '*.pdf' ! -name 'warm-up.pdf' | wc -l)

echo "soffice --headless --convert-to pdf, one cold start per file ..." >&2
mkdir -p "$work/cli"
profile="file://$work/soffice-profile"
soffice -env:UserInstallation="$profile" --headless --convert-to pdf --outdir "$work/cli-warm-up" \
    "$work/warm-up.txt" >/dev/null 2>&1 || true
start=$(now)
for file in "$work"/source/*; do
    soffice -env:UserInstallation="$profile" --headless --convert-to pdf --outdir "$work/cli" "$file" \
        >/dev/null 2>&1 || true
done
end=$(now)
cli_wall=$(elapsed "$start" "$end")
cli_outputs=$(find "$work/cli" -name '*.pdf' | wc -l)

cores=$(nproc)
printf '%s documents to PDF on %s cores\n' "$count" "$cores"
printf 'chute daemon (warm, %s document workers): %6.2f s  (%s PDFs, %s failed)\n' "$cores" "$daemon_wall" \
    "$daemon_outputs" "$daemon_failed"
printf 'soffice --convert-to pdf (cold per file):  %6.2f s  (%s PDFs)\n' "$cli_wall" "$cli_outputs"
printf 'ratio chute/soffice: %.2f (goal: at most 0.3)\n' "$(calc "$daemon_wall / $cli_wall")"
