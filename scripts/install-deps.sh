#!/usr/bin/env bash
# Installs what Chute builds and runs with on Debian 12, as root: the C libraries' development packages,
# pkg-config, and the command-line tools the tests and benchmarks compare against. Safe to run again.
set -euo pipefail

packages=(
    pkg-config
    libmagickwand-6.q16-dev
    # libheif itself, for the colour profile and EXIF that ImageMagick 6's HEIC coder drops.
    libheif-dev
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavfilter-dev
    libsqlite3-dev
    # The sqlite3 shell, for the journal tests that read a journal or write one as an older Chute did.
    sqlite3
    imagemagick ffmpeg libheif-examples rsync procps time
    # The font of text watermarks (ImageMagick 6's default font, Helvetica through Ghostscript, is not installed).
    fonts-dejavu-core
    # For the HEIC metadata tests: exiftool reads and writes EXIF, and an ICC profile that is not sRGB.
    libimage-exiftool-perl icc-profiles-free
    # For the Samba end-to-end test, which runs its own smbd (its own config, a free port on 127.0.0.1). Installing
    # samba starts no smbd or nmbd in a container without systemd: invoke-rc.d finds no runlevel (and Debian's
    # container images also deny it in policy-rc.d). On a systemd machine the packaged services start on 139/445,
    # which the test does not use.
    samba smbclient
    # For the test that validates rules files against `chute schema` with a JSON Schema validator.
    python3-jsonschema python3-yaml
)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "chute: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
    for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$candidate/swift" ] && export PATH="$PATH:$candidate"
    done
fi
if ! command -v swift >/dev/null 2>&1; then
    echo "chute: no Swift toolchain found. Debian 12 does not package Swift 6; install the Swift 6.x toolchain" >&2
    echo "       for Debian 12 from swift.org (or put it at /opt/swift) and run this again." >&2
    exit 1
fi
