#!/bin/sh
# Installs iac-code and its man page under ${PREFIX:-$HOME/.local}. Idempotent.
#
#   ./install.sh                  build the static musl binary (or, without musl-gcc,
#                                 one for the host's libc) and install it
#   ./install.sh --binary PATH    install a prebuilt binary (hosts without a toolchain)
#   ./install.sh --static         build the static musl binary or fail: adds the Rust
#                                 target, installs Debian's musl-tools with apt when
#                                 missing (as root or through sudo), never falls back
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
strict=
glibc=

usage() {
    echo "usage: ./install.sh [--binary PATH | --static | --glibc] | --uninstall" >&2
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
        --glibc)
            glibc=1
            target=
            ;;
        --static) strict=1 ;;
        -h | --help)
            sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "install.sh: unknown argument '$1'" >&2
            usage
            ;;
    esac
    shift
done
if [ -n "$strict" ] && { [ -n "$glibc" ] || [ -n "$binary" ]; }; then
    echo "install.sh: --static builds the binary itself; it cannot go with --glibc or --binary" >&2
    usage
fi

# Says what to install for a musl C toolchain, on the hosts we know.
musl_hint() {
    echo "  install a musl C toolchain providing x86_64-linux-musl-gcc:" >&2
    echo "    Debian/Ubuntu: apt-get install musl-tools" >&2
    echo "    Fedora: dnf install musl-gcc    Alpine: apk add musl-dev gcc" >&2
}

# --static: installs musl-tools with apt when this user may (root, sudo without a password,
# or sudo that can ask on this terminal); otherwise says exactly what to install and fails.
ensure_musl_gcc() {
    command -v x86_64-linux-musl-gcc >/dev/null 2>&1 && return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install.sh: --static needs x86_64-linux-musl-gcc, and this host has no apt-get" >&2
        musl_hint
        exit 1
    fi
    if [ "$(id -u)" = 0 ]; then
        sudo=
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=sudo
    elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
        echo "sudo may ask for your password to install musl-tools"
        sudo=sudo
    else
        echo "install.sh: --static needs x86_64-linux-musl-gcc; apt-get needs root, and sudo needs a password but there is no terminal to ask on" >&2
        echo "  run: sudo apt-get install musl-tools    then ./install.sh --static again" >&2
        exit 1
    fi
    echo "installing Debian's musl-tools with apt-get"
    $sudo apt-get install -y -qq musl-tools >/dev/null 2>&1 ||
        { $sudo apt-get update -qq && $sudo apt-get install -y -qq musl-tools >/dev/null; } || {
        echo "install.sh: apt-get could not install musl-tools" >&2
        exit 1
    }
    if ! command -v x86_64-linux-musl-gcc >/dev/null 2>&1; then
        echo "install.sh: musl-tools is installed but x86_64-linux-musl-gcc is not on PATH" >&2
        exit 1
    fi
}

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
    [ -z "$strict" ] || ensure_musl_gcc
    if [ -n "$target" ] && ! command -v x86_64-linux-musl-gcc >/dev/null 2>&1; then
        echo "note: no musl-gcc (Debian: apt-get install musl-tools); building for the host's libc instead of a static binary"
        target=
    fi
    if [ -n "$target" ] && ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
        echo "adding the Rust target $target"
        if ! rustup target add "$target"; then
            if [ -n "$strict" ]; then
                echo "install.sh: --static: cannot add the Rust target (rustup target add $target failed)" >&2
                exit 1
            fi
            echo "note: cannot add $target; building for the host's libc instead"
            target=
        fi
    fi
    if [ -n "$target" ]; then
        (cd "$here" && cargo build --release --locked --target "$target")
        binary="$here/target/$target/release/iac-code"
        if [ -n "$strict" ] && command -v ldd >/dev/null 2>&1; then
            linkage=$(ldd "$binary" 2>&1 || true)
            if ! printf '%s\n' "$linkage" | grep -q -e "statically linked" -e "not a dynamic executable"; then
                echo "install.sh: --static: $binary is not statically linked" >&2
                exit 1
            fi
        fi
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
