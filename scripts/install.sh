#!/usr/bin/env bash
# Installs Chute on Debian 12, as root: dependencies, a release build, /usr/local/bin/chute with its engines' worker
# executables in /usr/local/lib/chute, and the demo folders of rules.example.yaml. Then `chute run --config rules.example.yaml` starts the daemon on the example.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
[ -x "$(command -v swift)" ] || export PATH="$PATH:/opt/swift/usr/bin"

echo "chute: building (release)" >&2
# The Swift runtime is linked in statically, so the installed binaries do not depend on the toolchain's folder.
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
for product in chute chute-image-worker chute-media-worker chute-pdf-worker chute-document-worker; do
    swift build -c release --static-swift-stdlib --product "$product"
done
install -m 0755 "$bin/chute" /usr/local/bin/chute
# The daemon starts each engine's worker from ../lib/chute beside its own folder.
install -d /usr/local/lib/chute
install -m 0755 "$bin"/chute-{image,media,pdf,document}-worker /usr/local/lib/chute/
# The documentation that deploy/chute.service's Documentation= names.
install -D -m 0644 README.md /usr/local/share/doc/chute/README.md
install -D -m 0644 docs/rules.md /usr/local/share/doc/chute/rules.md
install -D -m 0644 docs/guide.md /usr/local/share/doc/chute/guide.md
mkdir -p demo/inbox demo/outbox
chute check rules.example.yaml
echo "chute: installed /usr/local/bin/chute; drop files into $(pwd)/demo/inbox" >&2
