#!/bin/sh
# Installs iac-code and its man page under ${PREFIX:-$HOME/.local}. Idempotent.
#
#   ./install.sh                  build the static musl binary (or, without musl-gcc,
#                                 one for the host's libc) and install it
#   ./install.sh --binary PATH    install a prebuilt binary (hosts without a toolchain)
#   ./install.sh --glibc          build for the host's libc instead of static musl
#   ./install.sh --uninstall      remove what an install put there
#
# Exit status: 0 done, 1 a step failed, 2 bad arguments.
set -eu

prefix=${PREFIX:-$HOME/.local}
bindir="$prefix/bin"
mandir="$prefix/share/man/man1"
here=$(cd "$(dirname "$0")" && pwd)
target=x86_64-unknown-linux-musl
binary=
mode=install

usage() {
    echo "usage: ./install.sh [--binary PATH | --glibc] | --uninstall" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        --uninstall) mode=uninstall ;;
        --binary)
            [ $# -ge 2 ] || usage
            binary=$2
            shift
            ;;
        --glibc) target= ;;
        -h | --help)
            sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "install.sh: unknown argument '$1'" >&2
            usage
            ;;
    esac
    shift
done

if [ "$mode" = uninstall ]; then
    removed=
    for f in "$bindir/iac-code" "$mandir/iac-code.1"; do
        if [ -e "$f" ]; then
            rm -f "$f"
            removed="$removed $f"
        fi
    done
    if [ -n "$removed" ]; then
        echo "removed$removed"
    else
        echo "nothing to remove under $prefix"
    fi
    exit 0
fi

if [ -z "$binary" ]; then
    if ! command -v cargo >/dev/null 2>&1; then
        echo "install.sh: cargo not found: install the Rust toolchain (https://rustup.rs), or pass --binary PATH" >&2
        exit 1
    fi
    if [ -n "$target" ] && ! command -v x86_64-linux-musl-gcc >/dev/null 2>&1; then
        echo "note: no musl-gcc (Debian: apt-get install musl-tools); building for the host's libc instead of a static binary"
        target=
    fi
    if [ -n "$target" ] && ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
        echo "adding the Rust target $target"
        if ! rustup target add "$target"; then
            echo "note: cannot add $target; building for the host's libc instead"
            target=
        fi
    fi
    if [ -n "$target" ]; then
        (cd "$here" && cargo build --release --locked --target "$target")
        binary="$here/target/$target/release/iac-code"
    else
        (cd "$here" && cargo build --release --locked)
        binary="$here/target/release/iac-code"
    fi
fi
if [ ! -f "$binary" ]; then
    echo "install.sh: no binary at $binary" >&2
    exit 1
fi

mkdir -p "$bindir" "$mandir"
tmp="$bindir/.iac-code.$$"
mantmp="$mandir/.iac-code.1.$$"
trap 'rm -f "$tmp" "$mantmp"' EXIT INT TERM
cp "$binary" "$tmp"
chmod 755 "$tmp"
# Verify before replacing anything: the new binary must run here.
if ! version=$("$tmp" --version 2>/dev/null); then
    rm -f "$tmp"
    echo "install.sh: $binary does not run on this host" >&2
    exit 1
fi
mv -f "$tmp" "$bindir/iac-code"
if [ -f "$here/man/iac-code.1" ]; then
    cp "$here/man/iac-code.1" "$mantmp"
    mv -f "$mantmp" "$mandir/iac-code.1"
    echo "installed $version to $bindir/iac-code and its man page to $mandir/iac-code.1"
else
    echo "installed $version to $bindir/iac-code (no man/iac-code.1 next to install.sh: man page skipped)"
fi
case ":$PATH:" in
    *":$bindir:"*) echo "$bindir is on your PATH" ;;
    *) echo "note: $bindir is not on your PATH; add it, e.g. export PATH=\"$bindir:\$PATH\"" ;;
esac
