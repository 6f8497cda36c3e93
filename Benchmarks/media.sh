#!/usr/bin/env bash
# Benchmark: the media engine against the ffmpeg CLI with the same settings, in the same run.
#
#   bash Benchmarks/media.sh [RUNS]
#
# 1. A generated 60 s 1080p30 H.264 + AAC (192k) clip to 720p H.264 CRF 23 preset medium + AAC 128k:
#    `chute convert in.mp4 out.mp4 --height 720` (the defaults of an mp4 target; the source's 192k AAC is a codec the
#    target holds, so Chute copies it) against
#    `ffmpeg -i in.mp4 -vf scale=-2:720 -c:v libx264 -preset medium -crf 23 -c:a copy out.mp4`.
# 2. Trim on keyframes, the packets copied: `chute convert in.mp4 out.mp4 --start 10 --end 40 --trimExact false`
#    against `ffmpeg -ss 10 -to 40 -i in.mp4 -c copy out.mp4` (both start at the keyframe at or before 10 s).
# 3. Crop to 1:1: `chute convert in.mp4 out.mp4 --crop 1:1` against
#    `ffmpeg -i in.mp4 -vf crop=w=1080:h=1080:x=420:y=0,format=yuv420p -c:v libx264 -preset medium -crf 23 -c:a copy
#    out.mp4`.
# 4. The same clip with its tags removed, a remux (packets copied; must take under 0.1 s):
#    `chute convert in.mp4 out.mp4 --metadata strip` against
#    `ffmpeg -i in.mp4 -map 0 -c copy -map_metadata -1 -fflags +bitexact out.mp4`; and the floor of any tool that
#    keeps its promise never to report an output that is not on storage: copying the same bytes and syncing them,
#    `dd if=in.mp4 of=out.mp4 bs=1M conv=fsync` (the ffmpeg CLI does not sync; Chute does).
# 5. The same clip played twice as fast: `chute convert in.mp4 out.mp4 --speed 2` against
#    `ffmpeg -i in.mp4 -vf setpts=PTS/2 -af atempo=2 -c:v libx264 -preset medium -crf 23 -c:a aac -b:a 128k out.mp4`.
# 6. A generated five-minute WAV to MP3 192k: `chute convert in.wav out.mp3` (192k is the mp3 default) against
#    `ffmpeg -i in.wav -c:a libmp3lame -b:a 192k out.mp3`.
# 7. A sticker: 3 s of the clip from 10 s to a looping GIF, 512 px wide at 15 fps with its own palette:
#    `chute convert in.mp4 out.gif --start 10 --duration 3` against
#    `ffmpeg -ss 10 -t 3 -i in.mp4 -vf "fps=15,scale=512:288:flags=lanczos,split[f][s];[s]palettegen=stats_mode=diff[p];
#    [f][p]paletteuse=dither=bayer:bayer_scale=4:diff_mode=rectangle" -loop 0 out.gif` (the filters Chute uses).
#
# Chute is measured two ways, alternating with the CLI, RUNS times each (default 3):
# - `chute convert`, under /usr/bin/time -v: a one-shot command, which pays for two process start-ups (the command
#   and its worker) and loads every engine's libraries, on top of the conversion;
# - the daemon (`chute run`, how Chute is meant to run): the file is moved into a watched folder with a warm worker;
#   wall time is the job's `durationSeconds` from its sidecar (job start to output renamed into place, read-back
#   verification and fsync included, the quiet period before the job excluded), CPU time is the worker's and the
#   daemon's together (from /proc, the daemon hashes the source meanwhile), peak RSS the worker's high-water mark
#   since it started (a reused worker: its peak over the jobs so far, so at least that job's peak).
# The table shows medians of wall time, CPU time (user + sys) and peak RSS, and the Chute/ffmpeg ratios. Then it
# checks that the outputs decode to the same thing: the MD5 of each decoded stream, and the video's PSNR when those
# differ. Not a test: nothing here asserts on time. CHUTE=path/to/chute times that build
# instead of making one (Benchmarks/common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
source scripts/install-deps.sh
source Benchmarks/common.sh
command -v /usr/bin/time >/dev/null || { echo "media.sh needs GNU time (apt-get install time)" >&2; exit 1; }

chute="$(release_binary chute)"
work="$(mktemp -d /tmp/chute-bench-media-XXXXXX)"
trap 'rm -rf "$work"' EXIT

echo "generating the 60 s 1080p30 clip and the five-minute WAV in $work ..." >&2
ffmpeg -nostdin -v error -f lavfi -i testsrc2=size=1920x1080:rate=30:duration=60 \
    -f lavfi -i sine=frequency=440:sample_rate=48000:duration=60 -ac 2 \
    -c:v libx264 -preset veryfast -crf 18 -c:a aac -b:a 192k "$work/clip.mp4"
