#!/usr/bin/env bash
# Builds the Debian package chute_VERSION_ARCH.deb with dpkg-deb alone: the binary as /usr/bin/chute and the engines'
# worker executables (beside it in the build) in /usr/lib/chute, the repository's
# systemd unit with its paths moved to /usr, deploy/rules.yaml as the conffile /etc/chute/rules.yaml, a man page
# generated from the CLI's own help, the docs, and the maintainer scripts of deploy/debian (the `chute` user,
# /var/lib/chute, the service enabled).
#
#   bash scripts/build-deb.sh [--binary PATH] [--out DIR] [--compression xz|gzip|none] [--allow-unpackaged-libraries]
#
# Without --binary it builds the release binary with the Swift runtime linked in (--static-swift-stdlib), so the
# package depends only on Debian's libraries. Depends: is read from the binaries themselves: each shared library they name
# (NEEDED), found with ldd, belongs to a Debian package (dpkg -S), whose shlibs file gives the dependency with its
# version. A library that no package owns stops the build, unless --allow-unpackaged-libraries (for a debug binary
# that loads the Swift runtime from the toolchain: that package runs only where the toolchain is).
# The package goes into DIR (default: the repository's folder); the path of the .deb is printed on standard output.
# --compression is dpkg-deb's (default xz; none saves minutes on a 100 MB debug binary).
set -euo pipefail
# The modes in the package are the ones this script gives, whatever the caller's umask.
umask 022
cd "$(dirname "$0")/.."
repository=$(pwd)

binary=""
out="$repository"
allow_unpackaged=false
compression=xz
while [ "$#" -gt 0 ]; do
    case "$1" in
        --binary) binary=$(realpath "$2"); shift 2 ;;
        --out) out=$(realpath "$2"); shift 2 ;;
        --compression) compression=$2; shift 2 ;;
        --allow-unpackaged-libraries) allow_unpackaged=true; shift ;;
        -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "build-deb.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
[ -x "$(command -v swift)" ] || export PATH="$PATH:/opt/swift/usr/bin"

if [ -z "$binary" ]; then
    echo "build-deb.sh: building chute (release, Swift runtime linked in)" >&2
    for product in chute chute-image-worker chute-media-worker chute-pdf-worker chute-document-worker; do
        swift build -c release --static-swift-stdlib --product "$product" >&2
    done
    binary="$(swift build -c release --static-swift-stdlib --show-bin-path)/chute"
fi
workers=("$(dirname "$binary")"/chute-{image,media,pdf,document}-worker)
for executable in "$binary" "${workers[@]}"; do
    [ -x "$executable" ] || { echo "build-deb.sh: $executable is not an executable" >&2; exit 1; }
done
mkdir -p "$out"

# Version: what the binary says it is; a build from a commit that is not tagged with it also carries the number of
# commits and the commit, so that later snapshots sort after earlier ones.
version=$("$binary" --version)
if git -C "$repository" rev-parse --git-dir >/dev/null 2>&1; then
    tag=$(git -C "$repository" describe --tags --exact-match 2>/dev/null || true)
    if [ "$tag" != "$version" ] && [ "$tag" != "v$version" ]; then
        commits=$(git -C "$repository" rev-list --count HEAD)
        version="$version+git$commits.$(git -C "$repository" rev-parse --short=7 HEAD)"
    fi
fi
architecture=$(dpkg --print-architecture)

