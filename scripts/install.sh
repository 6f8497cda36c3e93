#!/usr/bin/env bash
# Installs Chute on Debian 12, as root: dependencies, a release build, /usr/local/bin/chute, and the demo folders of
# rules.example.yaml. Then `chute run --config rules.example.yaml` starts the daemon on the example.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
[ -x "$(command -v swift)" ] || export PATH="$PATH:/opt/swift/usr/bin"

echo "chute: building (release)" >&2
# The Swift runtime is linked in statically, so the installed binary does not depend on the toolchain's folder.
swift build -c release --static-swift-stdlib --product chute
install -m 0755 "$(swift build -c release --static-swift-stdlib --show-bin-path)/chute" /usr/local/bin/chute
# The documentation that deploy/chute.service's Documentation= names.
install -D -m 0644 README.md /usr/local/share/doc/chute/README.md
install -D -m 0644 docs/rules.md /usr/local/share/doc/chute/rules.md
install -D -m 0644 docs/guide.md /usr/local/share/doc/chute/guide.md
mkdir -p demo/inbox demo/outbox
chute check rules.example.yaml
echo "chute: installed /usr/local/bin/chute; drop files into $(pwd)/demo/inbox" >&2
