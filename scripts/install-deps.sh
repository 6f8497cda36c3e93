#!/usr/bin/env bash
# Installs what Chute builds and runs with on Debian 12, as root: the C libraries' development packages,
# pkg-config, and the command-line tools the tests and benchmarks compare against. Safe to run again.
set -euo pipefail

# First libheif, so that ImageMagick below is installed against it. It comes from bookworm-backports: bookworm's 1.15
# refuses the HEICs of recent iPhones (an iPhone 16 photo with an HDR gain map fails with "Too many auxiliary image
# references"). ImageMagick 6's HEIC coder links libheif.so.1, so upgrading the library upgrades it too. From 1.16 on,
# libheif loads its codecs as plugins: the libde265 one decodes HEIC, the x265 one encodes it. libheif-dev is for our
# own CHeif target, which reads the colour profile and the EXIF item that ImageMagick 6's HEIC coder drops.
heif_packages=(libheif1 libheif-dev libheif-plugin-libde265 libheif-plugin-x265 libheif-examples)
backports_list=/etc/apt/sources.list.d/chute-bookworm-backports.sources
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ "$codename" = bookworm ]; then
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
        echo "chute: adding Debian's bookworm-backports suite to apt's sources ($backports_list)" >&2
        cat >"$backports_list" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
        apt-get update -qq
    fi
    heif_version=$(dpkg-query -W -f='${Version}' libheif1 2>/dev/null || true)
    heif_missing=()
    for package in "${heif_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || heif_missing+=("$package")
    done
    if [ -z "$heif_version" ] || dpkg --compare-versions "$heif_version" lt 1.19 || [ "${#heif_missing[@]}" -gt 0 ]; then
        echo "chute: installing ${heif_packages[*]} from bookworm-backports" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends -t bookworm-backports "${heif_packages[@]}" >/dev/null
    fi