ffmpeg -nostdin -v error -f lavfi -i "sine=frequency=330:sample_rate=44100:duration=300" \
    -f lavfi -i "anoisesrc=color=pink:sample_rate=44100:duration=300:amplitude=0.2" \
    -filter_complex "[0][1]amix=inputs=2,aformat=channel_layouts=stereo" -c:a pcm_s16le "$work/song.wav"

measure() {  # $1 = label, rest = command; appends "label wall cpu rss" to $work/times
    local label="$1" log="$work/time.log"
    shift
    /usr/bin/time -v -o "$log" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    awk -v label="$label" -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, t, ":"); wall = (n == 3 ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2]) }
        /User time/ { user = $2 } /System time/ { sys = $2 } /Maximum resident/ { rss = $2 }
        END { printf "%s %.3f %.3f %d\n", label, wall, user + sys, rss }' "$log" >> "$work/times"
}

# The daemon, with one rule per case; its workers start with their first job and stay.
mkdir -p "$work/daemon/inbox" "$work/daemon/staging"
cat > "$work/daemon/rules.yaml" <<YAML
watch:
  - path: ./inbox
# Every run drops the same clip again: convert it each time, as the CLI does, rather than skip it.
rules:
  - name: trim
    match: "trim-*.mp4"
    to: mp4
    start: 10
    end: 40
    trimExact: false
    onDuplicate: convert
    output: ./outbox
  - name: crop
    match: "crop-*.mp4"
    to: mp4
    crop: "1:1"
    onDuplicate: convert
    output: ./outbox
  - name: strip
    match: "strip-*.mp4"
    to: mp4
    metadata: strip
    onDuplicate: convert
    output: ./outbox
  - name: speed
    match: "speed-*.mp4"
    to: mp4
    speed: 2
    onDuplicate: convert
    output: ./outbox
  - name: sticker
    match: "sticker-*.mp4"
    to: gif
    start: 10
    duration: 3
    onDuplicate: convert
    output: ./outbox
  - name: video
    match: "*.mp4"
    to: mp4
    height: 720
    onDuplicate: convert
    output: ./outbox
  - name: audio
    match: "*.wav"
    to: mp3
    onDuplicate: convert
    output: ./outbox
settings:
  quietPeriod: 100ms
  concurrency: {video: 1, audio: 1}
  # Between two of its jobs, each worker waits while the CLI runs: it stays, warm, as a busy daemon's would.
  workerIdle: 1h
YAML
"$chute" run --config "$work/daemon/rules.yaml" 2> "$work/daemon/log" &
daemon=$!
trap 'kill "$daemon" 2>/dev/null || true; rm -rf "$work"' EXIT
until grep -q "Watcher ready" "$work/daemon/log"; do sleep 0.05; done

