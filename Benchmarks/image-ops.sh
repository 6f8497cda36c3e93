#!/usr/bin/env bash
# Benchmark: the image operations of a photo rule on 50 generated 6 MP photos dropped into a watched folder at once,
# through the Chute daemon, against `convert-im6.q16` doing the same operations one file at a time, in the same run.
# The operations: crop to 4:5 (centre), rotate 90°, fit into 1600x1600, strip the metadata but the ICC profile,
# JPEG at quality 80.
#
#   bash Benchmarks/image-ops.sh [COUNT]
#
# Prints wall times, the ratio and a pixel comparison of one output pair. Not a test: nothing here asserts on time.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-50}"
source scripts/install-deps.sh
source Benchmarks/common.sh

chute="$(release_binary chute)"
work="$(mktemp -d /tmp/chute-bench-XXXXXX)"
daemon=""
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; rm -rf "$work"' EXIT

echo "generating $count photos of 3000x2000 in $work/source ..." >&2
mkdir -p "$work/source"
for base in 0 1 2 3 4 5 6 7 8 9; do
    convert-im6.q16 -size 3000x2000 -seed "$base" plasma:fractal -blur 0x1 -quality 92 "$work/base$base.jpg"
    exiftool -q -overwrite_original -Make=Camera -Model=Bench -GPSLatitude=48.8566 -GPSLatitudeRef=N \
        -GPSLongitude=2.3522 -GPSLongitudeRef=E "$work/base$base.jpg"
done
for ((i = 0; i < count; i++)); do
    cp "$work/base$((i % 10)).jpg" "$(printf '%s/source/photo%04d.jpg' "$work" "$i")"
done

dir="$work/daemon"
mkdir -p "$dir/inbox" "$dir/staging"
cp "$work"/source/*.jpg "$dir/staging/"
cat > "$dir/rules.yaml" <<YAML
watch:
  - path: ./inbox
rules:
  - name: photos
    match: "*.jpg"
    to: jpg
    crop: "4:5"
    rotate: 90
    width: 1600
    height: 1600
    metadata: strip
    quality: 80
    # The 50 photos are copies of 10: convert each, as the CLI does, rather than skip the copies.
    onDuplicate: convert
    output: ./outbox
settings:
  quietPeriod: 100ms
YAML
echo "chute daemon ..." >&2
"$chute" run --config "$dir/rules.yaml" 2> "$dir/log" &
daemon=$!
until grep -q "Watcher ready" "$dir/log"; do sleep 0.05; done
start=$(now)
mv "$dir"/staging/*.jpg "$dir/inbox/"
wait_for_lines "$dir/log" 'Job (completed|failed)' "$count" "$daemon"
end=$(now)
kill -TERM "$daemon"
wait "$daemon" || true
daemon=""
chute_wall=$(elapsed "$start" "$end")
chute_failed=$( (grep -l '"status" : "failed"' "$dir"/outbox/*.chute.json || true) | wc -l)
chute_outputs=$(find "$dir/outbox" -name '*.jpg' | wc -l)

echo "convert-im6.q16, one file at a time ..." >&2
mkdir -p "$work/cli"
cli_failed=0
start=$(now)
for file in "$work"/source/*.jpg; do
    name="$(basename "$file")"
    # -strip would drop the ICC profile too; +profile '!icc,*' keeps it, as Chute does.
    convert-im6.q16 "$file" -auto-orient -gravity center -crop 1600x2000+0+0 +repage -rotate 90 \
        -resize '1600x1600>' +profile '!icc,*' -quality 80 "$work/cli/$name" || cli_failed=$((cli_failed + 1))
done
end=$(now)
cli_wall=$(elapsed "$start" "$end")

sample="photo0000.jpg"
rmse=$(compare-im6.q16 -metric RMSE "$dir/outbox/$sample" "$work/cli/$sample" null: 2>&1 || true)
printf '\nimage operations benchmark: %d photos 3000x2000, crop 4:5, rotate 90, fit 1600, strip, q80, %d cores\n' \
    "$count" "$(nproc)"
printf '  chute daemon                 %8.2f s  outputs %d, failed %d\n' "$chute_wall" "$chute_outputs" "$chute_failed"
printf '  convert-im6.q16, sequential  %8.2f s  outputs %d, failed %d\n' "$cli_wall" \
    "$(find "$work/cli" -name '*.jpg' | wc -l)" "$cli_failed"
printf '  chute / convert wall time:   %.2f\n' "$(calc "$chute_wall / $cli_wall")"
printf '  sample output: chute %s, convert %s\n' "$(identify-im6.q16 -format '%wx%h' "$dir/outbox/$sample")" \
    "$(identify-im6.q16 -format '%wx%h' "$work/cli/$sample")"
printf '  RMSE between the two sample outputs: %s\n' "$rmse"
