#!/usr/bin/env bash
# Benchmark: merging 200 PDFs into one with the PDF engine's page appending (`PDFDocument.appendAllPages`, the
# function a group's merge will call), against `qpdf --empty --pages IN... -- OUT`, in the same run.
#
#   bash Benchmarks/pdf.sh [COUNT] [RUNS]
#
# The inputs are COUNT (default 200) copies of 10 PDFs made by qpdf from the shared corpus's 14-page text PDF
# (each of 1 to 10 of its pages). Both sides run RUNS times (default
# 3), alternating; the best wall time of each is printed, with the ratio (the goal is at most 1.1) and the page
# counts of both outputs, which must be equal. Not a test: nothing here asserts on time.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-200}"
runs="${2:-3}"
source scripts/install-deps.sh
source Benchmarks/common.sh

merge="$(release_binary chute-pdf-merge)"
work="$(mktemp -d /tmp/chute-bench-pdf-XXXXXX)"
trap 'rm -rf "$work"' EXIT

corpus=../shared/corpus/pdf/pdf_multipage_text.pdf
[ -f "$corpus" ] || { echo "the shared corpus ($corpus) is absent" >&2; exit 1; }
mkdir -p "$work/base" "$work/in"
for n in 1 2 3 4 5 6 7 8 9 10; do
    qpdf --empty --pages "$corpus" "1-$n" -- "$work/base/$n.pdf"
done
for ((i = 0; i < count; i++)); do
    cp "$work/base/$((i % 10 + 1)).pdf" "$(printf '%s/in/%04d.pdf' "$work" "$i")"
done
inputs=("$work"/in/*.pdf)
echo "merging ${#inputs[@]} PDFs ($(du -sh "$work/in" | cut -f1)) $runs times each ..." >&2

best_chute=""
best_qpdf=""
for ((run = 0; run < runs; run++)); do
    rm -f "$work/chute.pdf" "$work/qpdf.pdf"
    start=$(now)
    "$merge" "$work/chute.pdf" "${inputs[@]}"
    t=$(elapsed "$start" "$(now)")
    best_chute=$(awk -v a="$best_chute" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
    start=$(now)
    qpdf --empty --pages "${inputs[@]}" -- "$work/qpdf.pdf"
    t=$(elapsed "$start" "$(now)")
    best_qpdf=$(awk -v a="$best_qpdf" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
done

pages_chute=$(pdfinfo "$work/chute.pdf" | awk '/^Pages:/ { print $2 }')
pages_qpdf=$(pdfinfo "$work/qpdf.pdf" | awk '/^Pages:/ { print $2 }')
echo "chute-pdf-merge: ${best_chute} s, $pages_chute pages, $(stat -c %s "$work/chute.pdf") bytes"
echo "qpdf --pages:    ${best_qpdf} s, $pages_qpdf pages, $(stat -c %s "$work/qpdf.pdf") bytes"
echo "ratio (chute / qpdf): $(awk -v a="$best_chute" -v b="$best_qpdf" 'BEGIN { printf "%.2f", a / b }') (goal ≤ 1.1)"
[ "$pages_chute" = "$pages_qpdf" ] || { echo "page counts differ" >&2; exit 1; }