cpu_ticks() {  # user + system clock ticks of a process, 0 when it does not exist
    awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
worker_of() {  # the daemon's worker for an engine, if it has one
    pgrep -P "$daemon" -f "worker --engine $1" | head -1 || true
}
measure_daemon() {  # $1 = label, $2 = engine, $3 = source, $4 = name in the inbox, $5 = output name
    local label="$1" engine="$2" worker before_worker before_daemon after_worker after_daemon
    cp "$3" "$work/daemon/staging/$4"
    worker="$(worker_of "$engine")"
    before_worker=$( [ -n "$worker" ] && cpu_ticks "$worker" || echo 0)
    before_daemon=$(cpu_ticks "$daemon")
    mv "$work/daemon/staging/$4" "$work/daemon/inbox/$4"
    until [ -f "$work/daemon/outbox/$5.chute.json" ]; do sleep 0.1; done
    grep -q '"status" : "completed"' "$work/daemon/outbox/$5.chute.json" \
        || { cat "$work/daemon/outbox/$5.chute.json" >&2; exit 1; }
    worker="$(worker_of "$engine")"
    after_worker=$(cpu_ticks "$worker")
    after_daemon=$(cpu_ticks "$daemon")
    awk -v label="$label" -v ticks="$(getconf CLK_TCK)" \
        -v cpu="$((after_worker - before_worker + after_daemon - before_daemon))" \
        -v rss="$(awk '/VmHWM/ { print $2 }' "/proc/$worker/status")" \
        -F': ' '/"durationSeconds"/ { sub(/,$/, "", $2); printf "%s %.3f %.3f %d\n", label, $2, cpu / ticks, rss }' \
        "$work/daemon/outbox/$5.chute.json" >> "$work/times"
}

for ((run = 1; run <= runs; run++)); do
    echo "run $run of $runs ..." >&2
    measure chute-convert-video "$chute" convert "$work/clip.mp4" "$work/chute-$run.mp4" --height 720
    measure ffmpeg-video ffmpeg -nostdin -v error -i "$work/clip.mp4" -vf scale=-2:720 -c:v libx264 -preset medium \
        -crf 23 -c:a copy "$work/ffmpeg-$run.mp4"
    measure_daemon chute-daemon-video video "$work/clip.mp4" "clip-$run.mp4" "clip-$run.mp4"
    measure chute-convert-trim "$chute" convert "$work/clip.mp4" "$work/chute-trim-$run.mp4" --start 10 --end 40 \
        --trimExact false
    measure ffmpeg-trim ffmpeg -nostdin -v error -ss 10 -to 40 -i "$work/clip.mp4" -c copy "$work/ffmpeg-trim-$run.mp4"
    measure_daemon chute-daemon-trim video "$work/clip.mp4" "trim-$run.mp4" "trim-$run.mp4"
    measure chute-convert-crop "$chute" convert "$work/clip.mp4" "$work/chute-crop-$run.mp4" --crop 1:1
    measure ffmpeg-crop ffmpeg -nostdin -v error -i "$work/clip.mp4" -vf crop=w=1080:h=1080:x=420:y=0,format=yuv420p \
        -c:v libx264 -preset medium -crf 23 -c:a copy "$work/ffmpeg-crop-$run.mp4"
    measure_daemon chute-daemon-crop video "$work/clip.mp4" "crop-$run.mp4" "crop-$run.mp4"
    measure chute-convert-strip "$chute" convert "$work/clip.mp4" "$work/chute-strip-$run.mp4" --metadata strip
    measure ffmpeg-strip ffmpeg -nostdin -v error -i "$work/clip.mp4" -map 0 -c copy -map_metadata -1 \
        -fflags +bitexact "$work/ffmpeg-strip-$run.mp4"
    measure_daemon chute-daemon-strip video "$work/clip.mp4" "strip-$run.mp4" "strip-$run.mp4"
    measure copy-and-sync-strip dd if="$work/clip.mp4" of="$work/copy-$run.mp4" bs=1M conv=fsync status=none
    measure chute-convert-speed "$chute" convert "$work/clip.mp4" "$work/chute-speed-$run.mp4" --speed 2
    measure ffmpeg-speed ffmpeg -nostdin -v error -i "$work/clip.mp4" -vf setpts=PTS/2 -af atempo=2 -c:v libx264 \
        -preset medium -crf 23 -c:a aac -b:a 128k "$work/ffmpeg-speed-$run.mp4"
    measure_daemon chute-daemon-speed video "$work/clip.mp4" "speed-$run.mp4" "speed-$run.mp4"
    measure chute-convert-audio "$chute" convert "$work/song.wav" "$work/chute-$run.mp3"
    measure ffmpeg-audio ffmpeg -nostdin -v error -i "$work/song.wav" -c:a libmp3lame -b:a 192k \
        "$work/ffmpeg-$run.mp3"
    measure_daemon chute-daemon-audio audio "$work/song.wav" "song-$run.wav" "song-$run.mp3"
    measure chute-convert-sticker "$chute" convert "$work/clip.mp4" "$work/chute-$run.gif" --start 10 --duration 3
    measure ffmpeg-sticker ffmpeg -nostdin -v error -ss 10 -t 3 -i "$work/clip.mp4" -vf "fps=15,\
scale=512:288:flags=lanczos,split[f][s];[s]palettegen=stats_mode=diff[p];[f][p]paletteuse=dither=bayer:\
bayer_scale=4:diff_mode=rectangle" -loop 0 "$work/ffmpeg-$run.gif"
    measure_daemon chute-daemon-sticker video "$work/clip.mp4" "sticker-$run.mp4" "sticker-$run.gif"
done
kill -TERM "$daemon"
wait "$daemon" || true

median() {  # $1 = label, $2 = column (2 wall, 3 cpu, 4 rss)
    awk -v label="$1" -v column="$2" '$1 == label { print $column }' "$work/times" | sort -g \
        | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

decoded_md5() {  # $1 = file, $2 = stream specifier
    ffmpeg -nostdin -v error -i "$1" -map "0:$2" -f md5 - | sed 's/^MD5=//'
}
psnr() {  # average PSNR of $1 against $2, in dB
    ffmpeg -nostdin -i "$1" -i "$2" -lavfi "[0:v][1:v]psnr" -f null - 2>&1 | sed -n 's/.*PSNR.* average:\([^ ]*\).*/\1/p'
}
compare() {  # $1 = chute output, $2 = ffmpeg output, $3 = stream specifier
    local left right
    left="$(decoded_md5 "$1" "$3")"
    right="$(decoded_md5 "$2" "$3")"
    if [ "$left" = "$right" ]; then
        echo "identical (md5 $left)"
    elif [ "$3" = "v:0" ]; then
        echo "differ; PSNR $(psnr "$1" "$2") dB"
    else
        echo "differ (md5 $left vs $right)"
    fi
}

printf '\nmedia benchmark: medians of %d runs, %d cores, %s\n' "$runs" "$(nproc)" "$(ffmpeg -version | head -1)"
printf '  %-36s %9s %9s %9s\n' "" "wall s" "cpu s" "peak MB"
row() {  # $1 = label
    printf '  %-36s %9.2f %9.2f %9.0f\n' "$1" "$(median "$1" 2)" "$(median "$1" 3)" \
        "$(awk -v k="$(median "$1" 4)" 'BEGIN { print k / 1024 }')"
}
ratios() {  # $1 = chute label, $2 = the other tool's label, $3 = its name in the row (ffmpeg)
    printf '  %-36s %9s %9s %9s\n' "${1#chute-}/${3:-ffmpeg}" "$(ratio "$(median "$1" 2)" "$(median "$2" 2)")" \
        "$(ratio "$(median "$1" 3)" "$(median "$2" 3)")" "$(ratio "$(median "$1" 4)" "$(median "$2" 4)")"
}
for kind in video trim crop strip speed audio sticker; do
    row "ffmpeg-$kind"
    row "chute-daemon-$kind"
    row "chute-convert-$kind"
    ratios "chute-daemon-$kind" "ffmpeg-$kind"
    ratios "chute-convert-$kind" "ffmpeg-$kind"
    if [ "$kind" = strip ]; then
        row copy-and-sync-strip
        ratios chute-daemon-strip copy-and-sync-strip copy-and-sync
    fi
done
printf '\n  1080p -> 720p video stream, convert: %s\n' "$(compare "$work/chute-1.mp4" "$work/ffmpeg-1.mp4" v:0)"
printf '  1080p -> 720p video stream, daemon:  %s\n' \
    "$(compare "$work/daemon/outbox/clip-1.mp4" "$work/ffmpeg-1.mp4" v:0)"
printf '  1080p -> 720p audio stream, daemon:  %s\n' \
    "$(compare "$work/daemon/outbox/clip-1.mp4" "$work/ffmpeg-1.mp4" a:0)"
printf '  trim 10-40 s video stream, daemon:   %s\n' \
    "$(compare "$work/daemon/outbox/trim-1.mp4" "$work/ffmpeg-trim-1.mp4" v:0)"
printf '  crop 1:1 video stream, daemon:       %s\n' \
    "$(compare "$work/daemon/outbox/crop-1.mp4" "$work/ffmpeg-crop-1.mp4" v:0)"
printf '  strip (remux) video stream, daemon:  %s\n' \
    "$(compare "$work/daemon/outbox/strip-1.mp4" "$work/ffmpeg-strip-1.mp4" v:0)"
printf '  speed 2x video stream, daemon:       %s\n' \
    "$(compare "$work/daemon/outbox/speed-1.mp4" "$work/ffmpeg-speed-1.mp4" v:0)"
printf '  speed 2x audio stream, daemon:       %s\n' \
    "$(compare "$work/daemon/outbox/speed-1.mp4" "$work/ffmpeg-speed-1.mp4" a:0)"
printf '  WAV -> MP3 audio stream, convert:    %s\n' "$(compare "$work/chute-1.mp3" "$work/ffmpeg-1.mp3" a:0)"
printf '  WAV -> MP3 audio stream, daemon:     %s\n' \
    "$(compare "$work/daemon/outbox/song-1.mp3" "$work/ffmpeg-1.mp3" a:0)"
printf '  sticker GIF frames, daemon:          %s\n' \
    "$(compare "$work/daemon/outbox/sticker-1.gif" "$work/ffmpeg-1.gif" v:0)"
printf '  output bytes: gif chute %d, ffmpeg %d\n' \
    "$(stat -c %s "$work/daemon/outbox/sticker-1.gif")" "$(stat -c %s "$work/ffmpeg-1.gif")"
printf '  output bytes: mp4 chute %d, ffmpeg %d; mp3 chute %d, ffmpeg %d\n' \
    "$(stat -c %s "$work/daemon/outbox/clip-1.mp4")" "$(stat -c %s "$work/ffmpeg-1.mp4")" \
    "$(stat -c %s "$work/daemon/outbox/song-1.mp3")" "$(stat -c %s "$work/ffmpeg-1.mp3")"
# The threads the scheduler gave each compared daemon job ("auto": every core, FFmpeg's choice, as the CLI's): an
# x264 output is the CLI's bit for bit only at the same thread count.
printf '  daemon codec threads (run 1):'
for name in clip-1.mp4 crop-1.mp4 speed-1.mp4 song-1.mp3; do
    printf ' %s %s' "${name%-1.*}" \
        "$(grep -o '"codecThreads" : "[^"]*"' "$work/daemon/outbox/$name.chute.json" | cut -d'"' -f4)"
done
printf '\n'