else
    # Other releases: whatever libheif they ship (Debian 13 has 1.19 itself).
    heif_missing=()
    for package in "${heif_packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || heif_missing+=("$package")
    done
    if [ "${#heif_missing[@]}" -gt 0 ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${heif_missing[@]}" >/dev/null
    fi
fi

packages=(
    pkg-config
    libmagickwand-6.q16-dev
    # LibRaw, linked directly, to read camera RAW files (DNG, CR2, CR3, NEF, ARW, RAF, ORF, RW2).
    libraw-dev
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavfilter-dev
    # opencore-amrnb, linked directly: Debian's FFmpeg has no AMR-NB encoder, and Chute writes .amr through it.
    libopencore-amrnb-dev
    libsqlite3-dev
    # The sqlite3 shell, for the journal tests that read a journal or write one as an older Chute did.
    sqlite3
    imagemagick ffmpeg rsync procps time
    # The font of text watermarks (ImageMagick 6's default font, Helvetica through Ghostscript, is not installed).
    fonts-dejavu-core
    # For the HEIC metadata tests: exiftool reads and writes EXIF, and an ICC profile that is not sRGB.
    libimage-exiftool-perl icc-profiles-free
    # Ghostscript's ICC profiles (default_cmyk.icc, srgb.icc): the image engine turns CMYK pictures into sRGB through
    # them (colorspace: srgb), and the colour tests compare against `convert -profile` with the same files.
    libgs-common
    # TurboJPEG, for rotating a JPEG losslessly (DCT blocks) before its EXIF orientation is stripped.
    libturbojpeg0-dev
    # For the Samba end-to-end test, which runs its own smbd (its own config, a free port on 127.0.0.1). Installing
    # samba starts no smbd or nmbd in a container without systemd: invoke-rc.d finds no runlevel (and Debian's
    # container images also deny it in policy-rc.d). On a systemd machine the packaged services start on 139/445,
    # which the test does not use.
    samba smbclient
    # For the test that validates rules files against `chute schema` with a JSON Schema validator.
    python3-jsonschema python3-yaml
    # The status API's end-to-end tests speak to its Unix socket with curl, a client independent of Chute's.
    curl
    # The metrics' end-to-end test reads `/metrics` with Prometheus's own text-format parser (Debian's python3).
    python3-prometheus-client
    # Benchmarks/w1.sh times the script users write by hand, inotifywait piped into convert and ffmpeg.
    inotify-tools

    # The web page's end-to-end tests load it in headless Chromium, driven through the DevTools protocol.
    chromium

    # The document engine: LibreOffice (Writer for DOC/DOCX/ODT/RTF/HTML/TXT, Calc and Impress for spreadsheets and
    # presentations to PDF), loaded into Chute's worker through LibreOfficeKit, whose C header is in
    # libreofficekit-dev. Impress without its GUI; Writer and Calc with it, and so libreoffice-core rather than
    # libreoffice-core-nogui: Debian 12's -nogui packages ship no UI definitions, and LibreOfficeKit builds views
    # from them, a spreadsheet's with the formula bar's (modules/scalc/ui/inputbar.ui) and each comment of a text
    # document in a window of its own (modules/swriter/ui/annotation.ui), so every spreadsheet and every document
    # with a comment failed to load ("loadComponentFromURL returned an empty reference"). libreoffice-writer
    # replaces libreoffice-writer-nogui. Text renders with fonts-dejavu-core (above), which has no Chinese,
    # Japanese or Korean: fonts-noto-cjk draws those (LibreOffice drew boxes), fonts-hosny-amiri Arabic and culmus
    # Hebrew in serif faces (DejaVu Sans has both, DejaVu Serif neither); these are the smallest packages that
    # cover them (fonts-noto-core is 42 MB). poppler-utils (below) gives the tests and the documents benchmark
    # pdftotext, pdfinfo and pdffonts.
    libreoffice-core libreoffice-writer libreoffice-calc libreoffice-impress-nogui
    libreofficekit-dev
    fonts-noto-cjk fonts-hosny-amiri culmus
    # fontconfig's C library, with which the document engine finds the characters no installed font covers.
    libfontconfig-dev
    # qpdf's C library, for the PDF engine; the qpdf and poppler command-line tools, with which the PDF tests make
    # encrypted PDFs and read the outputs back (pdfinfo, pdftotext, pdftoppm), and Benchmarks/pdf.sh compares.
    libqpdf-dev qpdf poppler-utils
    # poppler's GLib interface (with cairo), which renders a PDF's pages as images for the PDF engine.
    libpoppler-glib-dev
    # libcurl's development link, for FoundationNetworking's URLSession, which sends notifications to https:// URLs:
    # the release build links the Swift runtime in, and FoundationNetworking then needs -lcurl (libcurl4 at run time).
    libcurl4-openssl-dev
    # PostgreSQL, for the tests of the job store in a database (settings.store: postgres://…): each starts a server
    # of its own (initdb in a temporary folder, a free port on 127.0.0.1, as nobody). In a container without systemd
    # the package's own cluster is created but not started; on a systemd machine it starts on 5432, which no test uses.
    postgresql
    # iproute2's ip, with which the hand-off test puts an agent in a network namespace of its own (ip netns, a veth
    # pair); unshare and mount, which hide the share from it, are util-linux's, always there.
    iproute2
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

# Writing AVIF needs libheif's AV1 encoder. Debian 12's libheif 1.15 has it built in; libheif 1.16 and later (1.19
# from bookworm-backports) ship it as a plugin package, without which ImageMagick cannot write AVIF at all.
heif_version=$(dpkg-query -W -f='${Version}' libheif1 2>/dev/null || true)
if [ -n "$heif_version" ] && dpkg --compare-versions "$heif_version" ge 1.16 \
    && ! dpkg-query -W -f='${Status}' libheif-plugin-aomenc 2>/dev/null | grep -q 'install ok installed'; then
    echo "chute: installing libheif-plugin-aomenc (AVIF encoder for libheif $heif_version)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends libheif-plugin-aomenc >/dev/null
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