work=$(mktemp -d /tmp/chute-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/root"

# --- Depends, from the libraries the binaries name ---------------------------------------------------------------

# The package that owns a library file, trying the path as ldd printed it, its target, and its twin across the
# merged /usr (dpkg's database names a file where its package put it, /lib or /usr/lib).
owner_of() {
    local candidate
    for candidate in "$1" "$(readlink -f "$1")" "${1#/usr}" "/usr$1"; do
        if owner=$(dpkg-query -S "$candidate" 2>/dev/null | grep -v '^diversion by' | head -n 1); then
            [ -n "$owner" ] && { echo "${owner%%: *}" | cut -d, -f1; return 0; }
        fi
    done
    return 1
}

# The dependency that a package's shlibs file declares for a soname (libfoo.so.6 is "libfoo 6", libfoo-1.2.so is
# "libfoo 1.2"), else the package's name alone.
dependency_for() {
    local package=$1 soname=$2 name number shlibs line
    if [[ "$soname" =~ ^(.+)\.so\.(.+)$ ]]; then
        name=${BASH_REMATCH[1]} number=${BASH_REMATCH[2]}
    elif [[ "$soname" =~ ^(.+)-([0-9][^-]*)\.so$ ]]; then
        name=${BASH_REMATCH[1]} number=${BASH_REMATCH[2]}
    else
        name="" number=""
    fi
    shlibs=$(dpkg-query --control-path "$package" shlibs 2>/dev/null || true)
    if [ -n "$name" ] && [ -n "$shlibs" ]; then
        # Lines with a type ("udeb: ...") are for other kinds of package.
        line=$(awk -v name="$name" -v number="$number" \
            '$1 == name && $2 == number { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$shlibs")
        [ -n "$line" ] && { echo "$line"; return; }
    fi
    echo "${package%%:*}"
}

dependencies=()
unpackaged=()
for executable in "$binary" "${workers[@]}"; do
    ldd_output=$(ldd "$executable")
    if grep -q 'not found' <<<"$ldd_output"; then
        echo "build-deb.sh: $executable names libraries that are not installed:" >&2
        grep 'not found' <<<"$ldd_output" >&2
        exit 1
    fi
    while read -r soname; do
        path=$(awk -v soname="$soname" '$1 == soname && $2 == "=>" { print $3; exit }
            $1 ~ ("/" soname "$") { print $1; exit }' <<<"$ldd_output")
        if [ -n "$path" ] && package=$(owner_of "$path"); then
            dependencies+=("$(dependency_for "$package" "$soname")")
        else
            unpackaged+=("$soname (${path:-not found by ldd})")
        fi
    done < <(readelf -d "$executable" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
done
if [ "${#unpackaged[@]}" -gt 0 ]; then
    if [ "$allow_unpackaged" = false ]; then
        echo "build-deb.sh: no Debian package provides these libraries of the binaries:" >&2
        printf '  %s\n' "${unpackaged[@]}" | sort -u >&2
        echo "  (a release build with --static-swift-stdlib links the Swift runtime in; see --help)" >&2
        exit 1
    fi
    echo "build-deb.sh: warning: no Debian package provides these libraries; the package runs only where they are:" >&2
    printf '  %s\n' "${unpackaged[@]}" | sort -u >&2
fi
# The maintainer scripts run adduser.
dependencies+=("adduser")
# Ghostscript's ICC profiles (default CMYK, sRGB), which the image worker reads to turn CMYK pictures into sRGB.
dependencies+=("libgs-common")
depends=$(printf '%s\n' "${dependencies[@]}" | sort -u | paste -sd, - | sed 's/, */, /g')

# --- The files --------------------------------------------------------------------------------------------------

install -D -m 0755 "$binary" "$root/usr/bin/chute"
# The daemon starts each engine's worker from ../lib/chute beside its own folder.
install -d "$root/usr/lib/chute"
install -m 0755 "${workers[@]}" "$root/usr/lib/chute/"

# The repository's unit, with the binary and the docs where the package puts them. Each substitution must have
# happened: a unit that still names /usr/local would start nothing.
install -d "$root/lib/systemd/system"
{
    echo "# Installed by the chute package. Change it with 'systemctl edit chute'; the rules are /etc/chute/rules.yaml."
    sed -n '/^\[Unit\]/,$p' deploy/chute.service \
        | sed -e 's|/usr/local/bin/chute|/usr/bin/chute|g' -e 's|/usr/local/share/doc/chute|/usr/share/doc/chute|g'
} >"$root/lib/systemd/system/chute.service"
chmod 0644 "$root/lib/systemd/system/chute.service"
if grep -q '/usr/local' "$root/lib/systemd/system/chute.service" \
    || ! grep -q '^ExecStart=/usr/bin/chute run ' "$root/lib/systemd/system/chute.service"; then
    echo "build-deb.sh: deploy/chute.service no longer has the paths this script moves to /usr" >&2
    exit 1
fi

install -D -m 0644 deploy/rules.yaml "$root/etc/chute/rules.yaml"
"$binary" check "$root/etc/chute/rules.yaml" >/dev/null

install -D -m 0644 README.md "$root/usr/share/doc/chute/README.md"
install -D -m 0644 docs/rules.md "$root/usr/share/doc/chute/rules.md"
install -D -m 0644 docs/guide.md "$root/usr/share/doc/chute/guide.md"

# The man page, from the CLI's help: swift-argument-parser's generate-manual reads `chute --experimental-dump-help`.
# It is built from the argument-parser that SwiftPM resolved for chute, in a build folder of its own (the package's
# .build may be locked by a running `swift build` or `swift test`).
argument_parser="$repository/.build/checkouts/swift-argument-parser"
if [ ! -f "$argument_parser/Tools/generate-manual/GenerateManual.swift" ]; then
    echo "build-deb.sh: $argument_parser has no generate-manual; build chute first (swift build)" >&2
    exit 1
fi
echo "build-deb.sh: building generate-manual" >&2
swift build --package-path "$argument_parser" --scratch-path "$repository/.build/generate-manual" \
    --product generate-manual >&2
generate_manual="$(swift build --package-path "$argument_parser" --scratch-path "$repository/.build/generate-manual" \
    --show-bin-path)/generate-manual"
manual_date=$(git -C "$repository" log -1 --format=%cs 2>/dev/null || date -u +%F)
mkdir -p "$work/man"
"$generate_manual" "$binary" --date "$manual_date" --output-directory "$work/man"
install -d "$root/usr/share/man/man1"
gzip -9n <"$work/man/chute.1" >"$root/usr/share/man/man1/chute.1.gz"
chmod 0644 "$root/usr/share/man/man1/chute.1.gz"

# The copyright file: Chute's, then the licence of every Swift package linked into the binary.
{
    cat <<'COPYRIGHT'
Chute: a daemon that watches drop folders and converts the files that arrive.

Chute's repository states no licence of its own; ask its authors before redistributing this package.

The binary contains the Swift runtime and Foundation (Apache License 2.0 with Runtime Library Exception) and Swift
packages from among the ones below, which SwiftPM resolved for it (some are only needed to build), each followed by
its licence. The C libraries it uses come from Debian's packages named in Depends:, with their own copyright files.
COPYRIGHT
    for checkout in "$repository"/.build/checkouts/*/; do
        name=$(basename "$checkout")
        licence=$(find "$checkout" -maxdepth 1 -type f \
            \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) | sort | head -n 1)
        revision=$(git -C "$checkout" describe --tags --always 2>/dev/null || echo "unknown revision")
        printf '\n==== %s %s ====\n\n' "$name" "$revision"
        if [ -n "$licence" ]; then cat "$licence"; else echo "(no licence file in the package)"; fi
    done
} >"$root/usr/share/doc/chute/copyright"
chmod 0644 "$root/usr/share/doc/chute/copyright"

# --- Control ----------------------------------------------------------------------------------------------------

install -d -m 0755 "$root/DEBIAN"
install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$root/DEBIAN/"
echo "/etc/chute/rules.yaml" >"$root/DEBIAN/conffiles"
cat >"$root/DEBIAN/control" <<CONTROL
Package: chute
Version: $version
Architecture: $architecture
Maintainer: ${DEBFULLNAME:-Chute maintainers} <${DEBEMAIL:-chute@localhost}>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: libheif-plugin-libde265, libheif-plugin-x265, libheif-plugin-aomenc, fonts-dejavu-core,
 libreoffice-core, libreoffice-writer, libreoffice-calc, libreoffice-impress-nogui, fonts-noto-cjk,
 fonts-hosny-amiri, culmus
Section: misc
Priority: optional
Description: drop-folder converter for images, video, audio, documents and PDFs
 Chute is a daemon that watches folders and converts whatever lands there,
 unattended: photos (HEIC, RAW, PNG, ...) through ImageMagick, video and audio
 through FFmpeg's libraries, documents through LibreOffice, PDFs through qpdf.
 Each output is written atomically beside a JSON sidecar saying what was done,
 every job is journaled, and a crash in a library costs one job, never the
 daemon.
 .
 The service runs as the system user chute with /etc/chute/rules.yaml, which
 watches /var/lib/chute/inbox as installed. The Recommends are loaded at run
 time: libheif's plugins read HEIC (libheif 1.16 and later) and write AVIF,
 LibreOffice converts documents, DejaVu draws text watermarks, and Noto CJK,
 Amiri and Culmus draw Chinese, Japanese, Korean, Arabic and Hebrew text.
CONTROL

package="$out/chute_${version}_${architecture}.deb"
dpkg-deb --root-owner-group -Z"$compression" --build "$root" "$package" >&2
echo "$package"
