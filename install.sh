#!/bin/sh
# Builds iac-code in release mode and installs it, with its man page, under
# ${PREFIX:-$HOME/.local}. Idempotent. Usage: ./install.sh [--uninstall]
set -eu

prefix=${PREFIX:-$HOME/.local}
bindir="$prefix/bin"
mandir="$prefix/share/man/man1"
here=$(cd "$(dirname "$0")" && pwd)

if [ "${1:-}" = "--uninstall" ]; then
    rm -f "$bindir/iac-code" "$mandir/iac-code.1"
    echo "removed $bindir/iac-code and $mandir/iac-code.1"
    exit 0
fi
if [ $# -gt 0 ]; then
    echo "install.sh: unknown argument '$1' (usage: ./install.sh [--uninstall])" >&2
    exit 2
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo not found; install the Rust toolchain (https://rustup.rs) first" >&2
    exit 1
fi

(cd "$here" && cargo build --release --locked)
mkdir -p "$bindir" "$mandir"
tmp="$bindir/.iac-code.$$"
cp "$here/target/release/iac-code" "$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$bindir/iac-code"
cp "$here/man/iac-code.1" "$mandir/iac-code.1"
version=$("$bindir/iac-code" --version)
echo "installed $version to $bindir/iac-code and the man page to $mandir"
case ":$PATH:" in
    *":$bindir:"*) ;;
    *) echo "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac
